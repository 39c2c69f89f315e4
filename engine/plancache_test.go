package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
)

// A statement run again is served the plan made for it — and planned anew
// as soon as anything the plan was derived from differs: the arguments, the
// session's view (scope, as-known-at, read mode), the table's snapshot, the
// watermark. Each answer is checked against the oracle, so a plan served
// stale shows as a wrong count or sum, not only as a flag.
func TestPlanReuse(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(31)
	w.MaLos, w.Tenants, w.CorrectionRate = 6, 2, 0.3
	a := newArchivedStore(t, w)
	eng := a.s.Engine
	all := time.Time{}
	const q = `SELECT count(*), sum(value) FROM readings WHERE "from" >= $1`
	lo := a.batch.Days[0].Time()
	run := func(t *testing.T, e *engine.Engine, view testkit.View, from time.Time) *engine.Provenance {
		t.Helper()
		res, err := e.Query(ctx, q, from)
		require.NoError(t, err)
		require.EqualValues(t, view.RowCount(from, all), res.Rows[0][0])
		require.True(t, view.Sum(from, all).Equal(decimalOf(t, res.Rows[0][1])), "sum %v want %s", res.Rows[0][1], view.Sum(from, all))
		return res.Provenance
	}

	require.False(t, run(t, eng, a.oracle.Current(), lo).Reused, "the first run plans")
	prov := run(t, eng, a.oracle.Current(), lo)
	require.True(t, prov.Reused, "the same statement, arguments and tiers reuse the plan")
	require.True(t, prov.SpansTiers())
	explain, err := eng.Explain(ctx, q, lo)
	require.NoError(t, err)
	require.Contains(t, explain, "plan: reused")

	t.Run("other arguments", func(t *testing.T) {
		later := a.batch.Days[len(a.batch.Days)-1].Time()
		require.False(t, run(t, eng, a.oracle.Current(), later).Reused)
	})
	t.Run("another view", func(t *testing.T) {
		knownAt := a.batch.Deliveries[len(a.batch.Deliveries)/2].Arrival
		require.False(t, run(t, eng.AsKnownAt(knownAt), a.oracle.With(testkit.Ceiling{KnownAt: knownAt}), lo).Reused)
		hist, err := eng.InReadMode(engine.Historical)
		require.NoError(t, err)
		res, err := hist.Query(ctx, q, lo)
		require.NoError(t, err)
		require.False(t, res.Provenance.Reused)
		require.Equal(t, engine.Cold, res.Provenance.Tiers)
		require.EqualValues(t, a.oracle.Current().RowCount(lo, a.cut), res.Rows[0][0])
	})
	t.Run("another scope", func(t *testing.T) {
		scoped, err := eng.Scoped("tenant", "tenant01")
		require.NoError(t, err)
		for run := range 2 {
			res, err := scoped.Query(ctx, q, lo)
			require.NoError(t, err)
			want, err := eng.Query(ctx, q+` AND tenant = 'tenant01'`, lo)
			require.NoError(t, err)
			require.Equal(t, want.Rows, res.Rows)
			require.Equal(t, run == 1, res.Provenance.Reused, "run %d: the scoped session plans its own statement, then reuses it", run)
		}
	})
	t.Run("the snapshot moves", func(t *testing.T) {
		snap := a.tbl.Cold.CurrentSnapshotID()
		a.deliverCorrections(t)
		require.NotEqual(t, snap, a.tbl.Cold.CurrentSnapshotID(), "corrections below the watermark commit a snapshot")
		require.False(t, run(t, eng, a.oracle.Current(), lo).Reused)
		require.True(t, run(t, eng, a.oracle.Current(), lo).Reused)
	})
	t.Run("the watermark moves", func(t *testing.T) {
		last := a.batch.Days[len(a.batch.Days)-1]
		out, err := a.tbl.Archiver.Archive(ctx, last.Time().Add(a.cfg.SettlementLag()), 0)
		require.NoError(t, err)
		require.True(t, out.Watermark.After(a.cut), "the archival moved the watermark past %s: %s", a.cut, out.Watermark)
		prov := run(t, eng, a.oracle.Current(), lo)
		require.False(t, prov.Reused)
		require.True(t, prov.Watermark.Equal(out.Watermark))
		require.True(t, run(t, eng, a.oracle.Current(), lo).Reused)
	})
}
