package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
)

// TestReferenceClausesKeepNumbers: a clause on readings is applied to the
// resolved relation or refused, never dropped. TABLESAMPLE samples the
// resolved rows (so a sample larger than the relation is the resolved count,
// not the versions' count, and no key repeats in it); AT (VERSION => …) and
// AT (TIMESTAMP => …) are refused, naming the clause and what to use.
func TestReferenceClausesKeepNumbers(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(36)
	w.MaLos, w.Tenants, w.CorrectionRate = 4, 1, 0.3
	a := newArchivedStore(t, w)
	a.deliverCorrections(t)
	eng := a.s.Engine
	resolved := a.oracle.RowCount(time.Time{}, time.Time{})
	versions := a.oracle.RawRowCount(time.Time{}, time.Time{})
	require.Greater(t, versions, resolved, "the workload restates some readings")

	count := func(q string) int64 {
		t.Helper()
		res, err := eng.Query(ctx, q)
		require.NoError(t, err, q)
		require.Len(t, res.Rows, 1)
		n, ok := res.Rows[0][0].(int64)
		require.True(t, ok, "%T", res.Rows[0][0])
		return n
	}
	require.EqualValues(t, resolved, count(`SELECT count(*) FROM readings`))
	require.EqualValues(t, 5, count(`SELECT count(*) FROM readings TABLESAMPLE 5 ROWS`))
	require.EqualValues(t, 5, count(`SELECT count(*) FROM readings AS r(a, b) TABLESAMPLE 5 ROWS WHERE r.a IS NOT NULL`))
	require.EqualValues(t, resolved, count(`SELECT count(*) FROM readings TABLESAMPLE 1000000 ROWS`),
		"a sample larger than the relation holds every resolved row, once")
	require.EqualValues(t, versions, count(`SELECT count(*) FROM readings_versions TABLESAMPLE 1000000 ROWS`))
	sampled := count(`SELECT count(*) FROM readings TABLESAMPLE 50% (bernoulli, 7)`)
	require.Positive(t, sampled)
	require.Less(t, sampled, int64(resolved))
	require.Zero(t, count(`SELECT count(*) FROM (SELECT malo_id, obis_code, "from", version_scope FROM readings TABLESAMPLE 60% (bernoulli, 3)
		GROUP BY ALL HAVING count(*) > 1)`), "a sampled key repeats: the sample was taken before resolution")
	require.Zero(t, count(`SELECT count(*) FROM (SELECT * FROM readings TABLESAMPLE 60% (bernoulli, 3)) s
		ANTI JOIN readings r USING (malo_id, obis_code, "from", version_scope, version)`),
		"a sampled row is not the resolved one")

	for _, q := range []string{
		`SELECT count(*) FROM readings AT (VERSION => 1)`,
		`SELECT count(*) FROM readings_versions AT (VERSION => 20250101000001)`,
		`SELECT count(*) FROM readings AT (TIMESTAMP => TIMESTAMPTZ '2020-01-01 00:00:00+00')`,
		`SELECT count(*) FROM (SELECT 1) s, readings r AT (TIMESTAMP => now())`,
	} {
		res, err := eng.Query(ctx, q)
		if err == nil {
			t.Errorf("%s answered %v, want a refusal", q, res.Rows)
			continue
		}
		require.ErrorIs(t, err, engine.ErrReferenceClause, q)
		require.ErrorContains(t, err, "AT (", q)
	}
}

