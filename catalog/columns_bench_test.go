package catalog

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

// BenchmarkEncodeBalancingDay compares the encoder's whole per-row work — a
// UTC day's quarter-hours in the hot tier's key order (MaLo, then "from"),
// checked and added to the column batch and flushed into a Parquet file as
// writeFiles does, into memory — with the balancing day's derivation alone
// over the same rows, which the encoder does for every row it writes:
//
//	go test -run '^$' -bench EncodeBalancingDay -benchmem -count 5 ./catalog/
func BenchmarkEncodeBalancingDay(b *testing.B) {
	cfg := testConfig(b)
	rows := dayOfRows(1 << 18)
	b.Run("encode", func(b *testing.B) {
		props := writerProperties(cfg)
		var file bytes.Buffer
		for b.Loop() {
			file.Reset()
			f, err := openDataFile(cfg, nopCloser{&file}, props)
			require.NoError(b, err)
			for i := range rows {
				if _, err := f.batch.add(&rows[i]); err != nil {
					b.Fatal(err)
				}
				if f.full() {
					if _, err := f.flush(); err != nil {
						b.Fatal(err)
					}
				}
			}
			require.NoError(b, f.close())
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
	})
	b.Run("derive", func(b *testing.B) {
		var d balancingDay
		for b.Loop() {
			for i := range rows {
				if err := d.derive(&rows[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
	})
}

// dayOfRows is n quarter-hour rows of one UTC day, 96 per MaLo, in key order.
func dayOfRows(n int) []meterstore.Row {
	rows := make([]meterstore.Row, 0, n)
	for m := 0; len(rows) < n; m++ {
		malo := fmt.Sprintf("5%010d", m)
		for q := 0; q < 96 && len(rows) < n; q++ {
			r := mkRow(malo, opA, day0.Add(time.Duration(q)*15*time.Minute), "0", 20240603000001, opA)
			r.Value = decimal.New(int64(m*7919+q*104729)%5_000_000, -6)
			rows = append(rows, r)
		}
	}
	return rows
}
