package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

// BenchmarkHotAppendOverArchivedTier measures what a hot write pays for
// comparing its intervals with the cold tier's (hot.Store.CheckAgainstCold)
// once a month of history is archived below the watermark: the write
// refreshes the Iceberg table and plans a scan of the files that may reach
// above the watermark (none here: a grid of quarter-hours never crosses it).
// One store takes the deliveries — one MaLo's channel for one day, 88 rows,
// an MSCONS message — with the comparison on and off in turn, the order
// swapped every pair, so load that drifts weighs on both and the two sides
// differ in nothing else (the same partitions, the same rows below); the
// medians and their ratio are reported.
func BenchmarkHotAppendOverArchivedTier(b *testing.B) {
	const historyDays = 30
	// 00:00–22:00 UTC: within one Berlin day, so within one version scope's month, all year.
	const perDay = 88
	start := day0.Add(historyDays * 24 * time.Hour)
	e := open(b, nil, intervalTable(b, nil))
	tbl, _ := e.st.Table("readings_versions")
	var history []meterstore.StoredSeries
	for d := range historyDays {
		for _, m := range []string{maloA, maloB} {
			for _, o := range []string{imp, exp} {
				history = append(history, mk(b, dl{malo: m, obis: o, from: day0.Add(time.Duration(d) * 24 * time.Hour), n: perDay, value: "0.25"}))
			}
		}
	}
	_, _, err := tbl.Backfill(e.ctx, start, history...)
	require.NoError(b, err)
	// What the store sets (Table.coldReaching): the cold rows a hot write compares its intervals with.
	cold := func(ctx context.Context, malos []string, lo, hi time.Time) (time.Time, []meterstore.Row, error) {
		if err := tbl.Cold().Refresh(ctx); err != nil {
			return time.Time{}, nil, err
		}
		return tbl.Cold().Reaching(ctx, malos, lo, hi)
	}
	timed := func(check bool, i int) time.Duration {
		if check {
			tbl.Hot().CheckAgainstCold(cold)
		} else {
			tbl.Hot().CheckAgainstCold(nil)
		}
		s := mk(b, dl{malo: []string{maloA, maloB}[i%2], obis: []string{imp, exp}[i/2%2],
			from: start.Add(time.Duration(i/4) * 24 * time.Hour), n: perDay, value: "0.25"})
		t0 := time.Now()
		out, err := e.st.Append(e.ctx, s)
		require.NoError(b, err)
		require.Equal(b, perDay, out.HotRows)
		return time.Since(t0)
	}
	// Every day's partition exists before the timing: the first write of a
	// day would otherwise pay for creating it, on whichever side came first.
	require.NoError(b, tbl.Hot().EnsurePartitions(e.ctx, start, start.Add(time.Duration(b.N/2+2)*24*time.Hour)))
	timed(true, 0) // warm-up
	timed(false, 1)
	var on, off []time.Duration
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		first := i%2 == 0
		d1 := timed(first, 2*i)
		d2 := timed(!first, 2*i+1)
		if first {
			on, off = append(on, d1), append(off, d2)
		} else {
			on, off = append(on, d2), append(off, d1)
		}
	}
	b.StopTimer()
	tbl.Hot().CheckAgainstCold(cold)
	med := func(ds []time.Duration) time.Duration {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	a, n := med(on), med(off)
	b.ReportMetric(float64(n.Microseconds()), "µs/append-check-off")
	b.ReportMetric(float64(a.Microseconds()), "µs/append-check-on")
	b.ReportMetric(float64(a)/float64(n), "ratio")
}
