package main

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

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

// msql serve holds its Go heap to a quarter of the memory budget it settled,
// so garbage is collected before the heap outgrows it; the shell is not held,
// and GOMEMLIMIT in the environment wins.
func TestServeLimitsGoHeapToItsShareOfTheBudget(t *testing.T) {
	initial := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(initial) })
	for _, c := range []struct {
		name, env, budget string
		serve             bool
		want              int64
	}{
		{"serve", "", "4GB", true, 1_000_000_000},
		{"serve, binary unit", "", "2GiB", true, 512 << 20},
		{"serve, small budget", "", "100MB", true, minGoHeapLimit},
		{"serve, GOMEMLIMIT set", "3GiB", "4GB", true, math.MaxInt64},
		{"the shell", "", "4GB", false, math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", c.env)
			debug.SetMemoryLimit(math.MaxInt64)
			f := &deployFlags{memoryLimit: c.budget, serverBudget: c.serve}
			f.budgetMemory(context.Background(), &deployment{})
			require.Equal(t, c.want, debug.SetMemoryLimit(-1))
		})
	}
}

// sizeBytes reads memory_limit as DuckDB does, and refuses what is not a size.
func TestSizeBytes(t *testing.T) {
	for in, want := range map[string]int64{"4GB": 4e9, "512 MiB": 512 << 20, "1.5gb": 1.5e9, "100000 bytes": 100_000, "2TiB": 2 << 40, "64KB": 64_000} {
		got, err := sizeBytes(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "GB", "4", "4 parsecs", "-1GB", "0MB"} {
		_, err := sizeBytes(in)
		require.Error(t, err, in)
	}
}
