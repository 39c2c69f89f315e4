package hot

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/pglock"
	"github.com/meterstore/meterstore/internal/sqltext"
)

// Partition is one range partition of the table: rows with From <= "from" < To.
type Partition struct {
	Name     string
	From, To time.Time
	Attached bool
}

const partitionLayout = "2006_01_02_1504"

// PartitionName is the partition holding rows from start: <table>_YYYY_MM_DD_HHMM (UTC).
func (s *Store) PartitionName(start time.Time) string {
	return s.cfg.Name() + "_" + start.UTC().Format(partitionLayout)
}

// PartitionStart aligns t down to its partition's UTC start (steps tile the UTC
// day from the Unix epoch).
func (s *Store) PartitionStart(t time.Time) time.Time {
	step := s.cfg.PartitionStep().Microseconds()
	us := t.UnixMicro()
	q := us / step
	if us%step != 0 && us < 0 {
		q--
	}
	return time.UnixMicro(q * step).UTC()
}

// namePattern matches the names of cfg's partitions, compiled once per
// Store: every statement reading the hot tier matches the detached names.
func namePattern(cfg meterstore.TableConfig) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.QuoteMeta(cfg.Name()) + `_([0-9]{4}_[0-9]{2}_[0-9]{2}_[0-9]{4})$`)
}

// parsePartitionName returns the start encoded in a partition name.
func (s *Store) parsePartitionName(name string) (time.Time, bool) {
	m := s.partitionName.FindStringSubmatch(name)
	if m == nil {
		return time.Time{}, false
	}
	t, err := time.Parse(partitionLayout, m[1])
	return t.UTC(), err == nil
}

func pgTimestamp(t time.Time) string {
	return sqltext.String(t.UTC().Format("2006-01-02 15:04:05.999999") + "+00")
}

// EnsurePartitions creates the missing partitions covering [from, to). It is
// idempotent and safe to call concurrently from many processes: creation is
// serialised by a transaction-scoped advisory lock and re-checked under it. An
// existing partition costs one catalogue lookup (and nothing once cached).
//
// A range whose partition exists as a detached table (being archived) is refused
// with ErrPartitionDetached, one below the archived range's end (ClaimBelow)
// with ErrArchivedRange: rows there belong to the cold tier.
func (s *Store) EnsurePartitions(ctx context.Context, from, to time.Time) error {
	return s.ensurePartitions(ctx, from, to, false)
}

