package plan

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

// TestReferenceClausesAreKnown generates references to the configured
// relations and the system tables with every clause DuckDB's grammar allows on
// a table reference — qualification, AT (VERSION|TIMESTAMP => …), alias,
// column aliases, TABLESAMPLE in each method — inside every join kind and
// nesting, and checks that each clause is kept on the relation that replaces
// the reference (the rendered statement, parsed again, carries the same
// alias, column aliases, sample and join clauses) or refused naming it.
// Every field DuckDB serializes on a base-table reference must be one
// referenceClauses lists, and every listed one must occur: a DuckDB release
// that grows a field fails here before the planner could drop it.
func TestReferenceClausesAreKnown(t *testing.T) {
	ctx := context.Background()
	spec := meterstore.TableSpec{Name: "readings_versions", Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}}}
	cfg, err := spec.Build()
	require.NoError(t, err)
	dir := t.TempDir()
	lo, hi, v := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 1, 31, 23, 45, 0, 0, time.UTC), uint64(20250101000001)
	f := ColdFile{Path: filepath.Join(dir, "jan.parquet"), Records: 1000, FieldIDs: true, BalancingDay: true, FromMin: &lo, FromMax: &hi, VersionMin: &v, VersionMax: &v}
	writeEmptyParquet(t, cfg, f.Path, true)
	cold := &fixedCold{dir: dir, snapshot: 2, watermark: time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), files: []ColdFile{f}}
	s := newSession(t, "", &Table{Config: cfg, Hot: &fixedHot{}, Cold: cold})
	conn := s.input(t, "").Conn

	names := []string{"readings", "main.readings_versions", "memory.main.readings", "system.tables"}
	ats := []string{"", "AT (VERSION => 3)", "AT (TIMESTAMP => TIMESTAMPTZ '2025-01-01 00:00:00+00')"}
	aliases := []string{"", "r", "AS r", "r(a, b)", "AS r(a)"}
	samples := []string{"", "TABLESAMPLE 5 ROWS", "TABLESAMPLE 10%", "TABLESAMPLE 10 PERCENT (bernoulli)",
		"TABLESAMPLE reservoir(3 ROWS) REPEATABLE (7)", "TABLESAMPLE 50% (system, 11)", "USING SAMPLE 2 ROWS"}
	shapes := []string{
		"SELECT * FROM %s",
		"SELECT * FROM range(3) t JOIN %s ON t.range > 1",
		"SELECT * FROM range(3) t LEFT JOIN %s USING (range)",
		"SELECT * FROM range(3) t NATURAL FULL JOIN %s",
		"SELECT * FROM range(3) t POSITIONAL JOIN %s",
		"SELECT * FROM range(3) t CROSS JOIN %s",
		"SELECT * FROM (SELECT TIMESTAMPTZ '2025-01-01 00:00:00+00' AS ts) t ASOF JOIN %s ON t.ts >= 1",
		"SELECT * FROM range(3) t, LATERAL (SELECT * FROM %s) s",
		"SELECT * FROM (SELECT * FROM %s) s",
		"WITH c AS (SELECT * FROM %s) SELECT * FROM c",
		"SELECT 1 WHERE 1 IN (SELECT 1 FROM %s)",
	}
	seen := map[string]bool{}
	var kept, refused int
	i := 0
	for _, name := range names {
		for _, at := range ats {
			for _, alias := range aliases {
				for _, sample := range samples {
					i++
					ref := strings.Join(strings.Fields(name+" "+alias+" "+at+" "+sample), " ")
					q := fmt.Sprintf(shapes[i%len(shapes)], ref)
					in, ok := parseTree(t, conn, q)
					if !ok {
						// USING SAMPLE belongs to the SELECT: DuckDB takes it only after the whole FROM clause.
						require.Contains(t, sample, "USING SAMPLE", "%s does not parse", q)
						continue
					}
					bases := findObjects(in, "BASE_TABLE")
					var orig map[string]any
					for _, b := range bases {
						for k := range b {
							seen[k] = true
							_, known := referenceClauses[k]
							require.True(t, known, "%s: DuckDB serializes %q on a table reference, which referenceClauses does not list", q, k)
						}
						if tn, _ := b["table_name"].(string); tn != "range" && tn != "c" {
							orig = b
						}
					}
					require.NotNil(t, orig, q)
					p, err := Run(ctx, s.inputOn(conn, q))
					if at != "" {
						require.ErrorIs(t, err, ErrReferenceClause, q)
						require.ErrorContains(t, err, "AT (", q)
						refused++
						continue
					}
					require.NoError(t, err, q)
					p.Release()
					out, ok := parseTree(t, conn, p.SQL)
					require.True(t, ok, "%s renders unparsable SQL: %s", q, p.SQL)
					require.True(t, carries(append(findObjects(out, "SUBQUERY"), findObjects(out, "BASE_TABLE")...), orig), "%s: the relation in the reference's place lost a clause of %v:\n%s", q, orig, p.SQL)
					require.Equal(t, joinClauses(findObjects(in, "JOIN")), joinClauses(findObjects(out, "JOIN")), "%s: join clauses changed:\n%s", q, p.SQL)
					require.Equal(t, selectSamples(in), selectSamples(out), q)
					kept++
				}
			}
		}
	}
	require.Positive(t, refused)
	require.Positive(t, kept)
	require.Equal(t, slices.Sorted(maps.Keys(referenceClauses)), slices.Sorted(maps.Keys(seen)),
		"referenceClauses lists exactly the fields DuckDB serializes on a table reference")
}

