package store_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkAppendAndQuery times the store's two per-call paths on the hot
// tier: Append of a week of one channel (672 quarter-hours, each call a new
// version, so every row supersedes), and a resolved query over those rows.
// Run side by side against another build of the store to compare them; the
// CPU time per call is this process's (DuckDB and the Go code, not PostgreSQL).
func BenchmarkAppendAndQuery(b *testing.B) {
	e := open(b, nil, intervalTable(b, nil))
	week := func(version uint64) dl {
		return dl{from: day0, n: 7 * 96, value: "1.5", step: "0.001", version: version}
	}
	_, err := e.st.Append(e.ctx, mk(b, week(20260301000001)))
	require.NoError(b, err)
	b.Run("append", func(b *testing.B) {
		series := make([]dl, b.N)
		for i := range series {
			series[i] = week(20260302000001 + uint64(i))
		}
		b.ResetTimer()
		cpu := processCPU()
		for i := range b.N {
			_, err := e.st.Append(e.ctx, mk(b, series[i]))
			require.NoError(b, err)
		}
		b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(b.N*7*96)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("query", func(b *testing.B) {
		cpu := processCPU()
		for range b.N {
			res, err := e.st.Query(e.ctx, `SELECT count(*), sum(value) FROM readings WHERE malo_id = $1`, maloA)
			require.NoError(b, err)
			require.Len(b, res.Rows, 1)
		}
		b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
}

// processCPU is this process's user and system time: the Go side of a call
// (PostgreSQL runs elsewhere), steadier than wall time on a shared machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
