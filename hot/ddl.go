package hot

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/pglock"
	"github.com/meterstore/meterstore/internal/sqltext"
	"github.com/meterstore/meterstore/metering"
)

// Store is the hot tier of one table. It is safe for concurrent use; its only
// state is caches of the table's partitions and primary key.
type Store struct {
	pool *pgxpool.Pool
	cfg  meterstore.TableConfig
	// partitionName matches the name of one of the table's partitions,
	// <table>_YYYY_MM_DD_HHMM, its start the submatch (namePattern).
	partitionName *regexp.Regexp

	mu    sync.Mutex
	known map[int64]bool // partition starts (Unix µs) confirmed attached
	pk    []string       // the parent's actual primary key, read once
	parts partitionList  // the attached partitions as Write's checks across partitions last listed them
	cold  ColdRows       // the cold tier's rows for Write's checks across tiers (CheckAgainstCold)
}

// New returns the hot tier of cfg on pool. It does not touch the database.
func New(pool *pgxpool.Pool, cfg meterstore.TableConfig) *Store {
	return &Store{pool: pool, cfg: cfg, partitionName: namePattern(cfg), known: map[int64]bool{}}
}

// Config is the table configuration the store was built with.
func (s *Store) Config() meterstore.TableConfig { return s.cfg }

// Pool is the connection pool the store uses.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Constraint-name suffixes; the exclusion constraints are prefixed with the
// partition name, which stays within 63 bytes because table names are ≤ 34.
const (
	suffixNoOverlap   = "_no_overlap"
	suffixOneOperator = "_one_operator"
	suffixStraddle    = "_straddle"
)

// CHECK constraint names on the parent (inherited by every partition).
const (
	CheckSparte       = "sparte_code"
	CheckUnit         = "unit_code"
	CheckUnitPair     = "unit_of_sparte" // after unit_code in name order, which PostgreSQL checks in: an unknown unit is named as such
	CheckQuality      = "quality_code"
	CheckResolution   = "resolution_code"
	CheckObis         = "obis_code_canonical"
	CheckVersionScope = "version_scope_shape"
	CheckMalo         = "malo_id_shape"
	CheckMelo         = "melo_id_shape"
	CheckTo           = "to_time_model"
	CheckVersion      = "version_positive"
)

// ExtraCheckName is the CHECK constraint of a coded or checked extra column.
func ExtraCheckName(column string) string {
	n := column + "_allowed"
	if len(n) > 63 {
		n = n[:54] + "_" + strconv.FormatUint(uint64(pglock.Key(column))&0xffffffff, 16)
	}
	return n
}

// ObisPattern is the canonical OBIS spelling: A-B:C.D.E[*F], each group 0–255
// without leading zeros, F present only when it is not 255.
const ObisPattern = `^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])-(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9]):(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\*(25[0-4]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9]))?$`

// VersionScopePattern is the stored version_scope: <13-digit operator>:<YYYY-MM>.
const VersionScopePattern = `^[0-9]{13}:[0-9]{4}-(0[1-9]|1[0-2])$`

func inList(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = sqltext.String(v)
	}
	return strings.Join(q, ", ")
}

// canonicalResolutions renders every grid metering accepts in its canonical
// spelling, by asking metering (never a hand-typed list).
func canonicalResolutions() []string {
	var out []string
	add := func(s string) {
		if r, err := metering.ParseResolutionLenient(s); err == nil && !slices.Contains(out, r.String()) {
			out = append(out, r.String())
		}
	}
	for m := 1; m <= 60; m++ {
		add("PT" + strconv.Itoa(m) + "M")
	}
	for _, s := range []string{"PT1H", "P1D", "P1M", "P1Y"} {
		add(s)
	}
	return out
}

