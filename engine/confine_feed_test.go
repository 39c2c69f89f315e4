package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/testkit"
)

// TestConfinedRowsAsUnscoped: a scoped session, whose cold rows are fed from
// the engine's database, answers every column of every row exactly as the
// unscoped session naming the tenant does — values, instants and versions.
func TestConfinedRowsAsUnscoped(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(43)
	w.MaLos, w.Days, w.Tenants = 4, 4, 2
	a := newArchivedStore(t, w)
	scoped, err := a.s.Engine.Scoped("tenant", "tenant01")
	require.NoError(t, err)
	for _, q := range []string{
		`SELECT * FROM readings%s ORDER BY ALL`,
		`SELECT * FROM readings_versions%s ORDER BY ALL`,
		`SELECT malo_id, "from", value FROM readings WHERE "from" >= TIMESTAMPTZ '2025-10-21 00:00:00+00'%s ORDER BY ALL`,
	} {
		got, err := scoped.Query(ctx, fmt.Sprintf(q, ""))
		require.NoError(t, err, q)
		cond := " WHERE tenant = 'tenant01'"
		if len(q) > 60 {
			cond = " AND tenant = 'tenant01'"
		}
		want, err := a.s.Engine.Query(ctx, fmt.Sprintf(q, cond))
		require.NoError(t, err, q)
		require.NotEmpty(t, want.Rows, q)
		require.Equal(t, len(want.Rows), len(got.Rows), q)
		for i := range want.Rows {
			require.Equal(t, fmt.Sprint(want.Rows[i]), fmt.Sprint(got.Rows[i]), "%s: row %d", q, i)
		}
	}
}

// TestConfinedFedStreamsAsUnscoped: a cold half of many files is fed as
// several relations run at once on the scan's threads; the rows are still
// exactly the unscoped session's naming the tenant, aggregates and all.
func TestConfinedFedStreamsAsUnscoped(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(44)
	w.MaLos, w.Days, w.Tenants = 4, 40, 2
	a := newArchivedStore(t, w)
	scoped, err := a.s.Engine.Scoped("tenant", "tenant01")
	require.NoError(t, err)
	x, err := scoped.Explain(ctx, `SELECT count(*) FROM readings`)
	require.NoError(t, err)
	t.Log(x)
	require.Contains(t, x, "fed as ")
	for _, q := range []string{
		`SELECT * FROM readings%s ORDER BY ALL`,
		`SELECT "from", value FROM readings_versions%s ORDER BY ALL`,
		`SELECT malo_id, count(*), sum(value) FROM readings%s GROUP BY ALL ORDER BY ALL`,
		`SELECT count(*) FROM readings%s`,
	} {
		got, err := scoped.Query(ctx, fmt.Sprintf(q, ""))
		require.NoError(t, err, q)
		want, err := a.s.Engine.Query(ctx, fmt.Sprintf(q, " WHERE tenant = 'tenant01'"))
		require.NoError(t, err, q)
		require.NotEmpty(t, want.Rows, q)
		require.Equal(t, len(want.Rows), len(got.Rows), q)
		for i := range want.Rows {
			require.Equal(t, fmt.Sprint(want.Rows[i]), fmt.Sprint(got.Rows[i]), "%s: row %d", q, i)
		}
	}
}
