package udf_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStringResultPastTheMemoryLimitFailsTheStatement: a VARCHAR result
// longer than 12 bytes is copied into the vector's string heap, an
// allocation DuckDB refuses by throwing once the database is at its
// memory_limit. Thrown across the function's Go callback, the exception
// aborted the process. The memory_limit is lowered step by step onto what
// eic_normalise's scan needs, so that at some step the result's allocation is
// the one refused: the statement fails with DuckDB's Out of Memory error,
// named by the function, and the database answers the next statement.
func TestStringResultPastTheMemoryLimitFailsTheStatement(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	db.SetMaxOpenConns(1) // the SETs and the queries share one connection
	for _, q := range []string{"SET threads = 1", "SET temp_directory = ''",
		`CREATE TABLE t AS SELECT ['10YDE-RWENET---I', '10X---ENTSOE---L', '11YR000000011247'][1 + i % 3] AS s FROM range(20000) t(i)`} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	const query = `SELECT count(eic_normalise(s)) FROM t`
	var refused []string
	for kb := 64; kb <= 4096; kb += 8 {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("SET memory_limit = '%dKB'", kb)); err != nil {
			continue // below what the table itself holds
		}
		var n int64
		err := db.QueryRowContext(ctx, query).Scan(&n)
		if err == nil {
			require.EqualValues(t, 20000, n)
			break
		}
		require.ErrorContains(t, err, "Out of Memory", "at memory_limit %d KB", kb)
		if strings.Contains(err.Error(), "eic_normalise: result string of 16 bytes") {
			refused = append(refused, fmt.Sprintf("%d KB", kb))
		}
	}
	require.NotEmpty(t, refused, "no memory_limit step refused eic_normalise's result itself")
	t.Logf("eic_normalise's result refused at memory_limit %v", refused)

	_, err := db.ExecContext(ctx, "SET memory_limit = '64MB'")
	require.NoError(t, err)
	var n int64
	require.NoError(t, db.QueryRowContext(ctx, query).Scan(&n), "the database goes on")
	require.EqualValues(t, 20000, n)
}
