package hot_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
)

// BenchmarkScanVsCopyOut: the paged Scan against COPY (SELECT …) TO STDOUT
// (FORMAT binary) of the same rows — in storage order (the engine's scan, against
// COPY of the plain SELECT) and in primary-key order (the archiver's scan, against
// COPY of the same SELECT … ORDER BY the primary key).
func BenchmarkScanVsCopyOut(b *testing.B) {
	ctx := context.Background()
	st, pool := newStore(b, meterstore.TableSpec{Name: "readings_versions"})
	const versions = 10
	for v := uint64(1); v <= versions; v++ {
		_, err := st.Write(ctx, benchRows(20260310000000+v))
		require.NoError(b, err)
	}
	_, err := pool.Exec(ctx, "VACUUM ANALYZE readings_versions")
	require.NoError(b, err)
	total := versions * benchBatch
	cols := meterstore.QuoteIdents(st.Config().ColumnNames())
	copySQL := fmt.Sprintf(`COPY (SELECT %s FROM readings_versions) TO STDOUT (FORMAT binary)`, cols)
	copyOrderedSQL := fmt.Sprintf(`COPY (SELECT %s FROM readings_versions ORDER BY %s) TO STDOUT (FORMAT binary)`,
		cols, meterstore.QuoteIdents(st.Config().PrimaryKey()))
	scan := func(unordered bool) time.Duration {
		t0 := time.Now()
		n := 0
		require.NoError(b, st.Scan(ctx, hot.ScanRequest{Unordered: unordered}, func(p []meterstore.Row) error { n += len(p); return nil }))
		require.Equal(b, total, n)
		return time.Since(t0)
	}
	copyOut := func(sql string) time.Duration {
		t0 := time.Now()
		conn, err := pool.Acquire(ctx)
		require.NoError(b, err)
		tag, err := conn.Conn().PgConn().CopyTo(ctx, io.Discard, sql)
		conn.Release()
		require.NoError(b, err)
		require.Equal(b, int64(total), tag.RowsAffected())
		return time.Since(t0)
	}
	var unorderedDur, copyDur, orderedDur, copyOrderedDur time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		unorderedDur += scan(true)
		copyDur += copyOut(copySQL)
		orderedDur += scan(false)
		copyOrderedDur += copyOut(copyOrderedSQL)
	}
	b.StopTimer()
	rate := func(d time.Duration) float64 { return float64(total*b.N) / d.Seconds() }
	b.ReportMetric(rate(unorderedDur), "scan_rows/s")
	b.ReportMetric(rate(copyDur), "copy_rows/s")
	b.ReportMetric(rate(unorderedDur)/rate(copyDur), "scan/copy")
	b.ReportMetric(rate(orderedDur)/rate(copyOrderedDur), "ordered_scan/ordered_copy")
	b.ReportMetric(rate(orderedDur)/rate(copyDur), "ordered_scan/copy")
}
