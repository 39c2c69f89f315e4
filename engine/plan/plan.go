package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltext"
)

// Tier is one of the two stores.
type Tier uint8

const (
	Cold Tier = 1 << iota
	Hot
)

func (t Tier) String() string {
	switch t {
	case Cold:
		return "cold"
	case Hot:
		return "hot"
	case Cold | Hot:
		return "cold+hot"
	}
	return "none"
}

// ErrBoundaryMoved means an archival run moved a table's watermark (or detached
// a partition) while a statement read the hot tier: some rows may have been in
// neither place the statement looked. Nothing was returned; run it again.
var ErrBoundaryMoved = errors.New("the tiering watermark moved while the statement ran; run it again")

// Plan is one statement, rewritten: references replaced by tier-split
// subqueries. Release it when the statement has ended.
type Plan struct {
	// SQL is the statement DuckDB runs.
	SQL string
	// Provenance is the boundary the statement reads, known before it runs.
	Provenance Provenance
	// Explain is EXPLAIN's text per reference (CompleteHotLines fills in
	// what PostgreSQL receives).
	Explain []string
	// Scans are the scans the statement's table functions read, by token.
	Scans []*Scan
	// Args are the arguments the statement runs with: Input.Args, or what
	// Input.Bind answered.
	Args []any

	hotLines  []hotLine // the lines of Explain CompleteHotLines completes with DuckDB's projection
	hotTables map[*Table]tablePin
	// pins are what the statement pinned of every table it references, and
	// view the view it pinned them for: what Holds re-reads.
	pins        map[*Table]tablePin
	view        View
	readsSystem bool
	tokens      []string
	registry    Registry
	fed         []fedHalf // the cold halves the Feeder runs
	feeder      Feeder
	// id names the plan one Run made; its Template and every Again of it
	// share it (ID).
	id uint64
}

// planIDs numbers the plans Run makes.
var planIDs atomic.Uint64

// ID is the plan's identity: a plan made anew has an ID of its own, and its
// Template and every Again of it share it. A statement DuckDB prepared for
// one run of a plan serves another run of the same plan, and of no other:
// the plan is a function of its statement, arguments, view and the tiers as
// pinned (Reusable), so another scope, snapshot or watermark is another plan.
func (p *Plan) ID() uint64 { return p.id }

// Tokens are the tokens the plan's statement names: its scans', then its fed
// halves', in the order every Again of the plan shares. A run of the
// statement prepared for another run of the plan reaches this run's scans
// and halves through that run's tokens, position by position.
func (p *Plan) Tokens() (scans, fed []string) {
	fed = make([]string, len(p.fed))
	for i, f := range p.fed {
		fed[i] = f.token
	}
	return slices.Clone(p.tokens), fed
}

func relations(tables []*Table) map[string]relation {
	out := map[string]relation{}
	for _, t := range tables {
		out[strings.ToLower(t.Config.Name())] = relation{table: t, resolved: false}
		out[strings.ToLower(t.Config.ResolvedName())] = relation{table: t, resolved: true}
	}
	return out
}

// hotLine is the index in Plan.Explain of a reference's hot half line.
type hotLine struct {
	at  int
	ref *reference
}

// Release ends the plan's scans: their tokens no longer name them.
func (p *Plan) Release() {
	for _, tok := range p.tokens {
		p.registry.Remove(tok)
	}
	p.tokens = nil
	for _, f := range p.fed {
		p.feeder.Unfeed(f.token)
	}
	p.fed = nil
}

// register hands s to the session's table functions under a token that
// lives until Release.
func (p *Plan) register(s *Scan) string {
	tok := p.registry.Add(s)
	p.tokens = append(p.tokens, tok)
	p.Scans = append(p.Scans, s)
	return tok
}

