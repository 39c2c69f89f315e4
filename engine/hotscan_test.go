package engine_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// BenchmarkHotScan is the Go cost of reading the hot tier through the
// engine's hot scan (PostgreSQL's rows decoded and written into DuckDB's
// chunks), per row read: a week of 20 MaLos, all of it in PostgreSQL,
// aggregated by DuckDB so that the result costs nothing. "all" projects
// every column, "value" what a portfolio's sum reads. allocs/row and B/row
// count every allocation of the process while the statements run, and
// cpu-ns/row its CPU time (PostgreSQL's is not counted).
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
			cpu0 := processCPU(b)
			for b.Loop() {
				res, err := s.Engine.Query(ctx, q.sql)
				require.NoError(b, err)
				require.Equal(b, "meter_hot_scan", res.Provenance.HotPath)
				require.Equal(b, res.Rows[0][0], res.Provenance.HotRows(), "every row is read from PostgreSQL")
				rows += res.Provenance.HotRows()
			}
			cpu := processCPU(b) - cpu0
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(rows), "allocs/row")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(rows), "B/row")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(rows), "cpu-ns/row")
		})
	}
}

// processCPU is the CPU time this process has used, its DuckDB threads
// included and PostgreSQL's excluded: on a loaded machine it varies far
// less than the elapsed time.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The hot scan hands DuckDB each value exactly as PostgreSQL holds it: the
// engine's text of every value is PostgreSQL's own, at the edges of
// numeric(18,6), negative, zero and with trailing zeros.
func TestHotScanValuesAreExact(t *testing.T) {
	ctx := context.Background()
	s, rows := oneHotDay(t, 3, storetest.Options{})
	edges := []string{"999999999999.999999", "-999999999999.999999", "0", "-0.000001", "0.000001", "123.450000",
		"-42", "100000000000", "0.1", "99990000.009900"}
	require.GreaterOrEqual(t, len(rows), len(edges))
	rows = rows[:len(edges)]
	for i := range rows {
		rows[i].Value = decimal.RequireFromString(edges[i])
	}
	_, err := s.Table("readings_versions").Hot.Write(ctx, rows)
	require.NoError(t, err)

	res, err := s.Engine.Query(ctx, `SELECT "from", value::VARCHAR FROM readings_versions`)
	require.NoError(t, err)
	require.Equal(t, "meter_hot_scan", res.Provenance.HotPath)
	got := map[time.Time]string{}
	for _, r := range res.Rows {
		got[r[0].(time.Time).UTC()] = r[1].(string)
	}
	pgRows, err := s.Pool.Query(ctx, `SELECT "from", value::text FROM readings_versions`)
	require.NoError(t, err)
	want := map[time.Time]string{}
	var from time.Time
	var text string
	_, err = pgx.ForEachRow(pgRows, []any{&from, &text}, func() error { want[from.UTC()] = text; return nil })
	require.NoError(t, err)
	require.Len(t, want, len(edges))
	require.Equal(t, want, got)
}

// TestHotScanPastTheMemoryLimitFailsTheStatement: the hot scan copies each
// string into DuckDB's vector, an allocation DuckDB refuses by throwing once
// its database is at memory_limit. Thrown across the scan's Go callback, the
// exception aborted the process — in msql serve, one session's large
// statement beside another's hot scan took every session down. Now the
// statement fails with DuckDB's Out of Memory error and the engine answers
// the next one.
func TestHotScanPastTheMemoryLimitFailsTheStatement(t *testing.T) {
	ctx := context.Background()
	s, rows := oneHotDay(t, 5, storetest.Options{MemoryLimit: "16MB"})
	detail := strings.Repeat("x", 512<<10) // ~100 rows × 512 KiB: a chunk's strings are far beyond 16 MB
	for i := range rows {
		rows[i].SourceDetail = &detail
	}
	_, err := s.Table("readings_versions").Hot.Write(ctx, rows)
	require.NoError(t, err)

	_, err = s.Engine.Query(ctx, `SELECT max(length(source_detail)) FROM readings_versions`)
	require.ErrorContains(t, err, "Out of Memory")

	res, err := s.Engine.Query(ctx, `SELECT count(*) FROM readings_versions`)
	require.NoError(t, err, "the engine goes on")
	require.EqualValues(t, len(rows), res.Rows[0][0])
}

