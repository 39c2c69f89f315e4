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
