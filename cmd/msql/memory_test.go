package main

import (
	"context"
	"fmt"
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
