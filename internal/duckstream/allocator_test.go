//go:build linux && cgo && (amd64 || arm64)

package duckstream

import (
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// DuckDB's allocator takes the decay and the background threads, and reports
// them back as set: memory freed by DuckDB goes back to the system a decay
// later whether or not DuckDB allocates again.
func TestReturnFreedMemorySetsDuckDBsAllocator(t *testing.T) {
	for _, decay := range []time.Duration{2 * time.Second, time.Second} {
		got, err := ReturnFreedMemory(decay)
		require.NoError(t, err)
		require.Equal(t, AllocatorSettings{Jemalloc: true, DirtyDecay: decay, MuzzyDecay: 0, BackgroundThreads: true}, got)
	}
}

// Pages DuckDB freed that the allocator still holds (a decay of an hour
// keeps them) go back to the system when purged: the allocator's resident
// bytes fall to about what it has allocated.
func TestPurgeFreedMemoryReturnsWhatDuckDBFreed(t *testing.T) {
	_, err := ReturnFreedMemory(time.Hour)
	require.NoError(t, err)
	defer ReturnFreedMemory(time.Second)
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE t AS SELECT i, repeat('x', 100) AS s FROM range(1000000) t(i)`)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`DROP TABLE t`)
	require.NoError(t, err)
	allocated, held, err := AllocatorUse()
	require.NoError(t, err)
	require.Greater(t, held-allocated, int64(32<<20), "the freed table's pages are still resident")

	require.NoError(t, PurgeFreedMemory())
	_, purged, err := AllocatorUse()
	require.NoError(t, err)
	t.Logf("allocated %d MiB; resident %d MiB before the purge, %d MiB after", allocated>>20, held>>20, purged>>20)
	require.Less(t, purged-allocated, (held-allocated)/4, "a purge returns the freed pages")
}

// Any DuckDB database that opens or closes turns the allocator's background
// threads off for the whole process; KeepReturningFreedMemory turns them on again
// with the decay ReturnFreedMemory set, and leaves them alone while they run.
func TestKeepReturningFreedMemoryAfterADatabaseCloses(t *testing.T) {
	_, err := ReturnFreedMemory(time.Second)
	require.NoError(t, err)
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	_, err = db.Exec(`SELECT 42`)
	require.NoError(t, err)
	got, err := Allocator()
	require.NoError(t, err)
	require.False(t, got.BackgroundThreads, "DuckDB's open turned the background threads off")
	on, err := KeepReturningFreedMemory()
	require.NoError(t, err)
	require.True(t, on)
	require.NoError(t, db.Close())
	got, err = Allocator()
	require.NoError(t, err)
	require.False(t, got.BackgroundThreads, "DuckDB's close turned the background threads off")

	on, err = KeepReturningFreedMemory()
	require.NoError(t, err)
	require.True(t, on)
	got, err = Allocator()
	require.NoError(t, err)
	require.Equal(t, AllocatorSettings{Jemalloc: true, DirtyDecay: time.Second, MuzzyDecay: 0, BackgroundThreads: true}, got)
	on, err = KeepReturningFreedMemory()
	require.NoError(t, err)
	require.False(t, on, "running threads are left alone")
}
