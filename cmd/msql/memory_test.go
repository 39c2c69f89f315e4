package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/duckstream"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

// msql serve's default memory budget is half of the machine's memory beside
// PostgreSQL's shared_buffers — not DuckDB's 80 % of the machine per database.
func TestServeMemoryBudgetLeavesPostgreSQLItsShare(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.Database(t))
	require.NoError(t, err)
	defer pool.Close()
	limit, machine, shared, ok := serverMemoryBudget(ctx, pool)
	require.True(t, ok, "Linux reports its memory")
	require.Positive(t, shared, "shared_buffers read from PostgreSQL")
	require.Greater(t, machine, shared)
	require.Equal(t, fmt.Sprintf("%dMB", max((machine-shared)/2, minMemoryBudget)/1_000_000), limit)
}

// msql serve holds its Go heap to a quarter of DuckDB's memory_limit in
// bytes, at least minGoHeapLimit, so garbage is collected before the heap
// outgrows it; GOMEMLIMIT in the environment wins. TestServePgwireAndSIGTERM
// checks serve sets it from the limit as its engine read it.
func TestServeLimitsGoHeapToItsShareOfTheBudget(t *testing.T) {
	initial := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(initial) })
	for _, c := range []struct {
		name, env string
		budget    int64
		want      int64
	}{
		{"a quarter", "", 4e9, 1_000_000_000},
		{"a quarter, binary", "", 2 << 30, 512 << 20},
		{"small budget", "", 100e6, minGoHeapLimit},
		{"GOMEMLIMIT set", "3GiB", 4e9, math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", c.env)
			debug.SetMemoryLimit(math.MaxInt64)
			limitGoHeap(c.budget)
			require.Equal(t, c.want, debug.SetMemoryLimit(-1))
		})
	}
}

// Settling the budget leaves the Go heap alone: the shell's is never held,
// and serve's is held only from the engine's reading once it is open.
func TestBudgetMemoryLeavesTheGoHeap(t *testing.T) {
	initial := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(initial) })
	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(math.MaxInt64)
	for _, serve := range []bool{false, true} {
		d := &deployment{}
		(&deployFlags{memoryLimit: "4GB", serverBudget: serve}).budgetMemory(context.Background(), d)
		require.Equal(t, "4GB", d.memory)
		require.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))
	}
}

// msql serve gives the Go heap's free memory back once per idle spell: in the
// first period that allocates less than idleAllocBytes after a busy one, not
// again while it stays idle, and again after the next busy period.
func TestGoHeapReleasedOncePerIdleSpell(t *testing.T) {
	var r goHeapIdleRelease
	var allocs uint64
	var released []bool
	for _, grew := range []uint64{100 << 20, 1 << 20, 0, 0, 50 << 20, 64 << 20, 0, idleAllocBytes, 0} {
		allocs += grew
		released = append(released, r.idle(allocs))
	}
	require.Equal(t, []bool{false, true, false, false, false, false, true, false, true}, released)
}

// An allocator that refuses to give freed memory back is a warning naming
// what it refused, and msql serve goes on serving.
func TestServeStartsWhenTheAllocatorRefuses(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	refuse := func(time.Duration) (duckstream.AllocatorSettings, error) {
		return duckstream.AllocatorSettings{}, errors.New("DuckDB's allocator (jemalloc) refused background_thread")
	}
	returnFreedMemory(log, refuse)
	require.Contains(t, logged.String(), "level=WARN")
	require.Contains(t, logged.String(), "refused background_thread")
	logged.Reset()
	returnFreedMemory(log, func(d time.Duration) (duckstream.AllocatorSettings, error) {
		return duckstream.AllocatorSettings{Jemalloc: true, DirtyDecay: d, BackgroundThreads: true}, nil
	})
	require.Contains(t, logged.String(), "level=INFO")
	require.Contains(t, logged.String(), "dirty_decay=1s")
}

// A DuckDB database's close that turned the allocator's background threads
// off is caught at the next check and logged; a check that finds them on
// says nothing, and one the allocator refuses warns.
func TestServeKeepsReturningFreedMemory(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	keepReturningFreedMemory(log, func() (bool, error) { return false, nil })
	require.Empty(t, logged.String())
	keepReturningFreedMemory(log, func() (bool, error) { return true, nil })
	require.Contains(t, logged.String(), "level=INFO")
	require.Contains(t, logged.String(), "background_threads=true")
	logged.Reset()
	keepReturningFreedMemory(log, func() (bool, error) { return false, errors.New("refused background_thread") })
	require.Contains(t, logged.String(), "level=WARN")
}
