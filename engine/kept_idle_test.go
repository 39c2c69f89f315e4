package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/duckstream"
	"github.com/meterstore/meterstore/testkit"
)

// TestIdleKeptStatementsAreClosed: runs of one plan going at once each keep
// a statement of their own when they end (one per run, on a connection of
// its own) — a burst of concurrent clients leaves as many kept. The
// database's own account shows them (HeldMemory); closing those idle since a
// cut-off leaves the ones used after it, and closing them all gives DuckDB's
// allocator their memory back. The plan still answers, preparing anew.
func TestIdleKeptStatementsAreClosed(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(0x4A)
	w.MaLos, w.Tenants = 4, 2
	a := newArchivedStore(t, w)
	eng := a.s.Engine
	lo := a.batch.Days[0].Time()
	want := tenantAnswer(t, eng, "tenant01", lo)
	sc, err := eng.Scoped("tenant", "tenant01")
	require.NoError(t, err)

	const atOnce = 8
	runAtOnce(t, atOnce, func() (*engine.Rows, error) { return sc.Rows(ctx, spanningCount, lo) })
	require.Len(t, engine.MainStatementsKept(sc), atOnce, "one statement kept per run that went at once")
	require.Equal(t, atOnce, keptIn(t, eng, "confined scope=tenant=tenant01"))
	before, _, err := duckstream.AllocatorUse()
	require.NoError(t, err)

	require.Zero(t, eng.CloseIdleStatements(time.Hour), "none idled for an hour")
	require.Len(t, engine.MainStatementsKept(sc), atOnce)
	closed := eng.CloseIdleStatements(0)
	require.GreaterOrEqual(t, closed, atOnce)
	require.Empty(t, engine.MainStatementsKept(sc))
	require.Empty(t, engine.FedStatementsKept(eng))
	require.Zero(t, keptIn(t, eng, "confined scope=tenant=tenant01"))
	after, _, err := duckstream.AllocatorUse()
	require.NoError(t, err)
	t.Logf("closing %d kept statements (%d of the confined database) freed %d KiB of DuckDB's allocations (%d → %d KiB)",
		closed, atOnce, (before-after)>>10, before>>10, after>>10)
	require.Less(t, after, before, "closing the kept statements gave DuckDB's allocator nothing back")

	res, err := scopedAnswer(eng, "tenant01", lo)
	require.NoError(t, err)
	require.Equal(t, want, res.Rows)
	require.Len(t, engine.MainStatementsKept(sc), 1)
}

// keptIn is how many statements the database labelled label keeps, as
// HeldMemory reports it.
// runAtOnce opens n runs of a one-row statement before reading any, so they
// run at once, then reads and closes each.
func runAtOnce(t *testing.T, n int, open func() (*engine.Rows, error)) {
	t.Helper()
	var rows []*engine.Rows
	for range n {
		r, err := open()
		require.NoError(t, err)
		rows = append(rows, r)
	}
	for _, r := range rows {
		require.True(t, r.Next(), r.Err())
		require.False(t, r.Next())
		require.NoError(t, r.Close())
	}
}

func keptIn(t *testing.T, e *engine.Engine, label string) int {
	t.Helper()
	held, err := e.HeldMemory(context.Background())
	require.NoError(t, err)
	require.Equal(t, "engine", held[0].Database)
	for _, m := range held {
		require.NotEmpty(t, m.Tags, "%s: duckdb_memory() lists its tags", m.Database)
		if m.Database == label {
			return m.KeptStatements
		}
	}
	t.Fatalf("no database %q in %+v", label, held)
	return 0
}
