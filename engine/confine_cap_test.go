package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/duckstream"
)

// openConfinedCount is how many confined databases the engine holds open.
func (e *Engine) openConfinedCount() int {
	e.sysMu.Lock()
	defer e.sysMu.Unlock()
	return len(e.confinedDBs)
}

// TestConfinedDatabasesCapped: one scope per tenant, more tenants than the
// cap, a statement in each — the engine never holds more confined databases
// than the cap, so their memory never exceeds the engine's budget.
func TestConfinedDatabasesCapped(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, Config{MemoryLimit: "300MB", Tables: []Table{{Config: testConfig(t), Cold: dirCold{dir: t.TempDir()}}}})
	require.NoError(t, err)
	defer e.Close()
	for i := range DefaultConfinedDatabases + 2 {
		sc, err := e.Scoped("tenant", fmt.Sprintf("t%d", i))
		require.NoError(t, err)
		conn, _, err := sc.conn(ctx)
		require.NoError(t, err)
		var n int
		require.NoError(t, conn.QueryRowContext(ctx, "SELECT 1").Scan(&n))
		require.NoError(t, conn.Close())
		require.LessOrEqual(t, e.openConfinedCount(), DefaultConfinedDatabases, "after the statement of tenant t%d", i)
	}
}

// TestConfinedDatabaseInUseStaysOpen: with a cap of two, while two scopes
// run statements both databases stay open and a third scope is refused naming
// the cap, and gets a database once the statements ended. The least recently
// used idle database is the one closed.
func TestConfinedDatabaseInUseStaysOpen(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, Config{ConfinedDatabases: 2, Tables: []Table{{Config: testConfig(t), Cold: dirCold{dir: t.TempDir()}}}})
	require.NoError(t, err)
	defer e.Close()
	scope := func(v string) *Engine {
		sc, err := e.Scoped("tenant", v)
		require.NoError(t, err)
		return sc
	}
	t1, t2, t3 := scope("t1"), scope("t2"), scope("t3")
	c1, _, err := t1.conn(ctx)
	require.NoError(t, err)
	c2, _, err := t2.conn(ctx)
	require.NoError(t, err)

	_, _, err = t3.conn(ctx)
	require.ErrorIs(t, err, ErrConfinedBusy)
	require.ErrorContains(t, err, "all 2 of them (engine.Config.ConfinedDatabases")
	var n int
	require.NoError(t, c1.QueryRowContext(ctx, "SELECT 1").Scan(&n), "a database running a statement is never closed")
	require.NoError(t, c2.QueryRowContext(ctx, "SELECT 2").Scan(&n))

	// t1 began its statement first: it is the least recently used.
	require.NoError(t, c1.Close())
	require.NoError(t, c2.Close())
	c3, _, err := t3.conn(ctx)
	require.NoError(t, err)
	defer c3.Close()
	require.Equal(t, 2, e.openConfinedCount())
	e.sysMu.Lock()
	_, t1Open := e.confinedDBs[keyOf(t1)]
	_, t2Open := e.confinedDBs[keyOf(t2)]
	e.sysMu.Unlock()
	require.False(t, t1Open, "t1, used least recently, was closed")
	require.True(t, t2Open)
}

func keyOf(e *Engine) string { return e.confinedKey() }

// TestMemoryLimitAsDuckDBReadsIt: Config.MemoryLimit in DuckDB's notations
// reads back in bytes, to the tenth of the unit DuckDB prints it in; unset,
// it is DuckDB's default, a share of the machine.
func TestMemoryLimitAsDuckDBReadsIt(t *testing.T) {
	ctx := context.Background()
	for limit, want := range map[string]int64{"512MiB": 512 << 20, "4GB": 4e9, "1.5 GiB": 3 << 29, "300MB": 300e6, "": 0} {
		t.Run(limit, func(t *testing.T) {
			e, err := Open(ctx, Config{MemoryLimit: limit, Tables: []Table{{Config: testConfig(t), Cold: dirCold{dir: t.TempDir()}}}})
			require.NoError(t, err)
			defer e.Close()
			got, err := e.MemoryLimit(ctx)
			require.NoError(t, err)
			if want == 0 {
				require.Greater(t, got, int64(1<<30), "DuckDB's default, a share of the machine")
				return
			}
			require.InEpsilon(t, want, got, 0.02, "%q read back as %d bytes", limit, got)
		})
	}
}

// TestConfinedCloseLeavesFreedMemoryReturned: opening a confined database and
// closing one to make room (DuckDB's open and close turn its allocator's
// background threads off for the whole process) leave the threads a server
// turned on running, so what
// the other databases free still goes back to the system while it idles.
func TestConfinedCloseLeavesFreedMemoryReturned(t *testing.T) {
	ctx := context.Background()
	_, err := duckstream.ReturnFreedMemory(time.Second)
	require.NoError(t, err)
	e, err := Open(ctx, Config{ConfinedDatabases: 1, Tables: []Table{{Config: testConfig(t), Cold: dirCold{dir: t.TempDir()}}}})
	require.NoError(t, err)
	defer e.Close()
	for _, tenant := range []string{"t1", "t2"} {
		sc, err := e.Scoped("tenant", tenant)
		require.NoError(t, err)
		conn, _, err := sc.conn(ctx)
		require.NoError(t, err)
		require.NoError(t, conn.Close())
	}
	got, err := duckstream.Allocator()
	require.NoError(t, err)
	if got.Jemalloc {
		require.True(t, got.BackgroundThreads, "t1's database was opened, then closed to make room for t2's")
	}
}
