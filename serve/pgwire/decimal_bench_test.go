package pgwire

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// decimalRows is how many rows BenchmarkDecimalRows encodes per statement.
const decimalRows = 100_000

// decimalRowsSQL is decimalRows DECIMAL(18,6) values of both signs from no
// relation, so DuckDB's cost is small and what the benchmark sees is
// decoding the values and encoding them for the wire.
const decimalRowsSQL = `SELECT (((i * 7919) % 2000000 - 1000000) / 1000)::DECIMAL(18,6) AS value FROM range(100000) t(i)`

// BenchmarkDecimalRows is the Go cost of a DECIMAL(18,6) column on the wire:
// Engine.Rows' values scanned and encoded into DataRows in text and in
// binary, as a portal sends them. allocs/row and B/row count every
// allocation of the process while the statements run, so they do not depend
// on the machine's load; ns/row does.
//
//	go test -run '^$' -bench DecimalRows -count 6 ./serve/pgwire/
func BenchmarkDecimalRows(b *testing.B) {
	w := testkit.Workload{Seed: 7, MaLos: 1, Days: 1}
	s := storetest.Start(b, storetest.Options{}, w.IntervalTable("readings_versions").MustBuild())
	for _, format := range []int16{pgtype.TextFormatCode, pgtype.BinaryFormatCode} {
		b.Run(map[int16]string{pgtype.TextFormatCode: "text", pgtype.BinaryFormatCode: "binary"}[format], func(b *testing.B) {
			var rows int
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				rows += encodeRows(b, s.Engine, format)
			}
			runtime.ReadMemStats(&after)
			require.Equal(b, b.N*decimalRows, rows)
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(rows), "allocs/row")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(rows), "B/row")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
		})
	}
}

// encodeRows runs decimalRowsSQL through Engine.Rows, encodes every row as a
// DataRow in format, as sendRows does, and counts the rows.
func encodeRows(b *testing.B, eng *engine.Engine, format int16) int {
	rows, err := eng.Rows(context.Background(), decimalRowsSQL)
	require.NoError(b, err)
	cts, err := rows.ColumnTypes()
	require.NoError(b, err)
	sess := &pgSession{m: pgtype.NewMap(), loc: time.UTC}
	p := &pgPortal{cols: columnsOf(cts), formats: []int16{format}}
	vals := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		require.NoError(b, rows.Scan(ptrs...))
		if _, err := sess.dataRow(p, vals); err != nil {
			b.Fatal(err)
		}
		n++
	}
	require.NoError(b, rows.Close())
	return n
}
