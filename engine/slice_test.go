package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/pgtest"
	"github.com/meterstore/meterstore/testkit/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// ingest writes deliveries the way Append routes them: below the committed
// watermark to Iceberg, at or above it to PostgreSQL.
func ingest(t testing.TB, tbl *storetest.Table, ds []testkit.Delivery) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, tbl.Cold.Refresh(ctx))
	w, err := tbl.Cold.Watermark(ctx)
	require.NoError(t, err)
	var hot, cold []meterstore.Row
	for _, d := range ds {
		rows, err := tbl.Config.Encode(d.Series)
		require.NoError(t, err)
		for _, r := range rows {
			if !w.IsZero() && r.From.Before(w) {
				cold = append(cold, r)
			} else {
				hot = append(hot, r)
			}
		}
	}
	for len(hot) > 0 {
		n := min(len(hot), 20000)
		_, err := tbl.Hot.Write(ctx, hot[:n])
		require.NoError(t, err)
		hot = hot[n:]
	}
	if len(cold) > 0 {
		_, err := tbl.Cold.AppendCold(ctx, cold)
		require.NoError(t, err)
	}
}

func sumOf(t *testing.T, res *engine.Result) decimal.Decimal {
	t.Helper()
	require.Len(t, res.Rows, 1)
	if res.Rows[0][0] == nil {
		return decimal.Zero
	}
	d, ok := res.Rows[0][0].(decimal.Decimal)
	require.True(t, ok, "%T", res.Rows[0][0])
	return d
}

