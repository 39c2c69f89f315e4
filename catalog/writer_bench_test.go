package catalog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

// BenchmarkWriteFiles measures the Parquet writer alone, fed from memory: a
// UTC-day window of 1 M rows in the hot tier's key order, ~92 % at one
// version and ~8 % at the next (the two balancing days a UTC day touches),
// values with six decimals. The archiver's throughput is bounded by this and
// by the PostgreSQL read (benchmarks/ measures the two together):
//
//	go test -run '^$' -bench WriteFiles -benchtime 3x ./catalog/
func BenchmarkWriteFiles(b *testing.B) {
	ctx := context.Background()
	e := newEnv(b)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(b, err)
	tbl := tb.Iceberg()
	const n = 1_000_000
	rows := make([]meterstore.Row, 0, n)
	for m := 0; len(rows) < n; m++ {
		malo := fmt.Sprintf("5%010d", m)
		for q := 0; q < 96 && len(rows) < n; q++ {
			version := uint64(20240603000001)
			if q >= 88 {
				version++
			}
			r := mkRow(malo, opA, day0.Add(time.Duration(q)*15*time.Minute), "0", version, opA)
			r.Value = decimal.New(int64(m*7919+q*104729)%5_000_000, -6)
			rows = append(rows, r)
		}
	}
	start := time.Now()
	for b.Loop() {
		files, err := tb.writeFiles(ctx, tbl, rowPages(rows, 50_000), defaultBounds)
		require.NoError(b, err)
		require.NotEmpty(b, files)
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "rows/s")
}
