package udf_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/udf"
)

// openDB opens an in-memory DuckDB with every function registered on every
// pooled connection.
func openDB(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := udf.Open("")
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, db.Close()) })
	return db
}

// queryOne runs q and scans its single row into dest.
func queryOne(tb testing.TB, db *sql.DB, q string, dest ...any) {
	tb.Helper()
	require.NoError(tb, db.QueryRowContext(context.Background(), q).Scan(dest...), q)
}

// queryErr runs q and returns its error, which must be a DuckDB error of
// kind Invalid Input (how a UDF error surfaces).
func queryErr(tb testing.TB, db *sql.DB, q string) *duckdb.Error {
	tb.Helper()
	var v any
	err := db.QueryRowContext(context.Background(), q).Scan(&v)
	require.Error(tb, err, q)
	var de *duckdb.Error
	require.True(tb, errors.As(err, &de), "%s: %T %v", q, err, err)
	require.Equal(tb, duckdb.ErrorTypeInvalidInput, de.Type, "%s: %v", q, err)
	return de
}
