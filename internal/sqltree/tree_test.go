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
