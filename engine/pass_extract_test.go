package engine

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/stretchr/testify/require"

	"meterstore"
)

func testConfig(t testing.TB) meterstore.TableConfig {
	cfg, err := meterstore.TableSpec{Name: "readings_versions",
		Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}, {Name: "bilanzkreis", Nullable: true}}}.Build()
	require.NoError(t, err)
	return cfg
}

func duckConn(t testing.TB) *sql.Conn {
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

// extractRefs runs the passes through bound extraction over q.
func extractRefs(t testing.TB, e *Engine, q string, args ...any) ([]*reference, error) {
	pl, err := planThrough(t, e, q, "extract bounds", args...)
	if err != nil {
		return nil, err
	}
	return pl.refs, nil
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestExtractBounds(t *testing.T) {
	e := testEngine(t, nil)
	jan, feb := ts("2025-01-01T00:00:00Z"), ts("2025-02-01T00:00:00Z")
	for _, tc := range []struct {
		name   string
		sql    string
		args   []any
		refs   int
		lo, hi *time.Time
		eq     map[string]string
	}{
		{name: "half-open", sql: `SELECT * FROM readings WHERE "from" >= '2025-01-01 00:00:00+00' AND "from" < '2025-02-01 00:00:00+00'`, refs: 1, lo: &jan, hi: &feb},
		{name: "reversed", sql: `SELECT * FROM readings WHERE TIMESTAMPTZ '2025-02-01 00:00:00+00' > "from"`, refs: 1, hi: &feb},
		{name: "or widens", sql: `SELECT * FROM readings WHERE "from" >= '2025-01-01 00:00:00+00' OR malo_id = 'x'`, refs: 1},
		{name: "between", sql: `SELECT * FROM readings WHERE "from" BETWEEN '2025-01-01 00:00:00+00' AND '2025-01-31 23:59:59.999999+00'`, refs: 1, lo: &jan, hi: &feb},
		{name: "parameters", sql: `SELECT * FROM readings WHERE "from" >= $1 AND "from" < $2 AND malo_id = $3`, args: []any{jan, feb, "41373559241"}, refs: 1, lo: &jan, hi: &feb, eq: map[string]string{"malo_id": "41373559241"}},
		{name: "other alias", sql: `SELECT * FROM readings r JOIN readings_versions v USING (malo_id) WHERE v."from" >= '2025-01-01 00:00:00+00'`, refs: 2},
		{name: "unqualified in join widens", sql: `SELECT * FROM readings r JOIN readings_versions v ON r.malo_id = v.malo_id WHERE tenant = 'a'`, refs: 2},
		{name: "cte shadows", sql: `WITH readings AS (SELECT 1 AS x) SELECT * FROM readings`, refs: 0},
		{name: "subquery and in", sql: `SELECT * FROM (SELECT * FROM readings WHERE "from" < '2025-02-01 00:00:00+00') s WHERE malo_id IN (SELECT malo_id FROM readings_versions)`, refs: 2},
		{name: "attribute not pushed", sql: `SELECT * FROM readings WHERE bilanzkreis = 'x' AND tenant = 't1'`, refs: 1, eq: map[string]string{"tenant": "t1"}},
		{name: "union", sql: `SELECT malo_id FROM readings UNION SELECT malo_id FROM readings_versions`, refs: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refs, err := extractRefs(t, e, tc.sql, tc.args...)
			require.NoError(t, err)
			require.Len(t, refs, tc.refs)
			if tc.refs != 1 {
				return
			}
			r := refs[0].rng
			if tc.lo == nil {
				require.Nil(t, r.lo)
			} else {
				require.NotNil(t, r.lo)
				require.True(t, tc.lo.Equal(*r.lo), "lo %s", r.lo)
			}
			if tc.hi == nil {
				require.Nil(t, r.hi)
			} else {
				require.NotNil(t, r.hi)
				require.True(t, tc.hi.Equal(*r.hi), "hi %s", r.hi)
			}
			if tc.eq != nil {
				require.Equal(t, tc.eq, refs[0].eq)
			}
		})
	}
}

// TestExtractionIsConservative generates random filter trees and checks, against
// DuckDB evaluating the full predicate, that the extracted range always contains
// every row the predicate accepts (design invariant 10).
func TestExtractionIsConservative(t *testing.T) {
	conn := duckConn(t)
	e := testEngine(t, nil)
	ctx := context.Background()
	_, err := conn.ExecContext(ctx, `CREATE TABLE pts AS SELECT TIMESTAMPTZ '2025-01-01 00:00:00+00' + INTERVAL (i * 37) MINUTE AS "from",
		CASE WHEN i % 3 = 0 THEN 'a' ELSE 'b' END AS malo_id, 't' || (i % 2) AS tenant FROM range(0, 3000) r(i)`)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	base := ts("2025-01-01T00:00:00Z")
	instant := func() string {
		return "'" + base.Add(time.Duration(rng.IntN(3000*37))*time.Minute).Format("2006-01-02 15:04:05+00") + "'"
	}
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth == 0 || rng.IntN(3) == 0 {
			switch rng.IntN(6) {
			case 0:
				return fmt.Sprintf(`"from" %s %s`, []string{"<", "<=", ">", ">=", "="}[rng.IntN(5)], instant())
			case 1:
				return fmt.Sprintf(`"from" BETWEEN %s AND %s`, instant(), instant())
			case 2:
				return fmt.Sprintf(`%s %s "from"`, instant(), []string{"<", "<=", ">", ">="}[rng.IntN(4)])
			case 3:
				return `malo_id = 'a'`
			case 4:
				return fmt.Sprintf(`NOT ("from" < %s)`, instant())
			default:
				return `tenant = 't1'`
			}
		}
		op := []string{"AND", "OR", "AND"}[rng.IntN(3)]
		return "(" + gen(depth-1) + " " + op + " " + gen(depth-1) + ")"
	}
	for i := 0; i < 300; i++ {
		pred := gen(3)
		refs, err := extractRefs(t, e, "SELECT * FROM readings WHERE "+pred)
		require.NoError(t, err)
		require.Len(t, refs, 1)
		r := refs[0]
		var outside []string
		if r.rng.lo != nil {
			outside = append(outside, `"from" < TIMESTAMPTZ '`+r.rng.lo.Format(time.RFC3339Nano)+`'`)
		}
		if r.rng.hi != nil {
			outside = append(outside, `"from" >= TIMESTAMPTZ '`+r.rng.hi.Format(time.RFC3339Nano)+`'`)
		}
		for col, v := range r.eq {
			outside = append(outside, fmt.Sprintf(`%s <> '%s'`, col, v))
		}
		if len(outside) == 0 {
			continue
		}
		var lost int
		q := fmt.Sprintf(`SELECT count(*) FROM pts WHERE (%s) AND (%s)`, pred, strings.Join(outside, " OR "))
		require.NoError(t, conn.QueryRowContext(ctx, q).Scan(&lost))
		require.Zero(t, lost, "predicate %s extracted %s %v loses rows", pred, r.rng, r.eq)
	}
}
