package pgwire

import (
	"context"
	"runtime"
	"syscall"
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
	benchmarkEncodedRows(b, decimalRowsSQL, decimalRows)
}

// monthRows is how many rows BenchmarkMonthRows encodes per statement: one
// meter's 31-day month of quarter-hours on two OBIS codes.
const monthRows = 2 * 96 * 31

// monthRowsSQL is one meter's month as the pgbench script's single-meter read
// returns it ("from", obis_code, value), from no relation.
const monthRowsSQL = `SELECT TIMESTAMPTZ '2025-03-01 00:00:00+00' + (i // 2) * INTERVAL 15 MINUTE AS "from",
	CASE WHEN i % 2 = 0 THEN '1-0:1.29.0' ELSE '1-0:2.29.0' END AS obis_code,
	(((i * 7919) % 2000000 - 1000000) / 1000)::DECIMAL(18,6) AS value FROM range(5952) t(i)`

// BenchmarkMonthRows is the Go cost per row of one meter's month on the wire:
// Engine.Rows' rows scanned and encoded onto a spool, as sendRows does, in
// the text format pgbench asks for and in binary. allocs/row, B/row and
// cpu-ns/row count every allocation and CPU second of the process while the
// statements run.
//
//	go test -run '^$' -bench MonthRows -count 6 ./serve/pgwire/
func BenchmarkMonthRows(b *testing.B) {
	benchmarkEncodedRows(b, monthRowsSQL, monthRows)
}

// benchmarkEncodedRows runs q, which returns perStatement rows, and encodes
// its rows in text and in binary, reporting the cost per row.
func benchmarkEncodedRows(b *testing.B, q string, perStatement int) {
	w := testkit.Workload{Seed: 7, MaLos: 1, Days: 1}
	s := storetest.Start(b, storetest.Options{}, w.IntervalTable("readings_versions").MustBuild())
	for _, format := range []int16{pgtype.TextFormatCode, pgtype.BinaryFormatCode} {
		b.Run(map[int16]string{pgtype.TextFormatCode: "text", pgtype.BinaryFormatCode: "binary"}[format], func(b *testing.B) {
			var rows int
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cpuBefore := processCPU(b)
			for b.Loop() {
				rows += encodeRows(b, s.Engine, q, format)
			}
			cpu := processCPU(b) - cpuBefore
			runtime.ReadMemStats(&after)
			require.Equal(b, b.N*perStatement, rows)
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(rows), "cpu-ns/row")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(rows), "allocs/row")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(rows), "B/row")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
		})
	}
}

// processCPU is the CPU time the process has used, in every thread — Go's,
// the garbage collector's and DuckDB's — which the machine's load moves less
// than the wall time.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &u))
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// encodeRows runs q through Engine.Rows, encodes every row as a DataRow in
// format onto a spool, as sendRows does, and counts the rows.
func encodeRows(b *testing.B, eng *engine.Engine, q string, format int16) int {
	rows, err := eng.Rows(context.Background(), q)
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
		if err := p.spool.addRow(func(buf []byte) ([]byte, error) { return sess.appendRow(buf, p, vals) }); err != nil {
			b.Fatal(err)
		}
		n++
	}
	p.spool.discard()
	require.NoError(b, rows.Close())
	return n
}