// TestColumnAliasesNeverMoveABound: a column alias list on readings that
// gives a column the name of another of the relation's columns is refused —
// the planner reads bounds and equalities by column name, so "from" standing
// for the relation's "to" would prune by the wrong column and answer short
// without an error. Aliases that name no column of the relation, and the
// same renaming in an outer query, answer as written.
func TestColumnAliasesNeverMoveABound(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(37)
	w.MaLos, w.Tenants = 3, 1
	a := newArchivedStore(t, w)
	eng := a.s.Engine
	count := func(q string) int64 {
		t.Helper()
		res, err := eng.Query(ctx, q)
		require.NoError(t, err, q)
		require.Len(t, res.Rows, 1)
		n, ok := res.Rows[0][0].(int64)
		require.True(t, ok, "%T", res.Rows[0][0])
		return n
	}
	at := "TIMESTAMPTZ '" + a.cut.UTC().Format("2006-01-02 15:04:05") + "+00'"
	toFrom := count(`SELECT count(*) FROM readings WHERE "to" >= ` + at)
	fromFrom := count(`SELECT count(*) FROM readings WHERE "from" >= ` + at)
	require.Greater(t, toFrom, fromFrom, "intervals end at the watermark")
	var obis string
	res, err := eng.Query(ctx, `SELECT min(obis_code) FROM readings`)
	require.NoError(t, err)
	obis = res.Rows[0][0].(string)

	for _, q := range []string{
		`SELECT count(*) FROM readings AS r(a, b, c, d, "to", "from") WHERE "from" >= ` + at,
		`SELECT count(*) FROM readings_versions r(a, b, c, d, "TO", "FROM") WHERE r."from" >= ` + at,
		`SELECT count(*) FROM readings AS r(obis_code, b, malo_id) WHERE malo_id = '` + obis + `'`,
		`SELECT count(*) FROM (SELECT 1 AS k) s JOIN readings AS r(a, b, c, d, "to", "from") ON true WHERE r."from" >= ` + at,
	} {
		res, err := eng.Query(ctx, q)
		if err == nil {
			t.Errorf("%s answered %v, want a refusal", q, res.Rows)
			continue
		}
		require.ErrorIs(t, err, engine.ErrReferenceClause, q)
		require.ErrorContains(t, err, "column alias", q)
	}
	require.EqualValues(t, toFrom, count(`SELECT count(*) FROM (SELECT * FROM readings) AS r(a, b, c, d, "to", "from") WHERE "from" >= `+at))
	require.EqualValues(t, fromFrom, count(`SELECT count(*) FROM readings AS r(a, b, c, d, f) WHERE f >= `+at))
	require.EqualValues(t, fromFrom, count(`SELECT count(*) FROM readings AS r(malo_id, m, obis_code) WHERE "from" >= `+at))
}

// TestRenamedColumnIsNotTheReferences: a column an alias list renamed away
// is no longer the reference's, so a name in the statement that spells it
// binds elsewhere — here to the outer query's column — and must neither bound
// nor prune the reference, nor become its stored balancing day.
func TestRenamedColumnIsNotTheReferences(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(38)
	w.MaLos, w.Tenants = 2, 1
	a := newArchivedStore(t, w)
	eng := a.s.Engine
	for _, c := range []struct{ q, want string }{
		{`SELECT count(*) FROM (SELECT TIMESTAMPTZ '2031-01-01 00:00:00+00' AS "from") o
			WHERE EXISTS (SELECT 1 FROM readings AS r(a, b, c, d, f) WHERE "from" >= TIMESTAMPTZ '2030-01-01 00:00:00+00')`, "1"},
		{`SELECT count(*) FROM (SELECT TIMESTAMPTZ '2031-01-01 00:00:00+00' AS "from", 'x' AS malo_id) o
			WHERE EXISTS (SELECT 1 FROM readings AS r(m, b, c, d, f) WHERE malo_id = 'x')`, "1"},
		{`SELECT count(*) FROM (SELECT DATE '2031-01-01' AS balancing_day) o
			WHERE EXISTS (SELECT 1 FROM readings AS r(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o2, p, bd) WHERE balancing_day = DATE '2031-01-01')`, "1"},
		{`SELECT count(*) FROM (SELECT TIMESTAMPTZ '2031-01-01 00:00:00+00' AS "from", 'STROM' AS sparte) o
			WHERE EXISTS (SELECT 1 FROM readings AS r(a, b, c, s, f) WHERE meter_balancing_day("from", sparte) = DATE '2031-01-01')`, "1"},
	} {
		res, err := eng.Query(ctx, c.q)
		require.NoError(t, err, c.q)
		require.Len(t, res.Rows, 1)
		if got := fmt.Sprint(res.Rows[0][0]); got != c.want {
			t.Errorf("%s answered %s, want %s", c.q, got, c.want)
		}
	}
}
