package sqltree_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/sqltree"
)

// corpus spans what the planner meets: every node kind it models, and
// objects it does not (window functions, CASE, lambdas, PIVOT, QUALIFY, set
// operations, recursive CTEs, VALUES, sampling).
var corpus = []string{
	`SELECT 1`,
	`SELECT * FROM readings WHERE "from" >= '2025-01-01 00:00:00+00' AND "from" < TIMESTAMPTZ '2025-02-01 00:00:00+00'`,
	`SELECT malo_id, sum(value) FILTER (WHERE quality = 'MEASURED') AS s FROM readings r WHERE r."from" BETWEEN $1 AND $2 GROUP BY ALL HAVING sum(value) > 0 ORDER BY 1 LIMIT 10`,
	`WITH x AS (SELECT malo_id, max("from") AS m FROM readings_versions GROUP BY 1) SELECT r.* FROM readings AS r INNER JOIN x ON r.malo_id = x.malo_id WHERE r.tenant IN (SELECT 't1') AND r."from" < x.m`,
	`SELECT * FROM (SELECT * FROM readings WHERE "from" < '2025-02-01') s WHERE malo_id IN (SELECT malo_id FROM readings_versions) OR NOT (value > 1)`,
	`SELECT malo_id FROM readings UNION SELECT malo_id FROM readings_versions EXCEPT SELECT '1'`,
	`WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3) SELECT * FROM t, range(3) AS g(i)`,
	`SELECT row_number() OVER (PARTITION BY malo_id ORDER BY version DESC) AS rn, CASE WHEN value > 0 THEN 'p' ELSE 'n' END FROM readings QUALIFY rn = 1`,
	`SELECT list_transform([1, 2], x -> x + 1), meter_balancing_day("from", sparte)::DATE, TRY_CAST(value AS VARCHAR) FROM readings USING SAMPLE 10%`,
	`SELECT * FROM (VALUES (1, 'a'), (2, 'b')) v(i, s) PIVOT (sum(i) FOR s IN ('a', 'b'))`,
	`SELECT * FROM meter_completeness('2025-01-01', '2025-02-01') AS c, system.tables t WHERE c.malo_id = 'x' AND t."table" = ?`,
}

