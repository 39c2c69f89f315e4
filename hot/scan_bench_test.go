package hot_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"meterstore"
	"meterstore/hot"
)

// BenchmarkScanVsCopyOut: the keyset-paged Scan against COPY (SELECT …) TO STDOUT
// (FORMAT binary) of the same rows.
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
	copySQL := fmt.Sprintf(`COPY (SELECT %s FROM readings_versions) TO STDOUT (FORMAT binary)`,
		meterstore.QuoteIdents(st.Config().ColumnNames()))
	var scanDur, copyDur time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		n := 0
		require.NoError(b, st.Scan(ctx, hot.ScanRequest{}, func(p []meterstore.Row) error { n += len(p); return nil }))
		require.Equal(b, total, n)
		t1 := time.Now()
		conn, err := pool.Acquire(ctx)
		require.NoError(b, err)
		tag, err := conn.Conn().PgConn().CopyTo(ctx, io.Discard, copySQL)
		conn.Release()
		require.NoError(b, err)
		require.Equal(b, int64(total), tag.RowsAffected())
		copyDur += time.Since(t1)
		scanDur += t1.Sub(t0)
	}
	b.StopTimer()
	s := float64(total*b.N) / scanDur.Seconds()
	c := float64(total*b.N) / copyDur.Seconds()
	b.ReportMetric(s, "scan_rows/s")
	b.ReportMetric(c, "copy_rows/s")
	b.ReportMetric(s/c, "scan/copy")
}