// parseTree is json_serialize_sql's tree of q as plain JSON; false when
// DuckDB cannot parse q.
func parseTree(t *testing.T, conn *sql.Conn, q string) (map[string]any, bool) {
	t.Helper()
	var text string
	require.NoError(t, conn.QueryRowContext(context.Background(), "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR", q).Scan(&text))
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var tree map[string]any
	require.NoError(t, dec.Decode(&tree))
	if failed, _ := tree["error"].(bool); failed {
		return nil, false
	}
	return tree, true
}

// findObjects lists the table references of kind typ (BASE_TABLE, SUBQUERY,
// JOIN) in v, in the order of the text.
func findObjects(v any, typ string) []map[string]any {
	var out []map[string]any
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if _, expr := x["class"]; !expr && x["type"] == typ {
				out = append(out, x)
			}
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// withoutLocations is v with every query_location removed: the rendered
// statement is another text.
func withoutLocations(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "query_location" {
				out[k] = withoutLocations(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutLocations(e)
		}
		return out
	}
	return v
}

// carries reports whether one of subs — the table references of the
// rendered statement — stands for ref: its alias, column aliases and sample.
func carries(subs []map[string]any, ref map[string]any) bool {
	for _, s := range subs {
		if refName(s) == refName(ref) &&
			reflect.DeepEqual(withoutLocations(s["sample"]), withoutLocations(ref["sample"])) &&
			reflect.DeepEqual(s["column_name_alias"], ref["column_name_alias"]) {
			return true
		}
	}
	return false
}

// refName is what a statement calls a table reference: its alias, else its name.
func refName(ref map[string]any) string {
	if alias, _ := ref["alias"].(string); alias != "" {
		return alias
	}
	name, _ := ref["table_name"].(string)
	return name
}

// joinClauses are the joins' own fields (type, condition, USING columns, …),
// without their sides.
func joinClauses(joins []map[string]any) []any {
	out := make([]any, len(joins))
	for i, j := range joins {
		c := map[string]any{}
		for k, v := range j {
			if k != "left" && k != "right" {
				c[k] = v
			}
		}
		out[i] = withoutLocations(c)
	}
	return out
}

// selectSamples are the USING SAMPLE clauses of the statement's SELECTs.
func selectSamples(tree map[string]any) []any {
	var out []any
	for _, s := range findObjects(tree, "SELECT_NODE") {
		if s["sample"] != nil {
			out = append(out, withoutLocations(s["sample"]))
		}
	}
	return out
}
