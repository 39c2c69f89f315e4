package plan

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
)

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
func extractRefs(t testing.TB, e *session, q string, args ...any) ([]*reference, error) {
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
	e := testSession(t, nil)
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
		{name: "named parameters", sql: `SELECT * FROM readings WHERE "from" >= $lo AND "from" < $hi::DATE AND malo_id = $m`, args: []any{sql.Named("lo", jan), sql.Named("hi", "2025-02-01"), sql.Named("m", "41373559241")}, refs: 1, lo: &jan, hi: &feb, eq: map[string]string{"malo_id": "41373559241"}},
		{name: "computed from parameters", sql: `SELECT * FROM readings WHERE "from" >= to_timestamp($1) AND "from" < to_timestamp($2)`, args: []any{jan.Unix(), feb.Unix()}, refs: 1, lo: &jan, hi: &feb},
		{name: "interval arithmetic", sql: `SELECT * FROM readings WHERE "from" >= $1::TIMESTAMPTZ AND "from" < $1::TIMESTAMPTZ + INTERVAL '31 days'`, args: []any{jan}, refs: 1, lo: &jan, hi: &feb},
		{name: "truncated literal", sql: `SELECT * FROM readings WHERE "from" >= date_trunc('month', TIMESTAMPTZ '2025-01-15 12:00:00+00')`, refs: 1, lo: &jan},
		{name: "the moment bounds nothing", sql: `SELECT * FROM readings WHERE "from" >= now() - INTERVAL '1 day' AND "from" < to_timestamp(random() * 1e9)`, refs: 1},
		{name: "unsupplied parameter widens", sql: `SELECT * FROM readings WHERE "from" >= $1 AND "from" < $2`, args: []any{jan}, refs: 1, lo: &jan},
		{name: "other alias", sql: `SELECT * FROM readings r JOIN readings_versions v USING (malo_id) WHERE v."from" >= '2025-01-01 00:00:00+00'`, refs: 2},
		{name: "unqualified in join widens", sql: `SELECT * FROM readings r JOIN readings_versions v ON r.malo_id = v.malo_id WHERE tenant = 'a'`, refs: 2},
		{name: "cte shadows", sql: `WITH readings AS (SELECT 1 AS x) SELECT * FROM readings`, refs: 0},
		{name: "subquery and in", sql: `SELECT * FROM (SELECT * FROM readings WHERE "from" < '2025-02-01 00:00:00+00') s WHERE malo_id IN (SELECT malo_id FROM readings_versions)`, refs: 2},
		{name: "attribute not pushed", sql: `SELECT * FROM readings WHERE bilanzkreis = 'x' AND tenant = 't1'`, refs: 1, eq: map[string]string{"tenant": "t1"}},
		{name: "union", sql: `SELECT malo_id FROM readings UNION SELECT malo_id FROM readings_versions`, refs: 2},
		{name: "infinities bound nothing", sql: `SELECT * FROM readings WHERE "from" >= '-infinity' AND "from" < TIMESTAMPTZ 'infinity'`, refs: 1},
		{name: "infinite parameters bound nothing", sql: `SELECT * FROM readings WHERE "from" > $1 AND "from" <= $2`, args: []any{"-infinity", "infinity"}, refs: 1},
		{name: "infinite days bound nothing", sql: `SELECT * FROM readings WHERE balancing_day >= DATE '-infinity' AND balancing_day <= 'infinity'`, refs: 1},
		{name: "days beyond the years of a timestamp bound nothing", sql: `SELECT * FROM readings WHERE balancing_day < DATE '300000-01-01' AND balancing_day > DATE '300000-01-01 (BC)'`, refs: 1},
		{name: "instants beyond the years of the tiers bound nothing", sql: `SELECT * FROM readings WHERE "from" > TIMESTAMPTZ '290300-12-22 (BC) 00:00:00+00' AND "from" < TIMESTAMPTZ '294246-12-31 00:00:00+00'`, refs: 1},
		{name: "other precisions bound nothing", sql: `SELECT * FROM readings WHERE "from" = TIMESTAMP_NS '2025-01-01 00:00:00.000000001' AND "from" < TIMESTAMP_MS '2025-02-01 00:00:00' AND "from" >= $1::TIMESTAMP_S`, args: []any{"2025-01-01"}, refs: 1},
		{name: "naive timestamps and dates bound", sql: `SELECT * FROM readings WHERE "from" >= TIMESTAMP '2025-01-01 00:00:00' AND "from" < DATE '2025-02-01'`, refs: 1, lo: &jan, hi: &feb},
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
// DuckDB evaluating the full predicate with the same arguments, that the
// extracted range always contains every row the predicate accepts (design
// invariant 10). The leaves compare "from" with literals with and without an
// offset, typed TIMESTAMP/DATE literals and casts, AT TIME ZONE, and
// parameters bound to time.Time values in several zones or to strings, under
// the session zones UTC and Europe/Berlin, over a year that holds both DST
// changes (including the wall clocks that do not exist or exist twice).
func TestExtractionIsConservative(t *testing.T) {
	conn := duckConn(t)
	ctx := context.Background()
	_, err := conn.ExecContext(ctx, `CREATE TABLE pts AS SELECT TIMESTAMPTZ '2025-03-01 00:00:00+00' + INTERVAL (i * 97) MINUTE AS "from",
		CASE WHEN i % 3 = 0 THEN 'a' ELSE 'b' END AS malo_id, 't' || (i % 2) AS tenant FROM range(0, 6000) r(i)`)
	require.NoError(t, err)
	for _, zone := range []string{"UTC", "Europe/Berlin"} {
		t.Run("zone="+zone, func(t *testing.T) {
			_, err := conn.ExecContext(ctx, "SET TimeZone = '"+zone+"'")
			require.NoError(t, err)
			e := newSession(t, zone, &Table{Config: testConfig(t), Hot: &fixedHot{}, Cold: &fixedCold{dir: t.TempDir()}})
			g := newPredicateGen(rand.New(rand.NewPCG(1, uint64(len(zone)))))
			for i := 0; i < 300; i++ {
				pred, args := g.predicate(3)
				refs, err := extractRefs(t, e, "SELECT * FROM readings WHERE "+pred, args...)
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
				require.NoError(t, conn.QueryRowContext(ctx, q, args...).Scan(&lost), q)
				require.Zero(t, lost, "predicate %s %v extracted %s %v loses rows", pred, args, r.rng, r.eq)
			}
		})
	}
}

// predicateGen draws filter trees over pts for TestExtractionIsConservative,
// numbering the parameters it uses and collecting their arguments.
type predicateGen struct {
	rng   *rand.Rand
	args  []any
	zones []*time.Location
}

func newPredicateGen(rng *rand.Rand) *predicateGen {
	g := &predicateGen{rng: rng, zones: []*time.Location{time.UTC}}
	for _, z := range []string{"Europe/Berlin", "America/New_York", "Asia/Kolkata"} {
		loc, err := time.LoadLocation(z)
		if err != nil {
			panic(err)
		}
		g.zones = append(g.zones, loc)
	}
	return g
}

func (g *predicateGen) predicate(depth int) (string, []any) {
	g.args = nil
	return g.tree(depth), g.args
}

func (g *predicateGen) tree(depth int) string {
	if depth == 0 || g.rng.IntN(3) == 0 {
		return g.leaf()
	}
	op := []string{"AND", "OR", "AND"}[g.rng.IntN(3)]
	return "(" + g.tree(depth-1) + " " + op + " " + g.tree(depth-1) + ")"
}

func (g *predicateGen) leaf() string {
	switch g.rng.IntN(7) {
	case 0, 1:
		return fmt.Sprintf(`"from" %s %s`, []string{"<", "<=", ">", ">=", "="}[g.rng.IntN(5)], g.instant())
	case 2:
		return fmt.Sprintf(`"from" BETWEEN %s AND %s`, g.instant(), g.instant())
	case 3:
		return fmt.Sprintf(`%s %s "from"`, g.instant(), []string{"<", "<=", ">", ">="}[g.rng.IntN(4)])
	case 4:
		return `malo_id = 'a'`
	case 5:
		return fmt.Sprintf(`NOT ("from" < %s)`, g.instant())
	default:
		return `tenant = 't1'`
	}
}

// wallClocks include Berlin's spring-forward hour (02:30 does not exist) and
// its fall-back hour (02:30 exists twice).
var wallClocks = []string{"2025-03-30 02:30:00", "2025-10-26 02:30:00", "2025-10-26 01:59:59.999999"}

// instant is an expression for a point of pts' year, in one of DuckDB's
// spellings: text with and without an offset, typed literals, casts, AT TIME
// ZONE, or a parameter.
func (g *predicateGen) instant() string {
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	at := base.Add(time.Duration(g.rng.IntN(6000*97)) * time.Minute)
	wall := at.Format("2006-01-02 15:04:05")
	if g.rng.IntN(8) == 0 {
		wall = wallClocks[g.rng.IntN(len(wallClocks))]
	}
	zone := []string{"UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"}[g.rng.IntN(4)]
	switch g.rng.IntN(12) {
	case 0:
		return "'" + at.Format("2006-01-02 15:04:05+00") + "'"
	case 1:
		return "'" + wall + "'"
	case 2:
		return "'" + at.In(g.zones[g.rng.IntN(len(g.zones))]).Format("2006-01-02 15:04:05-07:00") + "'"
	case 3:
		return "TIMESTAMP '" + wall + "'"
	case 4:
		return "DATE '" + wall[:10] + "'"
	case 5:
		return "'" + wall + "'::" + []string{"TIMESTAMP", "DATE", "TIMESTAMPTZ"}[g.rng.IntN(3)]
	case 6:
		return "(TIMESTAMP '" + wall + "' AT TIME ZONE '" + zone + "')"
	case 7:
		return "(TIMESTAMPTZ '" + at.Format("2006-01-02 15:04:05+00") + "' AT TIME ZONE '" + zone + "')"
	case 8, 9:
		g.args = append(g.args, at.In(g.zones[g.rng.IntN(len(g.zones))]))
	case 10:
		g.args = append(g.args, wall)
	default:
		g.args = append(g.args, at.In(g.zones[g.rng.IntN(len(g.zones))]))
		return fmt.Sprintf("$%d::%s", len(g.args), []string{"TIMESTAMP", "DATE", "TIMESTAMPTZ"}[g.rng.IntN(3)])
	}
	return fmt.Sprintf("$%d", len(g.args))
}
