package engine

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
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

// plan is one statement, rewritten: references replaced by tier-split subqueries.
type plan struct {
	sql        string
	prov       Provenance
	scans      []*plannedScan
	explain    []string
	hotLines   []hotLine // the lines of explain Explain completes with DuckDB's projection
	hotTables  map[*tableState]tablePin
	registered []string
}

func (e *Engine) relations() map[string]relation {
	out := map[string]relation{}
	for _, t := range e.visibleTables() {
		out[strings.ToLower(t.cfg.Name())] = relation{table: t, resolved: false}
		out[strings.ToLower(t.cfg.ResolvedName())] = relation{table: t, resolved: true}
	}
	return out
}

// hotLine is the index in plan.explain of a reference's hot half line.
type hotLine struct {
	at  int
	ref *reference
}

func (p *plan) release(e *Engine) {
	for _, tok := range p.registered {
		e.shared.scans.remove(tok)
	}
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

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func sqlTime(t time.Time) string {
	return "TIMESTAMPTZ '" + t.UTC().Format("2006-01-02 15:04:05.999999") + "+00'"
}

// coldFilter is the predicate every cold read carries: the range (which also
// keeps the tiers disjoint at W), merge-key equalities and scope, and the
// ceilings of an as-of or as-known-at read — all below resolution, so a
// statement cannot escape them.
func coldFilter(rng timeRange, eq map[string]string, v view) string {
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
		conds = append(conds, meterstore.QuoteIdent(k)+" = "+sqlString(eq[k]))
	}
	if v.maxVersion != nil {
		conds = append(conds, fmt.Sprintf(`"version" <= %d`, *v.maxVersion))
	}
	if v.knownAt != nil {
		conds = append(conds, `"recorded_at" <= `+sqlTime(*v.knownAt))
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
// as NULL). A file that does not prove it holds the stored balancing_day
// gets the column computed, as the encoder computes it.
func readParquet(cfg meterstore.TableConfig, files []ColdFile, where string) string {
	type group struct{ byID, day bool }
	paths := map[group][]string{}
	for _, f := range files {
		g := group{byID: f.FieldIDs, day: f.BalancingDay}
		paths[g] = append(paths[g], sqlString(f.Path))
	}
	var parts []string
	for _, g := range []group{{true, true}, {true, false}, {false, true}, {false, false}} {
		list := paths[g]
		if len(list) == 0 {
			continue
		}
		proj := typedProjection(cfg)
		if !g.day {
			proj = computedDayProjection(cfg)
		}
		opts := "union_by_name = true"
		if g.byID {
			opts = "schema = " + fieldIDSchema(cfg)
		}
		parts = append(parts, fmt.Sprintf("SELECT %s FROM read_parquet([%s], %s)%s", proj, strings.Join(list, ", "), opts, where))
	}
	return strings.Join(parts, " UNION ALL ")
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
		entries[i] = fmt.Sprintf("%d: {name: %s, type: %s, default_value: NULL}", c.FieldID, sqlString(c.Name), sqlString(c.Type.DuckDBType()))
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
