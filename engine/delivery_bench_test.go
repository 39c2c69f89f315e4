package engine_test

import (
	"context"
	"database/sql"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// deliveryRows is how many rows BenchmarkRowDelivery hands out per statement.
const deliveryRows = 200_000

// deliverySQL generates deliveryRows rows of the readings shape (text keys,
// TIMESTAMPTZ bounds, DECIMAL(18,6) values of both signs, a version) from no
// relation, so DuckDB's cost is small and the same for every reader, and
// what differs is handing the rows to the client.
const deliverySQL = `SELECT 'DE' || lpad((i % 60)::VARCHAR, 9, '0') AS malo_id, '1-1:1.29.0' AS obis_code,
	TIMESTAMPTZ '2025-01-01 00:00:00+00' + i * INTERVAL 15 MINUTE AS "from",
	TIMESTAMPTZ '2025-01-01 00:15:00+00' + i * INTERVAL 15 MINUTE AS "to",
	(((i * 7919) % 2000000 - 1000000) / 1000)::DECIMAL(18,6) AS value,
	'E' AS quality, (i % 3)::BIGINT AS version
	FROM (SELECT unnest(generate_series(0, 199999)) AS i)`

// BenchmarkRowDelivery is the Go cost of handing rows of the readings shape
// to a client: through Engine.Query (every row kept), Engine.Cursor (rows
// read one by one), and — the floor — duckdb-go's own database/sql rows
// scanned into one reused row, as benchmarks/ reads a peer's rows.
// allocs/row and B/row count every allocation of the process while the
// statements run, so they do not depend on the machine's load; ns/row does.
//
//	go test -run '^$' -bench RowDelivery -benchmem ./engine/
func BenchmarkRowDelivery(b *testing.B) {
	w := testkit.Workload{Seed: 7, MaLos: 1, Days: 1}
	s := storetest.Start(b, storetest.Options{}, w.IntervalTable("readings_versions").MustBuild())
	ctx := context.Background()
	const q = deliverySQL
	perRow := func(b *testing.B, deliver func() int) {
		var rows int
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for b.Loop() {
			rows += deliver()
		}
		runtime.ReadMemStats(&after)
		require.Equal(b, b.N*deliveryRows, rows)
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(rows), "allocs/row")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(rows), "B/row")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
	}
	b.Run("query", func(b *testing.B) {
		perRow(b, func() int {
			res, err := s.Engine.Query(ctx, q)
			require.NoError(b, err)
			return len(res.Rows)
		})
	})
	b.Run("cursor", func(b *testing.B) {
		perRow(b, func() int {
			c, err := s.Engine.Cursor(ctx, 1000, q)
			require.NoError(b, err)
			n := 0
			for c.Next() {
				n++
			}
			require.NoError(b, c.Close())
			return n
		})
	})
	b.Run("database-sql", func(b *testing.B) {
		perRow(b, func() int { return scanReused(b, s.Engine.DB(), q) })
	})
}

// scanReused reads q's rows through database/sql into one reused row and
// counts them.
func scanReused(tb testing.TB, db *sql.DB, q string) int {
	rows, err := db.QueryContext(context.Background(), q)
	require.NoError(tb, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(tb, err)
	vals, ptrs := make([]any, len(cols)), make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		require.NoError(tb, rows.Scan(ptrs...))
		n++
	}
	require.NoError(tb, rows.Err())
	return n
}