func duck(t *testing.T) *sql.Conn {
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

func serialize(t *testing.T, conn *sql.Conn, q string) string {
	var out string
	require.NoError(t, conn.QueryRowContext(context.Background(), "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR", q).Scan(&out))
	return out
}

func deserialize(t *testing.T, conn *sql.Conn, tree string) string {
	var out string
	require.NoError(t, conn.QueryRowContext(context.Background(), "SELECT json_deserialize_sql(?::JSON)", tree).Scan(&out))
	return out
}

// plainJSON decodes with exact numbers, for comparing two encodings.
func plainJSON(t *testing.T, s string) any {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

// TestRoundTripIsExact: decoding and encoding gives back DuckDB's own tree,
// every field and every number (query_location is UINT64_MAX) as it was, and
// DuckDB turns it into the same SQL.
func TestRoundTripIsExact(t *testing.T) {
	conn := duck(t)
	for _, q := range corpus {
		in := serialize(t, conn, q)
		root, err := sqltree.Decode(in)
		require.NoError(t, err, q)
		require.False(t, root.Error, "%s: %s", q, root.ErrorMessage)
		out, err := sqltree.Encode(root)
		require.NoError(t, err)
		require.Equal(t, plainJSON(t, in), plainJSON(t, out), q)
		require.Equal(t, deserialize(t, conn, in), deserialize(t, conn, out), q)
	}
}

// TestDecodeTypesTheModelledKinds: the planner's node kinds arrive as their Go
// types wherever they are, in the text's order.
func TestDecodeTypesTheModelledKinds(t *testing.T) {
	conn := duck(t)
	root, err := sqltree.Decode(serialize(t, conn, corpus[3]))
	require.NoError(t, err)
	var tables []string
	kinds := map[string]bool{}
	sqltree.Inspect(root, func(n sqltree.Node, s sqltree.Scope) bool {
		switch x := n.(type) {
		case *sqltree.BaseTable:
			tables = append(tables, x.Name())
			if x.TableName == "x" {
				require.True(t, s.IsCTE("X"), "the CTE is in scope")
			}
		case *sqltree.SelectNode:
			kinds["select"] = true
		case *sqltree.Join:
			kinds["join"] = true
		case *sqltree.Comparison:
			kinds["comparison"] = true
		case *sqltree.Conjunction:
			kinds["conjunction"] = true
		case *sqltree.SubqueryExpr:
			kinds["subquery"] = true
		case *sqltree.ColumnRef:
			kinds["column"] = true
		}
		return true
	})
	require.Equal(t, []string{"readings_versions", "r", "x"}, tables)
	require.Len(t, kinds, 6)
}

// TestRefusalIsARoot: what json_serialize_sql refuses comes back as Root.Error.
func TestRefusalIsARoot(t *testing.T) {
	conn := duck(t)
	root, err := sqltree.Decode(serialize(t, conn, `DROP TABLE x`))
	require.NoError(t, err)
	require.True(t, root.Error)
	require.Contains(t, root.ErrorMessage, "Only SELECT")
}

// TestTransformReplacesAndReports: a transform replaces nodes bottom-up,
// reports the change, and DuckDB reads the result; TransformLevel leaves the
// levels below alone.
func TestTransformReplacesAndReports(t *testing.T) {
	conn := duck(t)
	root, err := sqltree.Decode(serialize(t, conn, `SELECT a FROM t WHERE a IN (SELECT a FROM u)`))
	require.NoError(t, err)
	rename := func(n sqltree.Node, _ sqltree.Scope) (sqltree.Node, bool, error) {
		if c, ok := n.(*sqltree.ColumnRef); ok && c.Names[len(c.Names)-1] == "a" {
			return sqltree.NewColumnRef("b"), true, nil
		}
		return n, false, nil
	}
	sel := root.Statements[0].Node.(*sqltree.SelectNode)
	_, changed, err := sqltree.TransformLevel(sel.Where, rename)
	require.NoError(t, err)
	require.True(t, changed)
	out, err := sqltree.Encode(root)
	require.NoError(t, err)
	require.Equal(t, `SELECT a FROM t WHERE (b = ANY(SELECT a FROM u))`, deserialize(t, conn, out))

	n, changed, err := sqltree.Transform(root, rename)
	require.NoError(t, err)
	require.True(t, changed)
	out, err = sqltree.Encode(n)
	require.NoError(t, err)
	require.Equal(t, `SELECT b FROM t WHERE (b = ANY(SELECT b FROM u))`, deserialize(t, conn, out))

	_, changed, err = sqltree.Transform(n, func(n sqltree.Node, _ sqltree.Scope) (sqltree.Node, bool, error) { return n, false, nil })
	require.NoError(t, err)
	require.False(t, changed)
}

// TestCTEScopeIsDuckDBs: a name in a WITH is a CTE where DuckDB's binder binds
// it to the CTE, and a relation everywhere else — a non-recursive CTE's body
// does not see itself or a later sibling, only the recursive side of a
// recursive CTE sees its own name. Each case runs in DuckDB beside a table b
// (one row, 42) so the expectation is DuckDB's, not ours.
func TestCTEScopeIsDuckDBs(t *testing.T) {
	conn := duck(t)
	ctx := context.Background()
	_, err := conn.ExecContext(ctx, `CREATE TABLE b AS SELECT 42 AS v`)
	require.NoError(t, err)
	cases := []struct {
		q      string
		isCTE  []bool // each reference to b, in the text's order
		answer []int64
	}{
		{`WITH b AS (SELECT * FROM b) SELECT * FROM b`, []bool{false, true}, []int64{42}},
		{`WITH b AS MATERIALIZED (SELECT v + 1 AS v FROM b) SELECT * FROM b`, []bool{false, true}, []int64{43}},
		{`SELECT * FROM (WITH b AS (SELECT * FROM b) SELECT * FROM b)`, []bool{false, true}, []int64{42}},
		{`WITH b AS (SELECT 1 AS v UNION ALL SELECT * FROM b) SELECT * FROM b ORDER BY v`, []bool{false, true}, []int64{1, 42}},
		{`WITH b AS (SELECT 1 AS v) SELECT * FROM (WITH b AS (SELECT v + 1 AS v FROM b) SELECT * FROM b)`, []bool{true, true}, []int64{2}},
		{`WITH c AS (SELECT * FROM b), b AS (SELECT 1 AS v) SELECT * FROM c`, []bool{false}, []int64{42}},
		{`WITH b AS (SELECT 1 AS v), c AS (SELECT v + 1 AS v FROM b) SELECT * FROM c`, []bool{true}, []int64{2}},
		{`WITH b AS (SELECT 1 AS v) SELECT * FROM b WHERE v IN (SELECT v FROM b)`, []bool{true, true}, []int64{1}},
		{`WITH RECURSIVE b AS (SELECT * FROM b) SELECT * FROM b`, []bool{false, true}, []int64{42}},
		{`WITH RECURSIVE b AS (SELECT 1 AS v UNION SELECT v FROM b) SELECT * FROM b`, []bool{true, true}, []int64{1}},
		{`WITH RECURSIVE b AS (SELECT 1 AS v UNION SELECT * FROM (SELECT v FROM b)) SELECT * FROM b`, []bool{true, true}, []int64{1}},
		{`WITH RECURSIVE b AS (SELECT * FROM b UNION SELECT 1 AS v) SELECT * FROM b ORDER BY v`, []bool{false, true}, []int64{1, 42}},
		{`WITH RECURSIVE b AS (SELECT 1 AS v UNION SELECT v FROM b UNION SELECT 2) SELECT * FROM b ORDER BY v`, []bool{false, true}, []int64{1, 2, 42}},
		{`WITH RECURSIVE b AS (SELECT 1 AS v UNION BY NAME SELECT v FROM b) SELECT * FROM b ORDER BY v`, []bool{false, true}, []int64{1, 42}},
		{`WITH RECURSIVE b AS (SELECT 1 AS v INTERSECT SELECT v FROM b) SELECT * FROM b`, []bool{false, true}, nil},
		{`WITH RECURSIVE c AS (SELECT * FROM b), b AS (SELECT 1 AS v) SELECT * FROM c`, []bool{false}, []int64{42}},
	}
	for _, c := range cases {
		rows, err := conn.QueryContext(ctx, c.q)
		require.NoError(t, err, c.q)
		var answer []int64
		for rows.Next() {
			var v int64
			require.NoError(t, rows.Scan(&v))
			answer = append(answer, v)
		}
		require.NoError(t, rows.Err())
		rows.Close()
		require.Equal(t, c.answer, answer, "DuckDB's answer to %s", c.q)

		root, err := sqltree.Decode(serialize(t, conn, c.q))
		require.NoError(t, err)
		var isCTE []bool
		sqltree.Inspect(root, func(n sqltree.Node, s sqltree.Scope) bool {
			if x, ok := n.(*sqltree.BaseTable); ok && x.TableName == "b" {
				isCTE = append(isCTE, s.IsCTE("b"))
			}
			return true
		})
		require.Equal(t, c.isCTE, isCTE, "Inspect: %s", c.q)
		isCTE = nil
		_, _, err = sqltree.Transform(root, func(n sqltree.Node, s sqltree.Scope) (sqltree.Node, bool, error) {
			if x, ok := n.(*sqltree.BaseTable); ok && x.TableName == "b" {
				isCTE = append(isCTE, s.IsCTE("b"))
			}
			return n, false, nil
		})
		require.NoError(t, err)
		require.Equal(t, c.isCTE, isCTE, "Transform: %s", c.q)
	}
}