// ensurePartitions creates the missing partitions of [from, to). Pre-creation
// (skipDetached) leaves a detached or archived window alone instead of
// refusing: it writes nothing there, and an archival run that was interrupted
// must not stop the store from opening — the next run recovers the window.
func (s *Store) ensurePartitions(ctx context.Context, from, to time.Time, skipDetached bool) error {
	if !to.After(from) {
		return nil
	}
	step := s.cfg.PartitionStep()
	var want []time.Time
	s.mu.Lock()
	for t := s.PartitionStart(from); t.Before(to); t = t.Add(step) {
		if !s.known[t.UnixMicro()] {
			want = append(want, t)
		}
	}
	s.mu.Unlock()
	if len(want) == 0 {
		return nil
	}
	missing, err := s.uncovered(ctx, s.pool, want)
	if err != nil {
		return err
	}
	if len(missing) == 0 {
		return nil
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("create partitions of %s: %w", s.cfg.Name(), err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", pglock.Key("partition:"+s.cfg.Name())); err != nil {
		return fmt.Errorf("create partitions of %s: lock: %w", s.cfg.Name(), err)
	}
	missing, err = s.uncovered(ctx, tx, missing)
	if err != nil {
		return err
	}
	if len(missing) == 0 {
		return nil
	}
	detached, err := s.detachedNames(ctx, tx)
	if err != nil {
		return err
	}
	archived, err := s.archivedEnd(ctx, tx)
	if err != nil {
		return err
	}
	var pk []string
	if s.cfg.IntegrityConstraints() {
		if pk, err = s.primaryKey(ctx, tx); err != nil {
			return err
		}
	}
	var created []time.Time
	for _, start := range missing {
		name := s.PartitionName(start)
		if (detached[name] || start.Before(archived)) && skipDetached {
			continue
		}
		if start.Before(archived) {
			return fmt.Errorf("%w: [%s, %s) lies below %s, up to which an archival committed or is committing the table %s; rows there belong to the cold tier, route them through the engine's append",
				ErrArchivedRange, start.Format(time.RFC3339), start.Add(step).Format(time.RFC3339), archived.Format(time.RFC3339), s.cfg.Name())
		}
		created = append(created, start)
		if detached[name] {
			return fmt.Errorf("%w: %s holds [%s, %s) and is detached for archival; rows there belong to the cold tier, route them through the engine's append",
				ErrPartitionDetached, name, start.Format(time.RFC3339), start.Add(step).Format(time.RFC3339))
		}
		for _, stmt := range s.partitionDDL(name, start, start.Add(step), pk) {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("create partition %s: %w", name, err)
			}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("create partitions of %s: commit: %w", s.cfg.Name(), err)
	}
	s.mu.Lock()
	for _, t := range created {
		s.known[t.UnixMicro()] = true
	}
	s.mu.Unlock()
	return nil
}

// partitionDDL creates one partition and its exclusion constraints. pk is the
// parent's actual primary key (nil when integrity constraints are off).
//
// The reading's identity columns (the primary key minus "from" and "version":
// malo_id, obis_code, and melo_id and identity columns where the key has them)
// enter each constraint as one 64-bit hash, readingHash, compared WITH =:
// btree_gist on one bigint costs a fraction of several text columns. Equal identities always hash equal, so no overlap or second
// operator the text form refuses can pass; two different readings whose hashes
// collide (2^-64 per pair) could only make a write be refused that should have
// been accepted — a loud error, never a wrong number.
//
//   - <partition>_no_overlap (interval tables): (readingHash(identity, version)
//     WITH =, tstzrange("from", "to") WITH &&): no two intervals of one reading at
//     one version overlap.
//   - <partition>_one_operator: (readingHash(identity) WITH =, "from" WITH =,
//     operator WITH <>), the operator being the 13 digits before ':' of
//     version_scope as a bigint (the version_scope CHECK guarantees the shape).
//   - <partition>_straddle (interval tables): a partial index over the rows whose
//     "to" reaches past the partition's end. An exclusion constraint sees one
//     partition only, so Write checks such rows against the neighbours
//     (checkAcrossPartitions); the index keeps that check to the few straddlers.
func (s *Store) partitionDDL(name string, from, to time.Time, pk []string) []string {
	q := meterstore.QuoteIdent
	stmts := []string{fmt.Sprintf("CREATE TABLE %s PARTITION OF %s FOR VALUES FROM (%s) TO (%s)",
		q(name), q(s.cfg.Name()), pgTimestamp(from), pgTimestamp(to))}
	if pk == nil {
		return stmts
	}
	ident := identityOf(pk)
	if s.cfg.TimeModel() == meterstore.Interval {
		stmts = append(stmts,
			fmt.Sprintf(`ALTER TABLE %s ADD CONSTRAINT %s EXCLUDE USING gist ((%s) WITH =, tstzrange("from", "to") WITH &&)`,
				q(name), q(name+suffixNoOverlap), readingHash(ident, "version::text")),
			fmt.Sprintf(`CREATE INDEX %s ON %s (%s, version) WHERE "to" > %s`,
				q(name+suffixStraddle), q(name), meterstore.QuoteIdents(ident), pgTimestamp(to)))
	}
	stmts = append(stmts, fmt.Sprintf(`ALTER TABLE %s ADD CONSTRAINT %s EXCLUDE USING gist ((%s) WITH =, "from" WITH =, (split_part(version_scope, ':', 1)::bigint) WITH <>)`,
		q(name), q(name+suffixOneOperator), readingHash(ident)))
	return stmts
}

// identityOf is a primary key without "from" and "version": the columns that
// name a reading.
func identityOf(pk []string) []string {
	var out []string
	for _, c := range pk {
		if c != "from" && c != "version" {
			out = append(out, c)
		}
	}
	return out
}

// readingHash renders the 64-bit hash of the identity columns (NOT NULL: they
// are primary-key columns) and any further text expressions, separated by
// chr(31). hashtextextended is immutable and stable across PostgreSQL versions
// (hash partitioning relies on it).
func readingHash(ident []string, more ...string) string {
	parts := make([]string, 0, len(ident)+len(more))
	for _, c := range ident {
		parts = append(parts, meterstore.QuoteIdent(c))
	}
	parts = append(parts, more...)
	return "hashtextextended(" + strings.Join(parts, " || chr(31) || ") + ", 0)"
}

// uncovered returns the starts in want that no attached partition fully covers,
// and caches the covered ones.
func (s *Store) uncovered(ctx context.Context, q querier, want []time.Time) ([]time.Time, error) {
	parts, err := s.partitions(ctx, q)
	if err != nil {
		return nil, err
	}
	step := s.cfg.PartitionStep()
	var missing []time.Time
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range want {
		covered := false
		for _, p := range parts {
			if !p.From.After(t) && !p.To.Before(t.Add(step)) {
				covered = true
				break
			}
		}
		if covered {
			s.known[t.UnixMicro()] = true
		} else {
			missing = append(missing, t)
		}
	}
	return missing, nil
}

// Partitions lists the attached partitions with their bounds, ordered by From.
// A DEFAULT or unbounded partition (not created by this package) is left out.
func (s *Store) Partitions(ctx context.Context) ([]Partition, error) {
	return s.partitions(ctx, s.pool)
}

func (s *Store) partitions(ctx context.Context, q querier) ([]Partition, error) {
	rows, err := q.Query(ctx, `SELECT c.relname, b.m[1]::timestamptz, b.m[2]::timestamptz
		FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid
		CROSS JOIN LATERAL (SELECT regexp_match(pg_get_expr(c.relpartbound, c.oid), $2) AS m) b
		WHERE i.inhparent = to_regclass($1) AND b.m IS NOT NULL
		ORDER BY 2`, meterstore.QuoteIdent(s.cfg.Name()), `FROM \('([^']*)'\) TO \('([^']*)'\)`)
	if err != nil {
		return nil, fmt.Errorf("list partitions of %s: %w", s.cfg.Name(), err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Partition, error) {
		var p Partition
		err := r.Scan(&p.Name, &p.From, &p.To)
		p.From, p.To, p.Attached = p.From.UTC(), p.To.UTC(), true
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("list partitions of %s: %w", s.cfg.Name(), err)
	}
	return out, nil
}

// DetachedPartitions lists tables named <table>_YYYY_MM_DD_HHMM in the current
// schema that are not attached: detached for archival and not yet dropped.
// Bounds are read from the name and the partition step.
func (s *Store) DetachedPartitions(ctx context.Context) ([]Partition, error) {
	names, err := s.detachedNames(ctx, s.pool)
	if err != nil {
		return nil, err
	}
	var out []Partition
	for n := range names {
		if t, ok := s.parsePartitionName(n); ok {
			out = append(out, Partition{Name: n, From: t, To: t.Add(s.cfg.PartitionStep())})
		}
	}
	sortPartitions(out)
	return out, nil
}

func sortPartitions(ps []Partition) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].From.Before(ps[j-1].From); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// detachedNamesSQL lists the tables whose names start with "<table>_" and
// are not attached as partitions; its arguments are detachedNamesArgs, and
// collectDetachedNames keeps the partitions' names among them. The range on
// relname lets PostgreSQL read those few names from pg_class's index on
// (relname, relnamespace), where a regular expression in the query was tested
// on every relation of the schema — 0.65 ms at 800 relations, at every
// statement reading the hot tier and every write checked against the cold
// tier — and on about 200 (each partition's indexes) even behind the range.
const detachedNamesSQL = `SELECT c.relname FROM pg_class c
		WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND c.relkind = 'r' AND NOT c.relispartition
		AND c.relname >= $1::name AND c.relname < $2::name`

// detachedNamesArgs are detachedNamesSQL's arguments: the range of names
// starting with "<table>_" ("`" follows "_" in the bytewise order of name's
// collation, C).
func (s *Store) detachedNamesArgs() []any {
	return []any{s.cfg.Name() + "_", s.cfg.Name() + "`"}
}

func (s *Store) detachedNames(ctx context.Context, q querier) (map[string]bool, error) {
	rows, err := q.Query(ctx, detachedNamesSQL, s.detachedNamesArgs()...)
	if err != nil {
		return nil, fmt.Errorf("list detached partitions of %s: %w", s.cfg.Name(), err)
	}
	return s.collectDetachedNames(rows)
}

// collectDetachedNames reads the result of detachedNamesSQL as a set of the
// names that are a partition's (<table>_YYYY_MM_DD_HHMM): never nil, so a
// caller can tell "listed, none" from "not listed".
func (s *Store) collectDetachedNames(rows pgx.Rows) (map[string]bool, error) {
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list detached partitions of %s: %w", s.cfg.Name(), err)
	}
	out := make(map[string]bool, len(names))
	for _, n := range names {
		if s.partitionName.MatchString(n) {
			out[n] = true
		}
	}
	return out, nil
}

