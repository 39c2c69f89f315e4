package engine_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// BenchmarkHotScan is the Go cost of reading the hot tier through the
// engine's hot scan (PostgreSQL's rows decoded and written into DuckDB's
// chunks), per row read: a week of 20 MaLos, all of it in PostgreSQL,
// aggregated by DuckDB so that the result costs nothing. "all" projects
// every column, "value" what a portfolio's sum reads. allocs/row and B/row
// count every allocation of the process while the statements run.
//
//	go test -run '^$' -bench HotScan -benchmem ./engine/
func BenchmarkHotScan(b *testing.B) {
	w := testkit.Workload{Seed: 7, MaLos: 20, Days: 7}
	batch, err := w.Generate()
	require.NoError(b, err)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	s := storetest.Start(b, storetest.Options{Now: batch.Days[0].Time()}, cfg)
	ingest(b, s.Table("readings_versions"), batch.Deliveries)
	ctx := context.Background()
	for _, q := range []struct{ name, sql string }{
		{"all", `SELECT count(*), max(malo_id), max(melo_id), max(obis_code), max(sparte), max("from"), max("to"), sum(value),
			max(unit), max(quality), max(resolution), max(source_kind), max(source_detail), max(provenance), max(version),
			max(version_scope), max(recorded_at), max(balancing_day) FROM readings_versions`},
		{"value", `SELECT count(*), sum(value) FROM readings_versions WHERE "from" >= '2000-01-01'`},
	} {
		b.Run(q.name, func(b *testing.B) {
			var rows int64
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				res, err := s.Engine.Query(ctx, q.sql)
				require.NoError(b, err)
				require.Equal(b, "meter_hot_scan", res.Provenance.HotPath)
				require.Equal(b, res.Rows[0][0], res.Provenance.HotRows(), "every row is read from PostgreSQL")
				rows += res.Provenance.HotRows()
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(rows), "allocs/row")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(rows), "B/row")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
		})
	}
}