// oneHotDay is a store reading through the Go paths — the hot scan these
// tests are about, in the extension run (MSQL_PATHS=extension) too — and the
// rows of one MaLo's day, not yet written.
func oneHotDay(t *testing.T, seed uint64, opt storetest.Options) (*storetest.Store, []meterstore.Row) {
	t.Helper()
	t.Setenv(engine.EnvPaths, "go")
	w := testkit.Workload{Seed: seed, MaLos: 1, Days: 1}
	batch, err := w.Generate()
	require.NoError(t, err)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	opt.Now = batch.Days[0].Time()
	s := storetest.Start(t, opt, cfg)
	rows, err := cfg.Encode(batch.Deliveries[0].Series)
	require.NoError(t, err)
	return s, rows
}

// The hot scan writes every column's values into DuckDB's vectors as
// PostgreSQL holds them: NULLs, negative quantities at every scale, the
// instants of a day whose clock goes back (Berlin, 2025-10-26, 100
// quarter-hours), the balancing day as a date and text beyond ASCII —
// each row's columns compared, as text, with PostgreSQL's own.
func TestHotScanWritesEveryColumnAsPostgreSQLHoldsIt(t *testing.T) {
	ctx := context.Background()
	t.Setenv(engine.EnvPaths, "go")
	w := testkit.Workload{Seed: 11, MaLos: 1, Days: 4} // 2025-10-23 to 26, Berlin
	batch, err := w.Generate()
	require.NoError(t, err)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	s := storetest.Start(t, storetest.Options{Now: batch.Days[0].Time()}, cfg)
	var rows []meterstore.Row
	for _, d := range batch.Deliveries {
		r, err := cfg.Encode(d.Series)
		require.NoError(t, err)
		rows = append(rows, r...)
	}
	values := []string{"-0.1", "-0.12", "-0.123", "-0.1234", "-0.12345", "-0.123456", "0.654321", "-999999999999.999999",
		"999999999999.999999", "0", "-7", "12345.6"}
	texts := []string{"Zählerwechsel – Ersatzwert", "東京 ✓", "", "a'b\\c", "Ωμέγα"}
	for i := range rows {
		r := &rows[i]
		r.Value = decimal.RequireFromString(values[i%len(values)])
		r.MeloID = nil
		r.SourceDetail, r.Provenance = nil, nil
		if i%3 != 0 {
			text := texts[i%len(texts)]
			r.SourceDetail, r.Provenance = &text, &texts[(i+1)%len(texts)]
		}
	}
	_, err = s.Table("readings_versions").Hot.Write(ctx, rows)
	require.NoError(t, err)

	const columns = `malo_id, melo_id, obis_code, sparte, %[1]s, %[2]s, value::%[4]s, unit, quality, resolution, source_kind,
		source_detail, provenance, version::%[4]s, version_scope, %[3]s, balancing_day::%[4]s`
	res, err := s.Engine.Query(ctx, "SELECT "+fmt.Sprintf(columns, `epoch_us("from")::VARCHAR`, `epoch_us("to")::VARCHAR`,
		`epoch_us(recorded_at)::VARCHAR`, "VARCHAR")+" FROM readings_versions")
	require.NoError(t, err)
	require.Equal(t, "meter_hot_scan", res.Provenance.HotPath)
	micros := func(col string) string { return fmt.Sprintf(`(extract(epoch FROM %s) * 1000000)::bigint::text`, col) }
	pgRows, err := s.Pool.Query(ctx, "SELECT "+fmt.Sprintf(columns, micros(`"from"`), micros(`"to"`), micros("recorded_at"), "text")+
		" FROM readings_versions")
	require.NoError(t, err)
	want, err := pgx.CollectRows(pgRows, func(r pgx.CollectableRow) ([]any, error) { return r.Values() })
	require.NoError(t, err)
	require.Len(t, want, len(rows))
	require.ElementsMatch(t, want, res.Rows)
	require.Contains(t, fmt.Sprint(res.Rows), "Zählerwechsel – Ersatzwert")
}