func codeStrings[T interface{ String() string }](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

// unitPairCheck is the CHECK expression of the (sparte, unit) pairs metering
// allows: the unit list alone admits electricity in m³.
func unitPairCheck() string {
	pairs := meterstore.UnitPairs()
	q := make([]string, len(pairs))
	for i, p := range pairs {
		q[i] = fmt.Sprintf("(%s, %s)", sqltext.String(p.Sparte), sqltext.String(p.Unit))
	}
	return fmt.Sprintf("(sparte, unit) IN (%s)", strings.Join(q, ", "))
}

// extraCheck is the CHECK expression of a coded or checked extra column.
func extraCheck(col meterstore.Column) (string, bool) {
	switch {
	case len(col.Values) > 0:
		return fmt.Sprintf(`%s IN (%s)`, meterstore.QuoteIdent(col.Name), inList(col.Values)), true
	case col.Check.Kind != meterstore.CheckNone:
		return fmt.Sprintf(`%s ~ %s`, meterstore.QuoteIdent(col.Name), sqltext.String(col.Check.Pattern())), true
	}
	return "", false
}

// CreateTableSQL is the parent table's DDL (without partitions).
func (s *Store) CreateTableSQL() string {
	c := s.cfg
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (\n", meterstore.QuoteIdent(c.Name()))
	for _, col := range c.Columns() {
		fmt.Fprintf(&b, "\t%s %s", meterstore.QuoteIdent(col.Name), col.Type.PostgresType())
		if !col.Nullable {
			b.WriteString(" NOT NULL")
		}
		b.WriteString(",\n")
	}
	check := func(name, expr string) {
		fmt.Fprintf(&b, "\tCONSTRAINT %s CHECK (%s),\n", meterstore.QuoteIdent(name), expr)
	}
	check(CheckMalo, fmt.Sprintf(`malo_id ~ %s`, sqltext.String(meterstore.ValueCheck{Kind: meterstore.CheckMalo}.Pattern())))
	check(CheckMelo, fmt.Sprintf(`melo_id ~ %s`, sqltext.String(meterstore.ValueCheck{Kind: meterstore.CheckMelo}.Pattern())))
	check(CheckObis, fmt.Sprintf(`obis_code ~ %s`, sqltext.String(ObisPattern)))
	check(CheckSparte, fmt.Sprintf(`sparte IN (%s)`, inList(codeStrings(metering.Sparten()))))
	check(CheckUnit, fmt.Sprintf(`unit IN (%s)`, inList(codeStrings(metering.Units()))))
	check(CheckUnitPair, unitPairCheck())
	check(CheckQuality, fmt.Sprintf(`quality IN (%s)`, inList(codeStrings(metering.Qualities()))))
	check(CheckResolution, fmt.Sprintf(`resolution IN (%s)`, inList(canonicalResolutions())))
	check(CheckVersionScope, fmt.Sprintf(`version_scope ~ %s`, sqltext.String(VersionScopePattern)))
	check(CheckVersion, `version > 0`)
	if c.TimeModel() == meterstore.Point {
		check(CheckTo, `"to" IS NULL`)
	} else {
		check(CheckTo, `"to" > "from"`)
	}
	for _, col := range c.ExtraColumns() {
		if expr, ok := extraCheck(col); ok {
			check(ExtraCheckName(col.Name), expr)
		}
	}
	fmt.Fprintf(&b, "\tCONSTRAINT %s PRIMARY KEY (%s)\n", meterstore.QuoteIdent(c.Name()+"_pkey"), meterstore.QuoteIdents(c.PrimaryKey()))
	b.WriteString(`) PARTITION BY RANGE ("from")`)
	return b.String()
}

// CreateTables is the single entry point for the hot schema. It is idempotent:
// btree_gist is created on demand (when integrity constraints are on), the parent
// table with its primary key and CHECK constraints is created if missing, and
// partitions are ensured for [now - partition_step, now + partition_headroom).
//
// An existing table is not altered; if its primary key disagrees with the
// configuration the call fails with ErrSchemaMismatch. Adding values/check to a
// column of an existing table does not add the CHECK: use ALTER TABLE.
func (s *Store) CreateTables(ctx context.Context, now time.Time) error {
	name := s.cfg.Name()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("create tables %s: %w", name, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", pglock.Key("ddl")); err != nil {
		return fmt.Errorf("create tables %s: lock: %w", name, err)
	}
	if s.cfg.IntegrityConstraints() {
		if err := ensureBtreeGist(ctx, tx); err != nil {
			return fmt.Errorf("create tables %s: %w", name, err)
		}
	}
	if _, err := tx.Exec(ctx, s.CreateTableSQL()); err != nil {
		return fmt.Errorf("create table %s: %w", name, err)
	}
	if err := s.ensureUnitPairCheck(ctx, tx); err != nil {
		return fmt.Errorf("create tables %s: %w", name, err)
	}
	if _, err := tx.Exec(ctx, s.appendOnlySQL()); err != nil {
		return fmt.Errorf("create tables %s: append-only trigger: %w", name, err)
	}
	pk, err := primaryKeyOf(ctx, tx, name)
	if err != nil {
		return fmt.Errorf("create tables %s: %w", name, err)
	}
	if !slices.Equal(pk, s.cfg.PrimaryKey()) {
		return fmt.Errorf("%w: table %s has primary key (%s), the configuration derives (%s); identity columns and identify_by_melo must agree with the stored table (recreate it or fix the configuration)",
			ErrSchemaMismatch, name, strings.Join(pk, ", "), strings.Join(s.cfg.PrimaryKey(), ", "))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("create tables %s: commit: %w", name, err)
	}
	s.mu.Lock()
	s.pk = pk
	s.mu.Unlock()
	step := s.cfg.PartitionStep()
	return s.ensurePartitions(ctx, now.Add(-step), now.Add(s.cfg.PartitionHeadroom()), true)
}

// ensureUnitPairCheck adds the unit_of_sparte CHECK to a table an earlier build
// created without it. It is added NOT VALID: every row written from now on is
// checked, the rows already there are not scanned under the table's lock at
// start-up (ALTER TABLE … VALIDATE CONSTRAINT unit_of_sparte checks them, and
// msql verify reports such rows wherever they are stored).
func (s *Store) ensureUnitPairCheck(ctx context.Context, tx pgx.Tx) error {
	var exists bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = $1::regclass AND conname = $2)`,
		meterstore.QuoteIdent(s.cfg.Name()), CheckUnitPair).Scan(&exists)
	if err != nil || exists {
		return err
	}
	_, err = tx.Exec(ctx, fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s CHECK (%s) NOT VALID",
		meterstore.QuoteIdent(s.cfg.Name()), meterstore.QuoteIdent(CheckUnitPair), unitPairCheck()))
	if err != nil {
		return fmt.Errorf("add the %s check: %w", CheckUnitPair, err)
	}
	return nil
}

// appendOnlySQL refuses UPDATE on every partition. A correction is a new
// version, never an edit; and the engine's storage-order scan pages by block
// ranges, where an updated row could move from behind the cursor to ahead of it
// and be counted twice.
func (s *Store) appendOnlySQL() string {
	name := s.cfg.Name()
	return fmt.Sprintf(`CREATE OR REPLACE FUNCTION meterstore_append_only() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	RAISE EXCEPTION 'MeterStore table %% is append-only: UPDATE is refused', TG_TABLE_NAME
		USING HINT = 'append the corrected value as a new version (store.Append) instead of editing a stored row';
END $f$;
CREATE OR REPLACE TRIGGER %s BEFORE UPDATE ON %s FOR EACH ROW EXECUTE FUNCTION meterstore_append_only()`,
		meterstore.QuoteIdent(name+"_append_only"), meterstore.QuoteIdent(name))
}

func ensureBtreeGist(ctx context.Context, tx pgx.Tx) error {
	var installed, available bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gist'),
		EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'btree_gist')`).Scan(&installed, &available)
	if err != nil {
		return err
	}
	if installed {
		return nil
	}
	hint := "install PostgreSQL's contrib package (or ask the provider to allow btree_gist), or set integrity_constraints = false (TableSpec.DisableIntegrityConstraints) as an informed opt-out: overlaps and second operators are then detected, not refused"
	if !available {
		return fmt.Errorf("%w: the server does not offer it; %s", ErrExtensionUnavailable, hint)
	}
	if _, err := tx.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS btree_gist"); err != nil {
		return fmt.Errorf("%w: CREATE EXTENSION btree_gist: %w; %s", ErrExtensionUnavailable, err, hint)
	}
	return nil
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// primaryKeyOf reads a table's actual primary-key columns in key order.
func primaryKeyOf(ctx context.Context, q querier, table string) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT a.attname
		FROM pg_constraint con
		CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
		JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
		WHERE con.conrelid = $1::regclass AND con.contype = 'p'
		ORDER BY k.ord`, meterstore.QuoteIdent(table))
	if err != nil {
		return nil, fmt.Errorf("read primary key of %s: %w", table, err)
	}
	pk, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read primary key of %s: %w", table, err)
	}
	if len(pk) == 0 {
		return nil, fmt.Errorf("read primary key of %s: %w", table, errors.New("table has no primary key"))
	}
	return pk, nil
}

// primaryKey returns the parent's actual primary key, read once.
func (s *Store) primaryKey(ctx context.Context, q querier) ([]string, error) {
	s.mu.Lock()
	pk := s.pk
	s.mu.Unlock()
	if pk != nil {
		return pk, nil
	}
	pk, err := primaryKeyOf(ctx, q, s.cfg.Name())
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.pk = pk
	s.mu.Unlock()
	return pk, nil
}