// TestVerticalSlice: rows written to PostgreSQL, windows archived to Iceberg,
// late corrections appended below the watermark, and queries across the
// watermark equal the oracle — a Go map fold, not SQL.
func TestVerticalSlice(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(7)
	w.MaLos, w.Tenants = 6, 2
	w.CorrectionRate, w.RedeliveryRate, w.GapRate = 0.05, 0.03, 0.01
	batch, err := w.Generate()
	require.NoError(t, err)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	oracle := testkit.NewOracle(cfg)

	s := storetest.Start(t, storetest.Options{Now: batch.Days[0].Time()}, cfg)
	tbl := s.Table()
	var originals, corrections []testkit.Delivery
	for _, d := range batch.Deliveries {
		if d.Kind == testkit.Correction {
			corrections = append(corrections, d)
		} else {
			originals = append(originals, d)
		}
	}
	ingest(t, tbl, originals)
	_, err = oracle.RecordDeliveries(originals...)
	require.NoError(t, err)

	// Archive all but the last two days.
	last := batch.Days[len(batch.Days)-1]
	cut := last.AddDays(-1).Time() // watermark after archival
	out, err := tbl.Archiver.Archive(ctx, cut.Add(cfg.SettlementLag()), 0)
	require.NoError(t, err)
	require.True(t, out.ArchivedAnything())
	require.True(t, out.Watermark.Equal(cut), "watermark %s", out.Watermark)

	// Corrections arrive after archival: old days go to Iceberg.
	ingest(t, tbl, corrections)
	_, err = oracle.RecordDeliveries(corrections...)
	require.NoError(t, err)

	report, err := tbl.Archiver.VerifyInvariant(ctx)
	require.NoError(t, err)
	require.True(t, report.Healthy, report.String())

	all := time.Time{}
	for _, q := range []struct {
		name string
		sql  string
		want decimal.Decimal
	}{
		{"everything", `SELECT sum(value) FROM readings`, oracle.Sum(all, all)},
		{"cold only", fmt.Sprintf(`SELECT sum(value) FROM readings WHERE "from" < '%s'`, cut.Format(time.RFC3339)), oracle.Sum(all, cut)},
		{"hot only", fmt.Sprintf(`SELECT sum(value) FROM readings WHERE "from" >= '%s'`, cut.Format(time.RFC3339)), oracle.Sum(cut, all)},
		{"spanning", fmt.Sprintf(`SELECT sum(value) FROM readings WHERE "from" >= '%s' AND "from" < '%s'`,
			cut.Add(-36*time.Hour).Format(time.RFC3339), cut.Add(12*time.Hour).Format(time.RFC3339)),
			oracle.Sum(cut.Add(-36*time.Hour), cut.Add(12*time.Hour))},
		{"cte", `WITH r AS (SELECT * FROM readings) SELECT sum(value) FROM r`, oracle.Sum(all, all)},
		{"self join", `SELECT sum(a.value) FROM readings a JOIN readings b USING (malo_id, obis_code, "from", tenant)`, oracle.Sum(all, all)},
		{"subquery", `SELECT sum(value) FROM (SELECT value FROM readings WHERE malo_id IN (SELECT malo_id FROM readings))`, oracle.Sum(all, all)},
		{"union", `SELECT sum(v) FROM (SELECT value AS v FROM readings WHERE "from" < '` + cut.Format(time.RFC3339) + `' UNION ALL SELECT value FROM readings WHERE "from" >= '` + cut.Format(time.RFC3339) + `')`, oracle.Sum(all, all)},
		{"window function", `SELECT sum(v) FROM (SELECT value AS v, row_number() OVER (PARTITION BY malo_id ORDER BY "from") AS n FROM readings)`, oracle.Sum(all, all)},
		{"by balancing day", `SELECT sum(s) FROM (SELECT meter_balancing_day("from", sparte) AS d, sum(value) AS s FROM readings GROUP BY 1)`, oracle.Sum(all, all)},
	} {
		t.Run(q.name, func(t *testing.T) {
			res, err := s.Engine.Query(ctx, q.sql)
			require.NoError(t, err)
			require.True(t, q.want.Equal(sumOf(t, res)), "engine %s, oracle %s", sumOf(t, res), q.want)
		})
	}

	// Per MaLo, channel and balancing day, against the oracle.
	res, err := s.Engine.Query(ctx, `SELECT malo_id, obis_code, meter_balancing_day("from", sparte) AS d, sum(value) FROM readings GROUP BY ALL`)
	require.NoError(t, err)
	want := oracle.SumsByMaloChannelDay(all, all)
	got := map[testkit.MaloChannelDay]decimal.Decimal{}
	for _, r := range res.Rows {
		k := testkit.MaloChannelDay{MaloID: r[0].(string), ObisCode: r[1].(string), BalancingDay: dateOf(r[2].(time.Time))}
		got[k] = got[k].Add(r[3].(decimal.Decimal))
	}
	require.Equal(t, len(want), len(got))
	for k, v := range want {
		require.True(t, v.Equal(got[k]), "%v: engine %s oracle %s", k, got[k], v)
	}

	// Per MaLo, channel and balancing month (rewritten to the stored day's
	// month), against the oracle's day sums folded by month.
	res, err = s.Engine.Query(ctx, `SELECT malo_id, obis_code, meter_balancing_month("from", sparte) AS m, sum(value) FROM readings GROUP BY ALL`)
	require.NoError(t, err)
	wantMonth := map[testkit.MaloChannelDay]decimal.Decimal{}
	for k, v := range want {
		k.BalancingDay.Day = 1
		wantMonth[k] = wantMonth[k].Add(v)
	}
	gotMonth := map[testkit.MaloChannelDay]decimal.Decimal{}
	for _, r := range res.Rows {
		k := testkit.MaloChannelDay{MaloID: r[0].(string), ObisCode: r[1].(string), BalancingDay: dateOf(r[2].(time.Time))}
		gotMonth[k] = gotMonth[k].Add(r[3].(decimal.Decimal))
	}
	require.Greater(t, len(wantMonth), 1)
	require.Equal(t, len(wantMonth), len(gotMonth))
	for k, v := range wantMonth {
		require.True(t, v.Equal(gotMonth[k]), "%v: engine %s oracle %s", k, gotMonth[k], v)
	}

	// The naive sum over every version is wrong exactly because corrections exist.
	res, err = s.Engine.Query(ctx, `SELECT sum(value) FROM readings_versions`)
	require.NoError(t, err)
	require.True(t, oracle.NaiveSum(all, all).Equal(sumOf(t, res)))
	require.False(t, oracle.NaiveSum(all, all).Equal(oracle.Sum(all, all)), "the workload has corrections")

	// Provenance: the spanning statement read both tiers against the watermark.
	res, err = s.Engine.Query(ctx, `SELECT count(*) FROM readings`)
	require.NoError(t, err)
	require.True(t, res.Provenance.SpansTiers())
	require.True(t, res.Provenance.Watermark.Equal(cut))
	require.EqualValues(t, oracle.RowCount(all, all), res.Rows[0][0])
}

func dateOf(t time.Time) metering.Date { return metering.DateOf(t) }
