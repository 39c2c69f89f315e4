package udf_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/udf"
)

// TestRegisterVisibleOnOtherConnection registers once, by hand, on one
// connection of a plain DuckDB pool and calls the functions from a second:
// DuckDB keeps them in the database's system catalog.
func TestRegisterVisibleOnOtherConnection(t *testing.T) {
	ctx := context.Background()
	c, err := duckdb.NewConnector("", nil)
	require.NoError(t, err)
	db := sql.OpenDB(c)
	t.Cleanup(func() { require.NoError(t, db.Close()) })

	c1, err := db.Conn(ctx)
	require.NoError(t, err)
	defer c1.Close()
	require.NoError(t, udf.Register(c1))
	require.NoError(t, udf.Register(c1), "registering again replaces")

	c2, err := db.Conn(ctx)
	require.NoError(t, err)
	defer c2.Close()
	var d time.Time
	require.NoError(t, c2.QueryRowContext(ctx, `SELECT meter_gas_day(TIMESTAMPTZ '2026-03-29 03:00:00+00')`).Scan(&d))
	require.Equal(t, "2026-03-28", d.Format(time.DateOnly))
}

// TestOpenRegistersOnEveryPooledConnection holds several connections of an
// Open pool at once, so each is a distinct driver connection, and calls
// every function name on each.
func TestOpenRegistersOnEveryPooledConnection(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	var conns []*sql.Conn
	for range 3 {
		c, err := db.Conn(ctx)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	for i, c := range conns {
		var n int
		require.NoError(t, c.QueryRowContext(ctx, `SELECT count(DISTINCT function_name) FROM duckdb_functions()
			WHERE list_contains(string_split(?, ','), function_name)`, strings.Join(udf.Names(), ",")).Scan(&n))
		require.Equal(t, len(udf.Names()), n, "conn %d", i)
		var ok bool
		require.NoError(t, c.QueryRowContext(ctx, `SELECT obis_is_import('1-0:1.8.0')`).Scan(&ok))
		require.True(t, ok)
	}
	for _, c := range conns {
		require.NoError(t, c.Close())
	}
	require.Len(t, udf.Names(), 24)
}

// TestDeterministicFolding checks the functions are not volatile: a call
// over a constant is folded at plan time, so EXPLAIN shows the value.
func TestDeterministicFolding(t *testing.T) {
	db := openDB(t)
	rows, err := db.QueryContext(context.Background(),
		`EXPLAIN SELECT i FROM range(10) r(i) WHERE obis_normalise('1-0:1.8.0*255') = '1-0:1.8.0' AND meter_gas_day(TIMESTAMPTZ '2026-03-29 03:00:00+00') = DATE '2026-03-28'`)
	require.NoError(t, err)
	defer rows.Close()
	var plan string
	for rows.Next() {
		var k, v string
		require.NoError(t, rows.Scan(&k, &v))
		plan += v
	}
	require.NoError(t, rows.Err())
	require.NotContains(t, plan, "obis_normalise")
	require.NotContains(t, plan, "meter_gas_day")
}