func appendUnique(xs []int64, x int64) []int64 {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

func appendUniqueString(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

func sqlTime(t time.Time) string {
	return "TIMESTAMPTZ '" + t.UTC().Format("2006-01-02 15:04:05.999999") + "+00'"
}

// coldFilter is the predicate every cold read carries: the range (which also
// keeps the tiers disjoint at W), merge-key equalities and scope, and the
// ceilings of an as-of or as-known-at read — all below resolution, so a
// statement cannot escape them.
func coldFilter(rng timeRange, eq map[string]string, v View) string {
	var conds []string
	if rng.lo != nil {
		conds = append(conds, `"from" >= `+sqlTime(*rng.lo))
	}
	if rng.hi != nil {
		conds = append(conds, `"from" < `+sqlTime(*rng.hi))
	}
	keys := make([]string, 0, len(eq))
	for k := range eq {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		conds = append(conds, meterstore.QuoteIdent(k)+" = "+sqltext.String(eq[k]))
	}
	if v.MaxVersion != nil {
		conds = append(conds, fmt.Sprintf(`"version" <= %d`, *v.MaxVersion))
	}
	if v.KnownAt != nil {
		conds = append(conds, `"recorded_at" <= `+sqlTime(*v.KnownAt))
	}
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// readParquet reads planned files with the table's exact column types. A file
// carrying Iceberg field ids is read by id — a column renamed by another
// engine, or written before a rename, is still the column it was, and one
// added since reads as NULL — through read_parquet's field-id schema; a file
// without them is read by name (read by id, each of its columns would read
// as NULL). A file whose names, ids and types are the table's (NamesAsIDs)
// reads the same by name, and is read without the field-id schema, which
// DuckDB binds anew at every run. A file that does not prove it holds the
// stored balancing_day gets the column computed, as the encoder computes it.
func readParquet(cfg meterstore.TableConfig, files []ColdFile, where string) string {
	type group struct {
		by  fileColumns
		day bool
	}
	paths := map[group][]string{}
	for _, f := range files {
		g := group{by: columnsOf(f), day: f.BalancingDay}
		paths[g] = append(paths[g], sqltext.String(f.Path))
	}
	var parts []string
	for _, by := range []fileColumns{namedAsIDs, byFieldID, byName} {
		for _, day := range []bool{true, false} {
			list := paths[group{by, day}]
			if len(list) == 0 {
				continue
			}
			proj := typedProjection(cfg)
			if !day {
				proj = computedDayProjection(cfg)
			}
			parts = append(parts, fmt.Sprintf("SELECT %s FROM read_parquet([%s], %s)%s", proj, strings.Join(list, ", "), by.options(cfg), where))
		}
	}
	return strings.Join(parts, " UNION ALL ")
}

// fileColumns is how read_parquet finds a file's columns.
type fileColumns uint8

const (
	namedAsIDs fileColumns = iota // by name, which are the ids' (ColdFile.NamesAsIDs)
	byFieldID                     // by field id, through the field-id schema
	byName                        // by name, in a file without field ids
)

func columnsOf(f ColdFile) fileColumns {
	switch {
	case f.FieldIDs && f.NamesAsIDs:
		return namedAsIDs
	case f.FieldIDs:
		return byFieldID
	}
	return byName
}

// options are read_parquet's options reading files so. Files named as their
// ids hold every column under its name, so no union of schemas is needed
// (union_by_name opens every file as the statement binds); their paths'
// key=value directories name no column.
func (c fileColumns) options(cfg meterstore.TableConfig) string {
	switch c {
	case namedAsIDs:
		return "hive_partitioning = false"
	case byFieldID:
		return "schema = " + fieldIDSchema(cfg)
	}
	return "union_by_name = true"
}

// FilesRelation is the rows of files of t — from before below; every row
// for a zero below — with the table's exact column types, read as a cold
// half reads them: with DuckDB's reader (by field id where a file carries
// them — by name where they are its names' — by name otherwise; the day
// computed where a file does not prove it), or with goReader — where the database does not open them itself
// (!Paths.Opens) — through meter_cold_scan, its scan registered with
// register for the statement to read. For a check that reads only the cold
// files whose footer does not prove what it checks, which no plan singles
// out (store.Table.UnitPairViolations, BalancingDayMismatches). files must
// not be empty.
func FilesRelation(ctx context.Context, t *Table, goReader bool, register func(*Scan) string, files []ColdFile, below time.Time) (string, error) {
	where := ""
	if !below.IsZero() {
		where = ` WHERE "from" < ` + sqlTime(below)
	}
	c := &coldHalf{filter: func(timeRange) string { return where }}
	var path ColdPath = ReadParquet
	if goReader {
		path = coldScanPath{ctx: ctx, register: register, cold: t.Cold}
	}
	return path.relation(t.Config, c, files)
}

// computedDayProjection is typedProjection with balancing_day computed from
// "from" and sparte (meter_balancing_day, the calendar function the encoder
// stores it from), for files that do not hold the column.
func computedDayProjection(cfg meterstore.TableConfig) string {
	cols := cfg.Columns()
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = typedColumn(c)
	}
	out[meterstore.ColBalancingDay] = `meter_balancing_day(CAST("from" AS TIMESTAMPTZ), CAST("sparte" AS VARCHAR)) AS "balancing_day"`
	return strings.Join(out, ", ")
}

// fieldIDSchema is read_parquet's schema argument: each column's field id
// mapped to its name and type, NULL where a file lacks it.
func fieldIDSchema(cfg meterstore.TableConfig) string {
	cols := cfg.Columns()
	entries := make([]string, len(cols))
	for i, c := range cols {
		entries[i] = fmt.Sprintf("%d: {name: %s, type: %s, default_value: NULL}", c.FieldID, sqltext.String(c.Name), sqltext.String(c.Type.DuckDBType()))
	}
	return "MAP {" + strings.Join(entries, ", ") + "}"
}

func typedProjection(cfg meterstore.TableConfig) string {
	cols := cfg.Columns()
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = typedColumn(c)
	}
	return strings.Join(out, ", ")
}

// typedColumn is column c cast to its type, under its name.
func typedColumn(c meterstore.ColumnDef) string {
	return fmt.Sprintf("CAST(%s AS %s) AS %s", meterstore.QuoteIdent(c.Name), c.Type.DuckDBType(), meterstore.QuoteIdent(c.Name))
}

// emptyRelation is a correctly typed relation with no rows.
func emptyRelation(cfg meterstore.TableConfig) string {
	cols := cfg.Columns()
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = fmt.Sprintf("CAST(NULL AS %s) AS %s", c.Type.DuckDBType(), meterstore.QuoteIdent(c.Name))
	}
	return "SELECT " + strings.Join(out, ", ") + " WHERE false"
}
