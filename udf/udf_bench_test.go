package udf_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// benchRows is the table size of the side-by-side runs.
const benchRows = 10_000_000

// openBenchDB creates r(ts, sparte, v, bd): benchRows readings of 140-odd
// meters over two years of 15-minute instants, half STROM and half GAS, with
// bd the balancing day stored the way the writer stores it (computed here
// with DuckDB's ICU conversion, independent of the UDF).
func openBenchDB(b *testing.B) *sql.DB {
	b.Helper()
	db := openDB(b)
	_, err := db.ExecContext(context.Background(), fmt.Sprintf(`CREATE TABLE r AS
		SELECT ts, sparte, v,
			CASE WHEN sparte = 'GAS' THEN ((ts AT TIME ZONE 'Europe/Berlin') - INTERVAL 6 HOUR)::DATE
			     ELSE (ts AT TIME ZONE 'Europe/Berlin')::DATE END AS bd
		FROM (SELECT TIMESTAMPTZ '2025-01-01 00:00:00+00' + (i %% (2 * 365 * 96)) * INTERVAL 15 MINUTE AS ts,
			CASE WHEN (i // (2 * 365 * 96)) %% 2 = 0 THEN 'STROM' ELSE 'GAS' END AS sparte,
			(i %% 1000)::DOUBLE AS v
			FROM range(%d) t(i))`, benchRows))
	require.NoError(b, err)
	return db
}

// BenchmarkGroupByBalancingDay runs, per iteration, the same grouping over
// benchRows rows keyed five ways and reports rows/s for each and the ratios
// the design targets:
//
//	udf/stored    meter_balancing_day(ts, sparte) vs the stored DATE column
//	udf/builtin   meter_balancing_day(ts, sparte) vs the same rule in builtin SQL (CASE + AT TIME ZONE)
//	local/builtin meter_local_day(ts) vs (ts AT TIME ZONE 'Europe/Berlin')::DATE
//
// Run: go test -run '^$' -bench GroupByBalancingDay -benchtime 1x ./udf
func BenchmarkGroupByBalancingDay(b *testing.B) {
	db := openBenchDB(b)
	variants := []struct{ name, key string }{
		{"stored", "bd"},
		{"udf", "meter_balancing_day(ts, sparte)"},
		{"builtin", "CASE WHEN sparte = 'GAS' THEN ((ts AT TIME ZONE 'Europe/Berlin') - INTERVAL 6 HOUR)::DATE ELSE (ts AT TIME ZONE 'Europe/Berlin')::DATE END"},
		{"local_udf", "meter_local_day(ts)"},
		{"local_builtin", "(ts AT TIME ZONE 'Europe/Berlin')::DATE"},
	}
	elapsed := make([]time.Duration, len(variants))
	ctx := context.Background()
	var sums []float64
	b.ResetTimer()
	for b.Loop() {
		sums = sums[:0]
		for i, v := range variants {
			start := time.Now()
			var groups int
			var total float64
			err := db.QueryRowContext(ctx, `SELECT count(*), sum(s) FROM (SELECT `+v.key+` AS day, SUM(v) AS s FROM r GROUP BY 1)`).
				Scan(&groups, &total)
			require.NoError(b, err)
			elapsed[i] += time.Since(start)
			sums = append(sums, total)
		}
	}
	b.StopTimer()
	for _, s := range sums {
		require.InDelta(b, sums[0], s, 1e-6*sums[0])
	}
	n := float64(b.N) * benchRows
	for i, v := range variants {
		b.ReportMetric(n/elapsed[i].Seconds(), v.name+"_rows/s")
	}
	b.ReportMetric(elapsed[1].Seconds()/elapsed[0].Seconds(), "udf/stored")
	b.ReportMetric(elapsed[1].Seconds()/elapsed[2].Seconds(), "udf/builtin")
	b.ReportMetric(elapsed[3].Seconds()/elapsed[4].Seconds(), "local/builtin")
}

// BenchmarkObisPredicate is the WHERE clause of the seed's OBIS example over
// benchRows rows of four repeated codes, against the literal IN list.
func BenchmarkObisPredicate(b *testing.B) {
	db := openDB(b)
	_, err := db.ExecContext(context.Background(), fmt.Sprintf(`CREATE TABLE o AS
		SELECT ['1-0:1.8.0', '1-0:2.8.0', '1-0:3.8.0', '1-0:1.29.0'][1 + (i %% 4)::INT] AS c, (i %% 1000)::DOUBLE AS v
		FROM range(%d) t(i)`, benchRows))
	require.NoError(b, err)
	variants := []struct{ name, where string }{
		{"literal", "c IN ('1-0:1.8.0', '1-0:1.29.0')"},
		{"udf", "obis_is_import(c) AND NOT obis_is_reactive(c)"},
		{"udf_direction", "obis_direction(c) = 'IMPORT' AND NOT obis_is_reactive(c)"},
	}
	elapsed := make([]time.Duration, len(variants))
	for b.Loop() {
		for i, v := range variants {
			start := time.Now()
			var s float64
			require.NoError(b, db.QueryRowContext(context.Background(), `SELECT sum(v) FROM o WHERE `+v.where).Scan(&s))
			elapsed[i] += time.Since(start)
		}
	}
	n := float64(b.N) * benchRows
	for i, v := range variants {
		b.ReportMetric(n/elapsed[i].Seconds(), v.name+"_rows/s")
	}
	b.ReportMetric(elapsed[1].Seconds()/elapsed[0].Seconds(), "udf/literal")
}