func (s *Store) forget(p Partition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := p.From; t.Before(p.To); t = t.Add(s.cfg.PartitionStep()) {
		delete(s.known, t.UnixMicro())
	}
	if p.From.IsZero() { // unknown bounds: drop the whole cache
		s.known = map[int64]bool{}
	}
}

// forgetAll drops the cache of partitions known to exist.
func (s *Store) forgetAll() { s.forget(Partition{}) }

// Detach detaches an attached partition (ALTER TABLE … DETACH PARTITION). From then
// on an insert into its range fails instead of landing where no query looks, and
// EnsurePartitions refuses to recreate it while the detached table exists.
func (s *Store) Detach(ctx context.Context, p Partition) error {
	if _, ok := s.parsePartitionName(p.Name); !ok {
		return fmt.Errorf("detach %q: %w", p.Name, ErrUnknownTable)
	}
	s.forget(p)
	_, err := s.pool.Exec(ctx, fmt.Sprintf("ALTER TABLE %s DETACH PARTITION %s",
		meterstore.QuoteIdent(s.cfg.Name()), meterstore.QuoteIdent(p.Name)))
	if err != nil {
		return fmt.Errorf("detach %s: %w", p.Name, err)
	}
	return nil
}

// Drop drops a detached partition (DROP TABLE, never a row-wise DELETE). It
// refuses an attached one: detach it first, after its rows are durable in the
// cold tier (invariant 9). Dropping a partition that no longer exists is a no-op.
func (s *Store) Drop(ctx context.Context, p Partition) error {
	if _, ok := s.parsePartitionName(p.Name); !ok {
		return fmt.Errorf("drop %q: %w", p.Name, ErrUnknownTable)
	}
	var attached bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = to_regclass($1) AND c.relispartition)`,
		meterstore.QuoteIdent(p.Name)).Scan(&attached); err != nil {
		return fmt.Errorf("drop %s: %w", p.Name, err)
	}
	if attached {
		return fmt.Errorf("drop %s: %w", p.Name, errors.New("partition is still attached; Detach it first, after its rows are archived"))
	}
	s.forget(p)
	if _, err := s.pool.Exec(ctx, "DROP TABLE IF EXISTS "+meterstore.QuoteIdent(p.Name)); err != nil {
		return fmt.Errorf("drop %s: %w", p.Name, err)
	}
	return nil
}

// CountRows counts the rows of the parent table or of one of its partitions
// (attached or detached).
func (s *Store) CountRows(ctx context.Context, table string) (int64, error) {
	if err := s.checkTable(table); err != nil {
		return 0, err
	}
	var n int64
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM "+meterstore.QuoteIdent(table)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count rows of %s: %w", table, err)
	}
	return n, nil
}

// RowsBelow counts rows with "from" < w still in the parent table: after archival
// up to watermark w it must be zero (invariant 1).
func (s *Store) RowsBelow(ctx context.Context, w time.Time) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s WHERE "from" < $1`, meterstore.QuoteIdent(s.cfg.Name())), w).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count rows of %s below %s: %w", s.cfg.Name(), w.Format(time.RFC3339), err)
	}
	return n, nil
}

func (s *Store) checkTable(table string) error {
	if table == s.cfg.Name() {
		return nil
	}
	if _, ok := s.parsePartitionName(table); ok {
		return nil
	}
	return fmt.Errorf("table %q: %w %s", table, ErrUnknownTable, s.cfg.Name())
}
