package ingest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// A late correction whose interval reaches above the watermark (a Berlin
// day's value, 23:00 to 23:00 UTC, across the UTC-midnight watermark) and
// quarter-hours of the same channel and version from the watermark, in two
// files of one import, overlap within one version: one of them is refused.
// The later delivery in file order is, whichever it is: the correction
// goes to Iceberg and the quarter-hours to PostgreSQL, and which commit comes
// first must not decide. A late correction of another channel (maloC) comes
// first in the import, so that the write to Iceberg has work before the
// day's value while the quarter-hours' lane has none.
func TestAnOverlapAcrossTheWatermarkRefusesTheLaterDelivery(t *testing.T) {
	for _, dayFirst := range []bool{true, false} {
		t.Run(map[bool]string{true: "day first", false: "quarter-hours first"}[dayFirst], func(t *testing.T) {
			ctx := context.Background()
			st := start(t, nil)
			w := historyToTheWatermark(t, st)
			dir := t.TempDir()
			day := writeFile(t, dir, "day.csv", header,
				maloB+","+obisIn+",STROM,2026-03-12T23:00:00Z,2026-03-13T23:00:00Z,24,KWH,MEASURED,20260314000001,"+op)
			quarters := writeFile(t, dir, "quarters.csv", append([]string{header},
				quarterHours(maloB, w, 4, "20260314000001", func(int) string { return "1" })...)...)
			corr := writeFile(t, dir, "corr.csv", append([]string{header},
				quarterHours(maloC, w.Add(-48*time.Hour), 96, "20260314000001", func(int) string { return "1" })...)...)
			files, later := []string{corr, day, quarters}, quarters
			if !dayFirst {
				files, later = []string{corr, quarters, day}, day
			}
			rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, files...)
			require.NoError(t, err)
			require.Len(t, rep.Refused, 1, rep.String())
			require.Equal(t, later, rep.Refused[0].File, "the later file's delivery is refused: %s", rep.String())
			require.ErrorIs(t, rep.Refused[0], meterstore.ErrConflict)
			require.Contains(t, rep.Refused[0].Error(), "[2026-03-12T23:00:00Z, 2026-03-13T23:00:00Z)", "it names the other delivery's interval")
		})
	}
}

// historyToTheWatermark imports three days of maloA's quarter-hours, 10 to 12
// March, which the bulk path takes, moving the watermark to 13 March where
// the settlement lag begins; it returns the watermark.
func historyToTheWatermark(t *testing.T, st *storetest.Store) time.Time {
	t.Helper()
	ctx := context.Background()
	hist := writeFile(t, t.TempDir(), "hist.csv", append([]string{header},
		quarterHours(maloA, time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), 3*96, "20260314000001", func(int) string { return "1" })...)...)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, hist)
	require.NoError(t, err)
	require.Equal(t, 3*96, rep.BulkRows, rep.String())
	w, err := st.Store.Tables()[0].Watermark(ctx)
	require.NoError(t, err)
	require.True(t, w.Equal(time.Date(2026, 3, 13, 0, 0, 0, 0, time.UTC)), "watermark %s", w)
	return w
}

// A batch the bulk history path does not take, read in the import whose
// bulk commit moves the watermark over its first rows, goes in as two
// halves at the watermark the commit set, each whole or refused alone: here
// its half from the watermark restates a stored PostgreSQL row and is
// refused, and the report counts the half below as readings holds it.
func TestABatchAcrossTheWatermarkTheBulkPathMovedGoesInAsTwoHalves(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	dir := t.TempDir()
	one := func(int) string { return "1" }
	stored := writeFile(t, dir, "stored.csv", append([]string{header},
		quarterHours(maloB, time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC), 1, "20260314000001", one)...)...)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, stored)
	require.NoError(t, err)
	require.Equal(t, 1, rep.HotRows, rep.String())

	lines := append([]string{header},
		quarterHours(maloA, time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), 3*96, "20260314000001", one)...)
	lines = append(lines, quarterHours(maloB, time.Date(2026, 3, 12, 23, 0, 0, 0, time.UTC), 4*24+5, "20260314000001",
		func(int) string { return "2" })...)
	rep, err = ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, dir, "both.csv", lines...))
	require.NoError(t, err)
	require.Equal(t, 3*96, rep.BulkRows, rep.String())
	w, err := st.Store.Tables()[0].Watermark(ctx)
	require.NoError(t, err)
	require.True(t, w.Equal(time.Date(2026, 3, 13, 0, 0, 0, 0, time.UTC)), "watermark %s", w)
	require.Len(t, rep.Refused, 1, rep.String())
	require.Contains(t, rep.Refused[0].Batch, "rows from the watermark 2026-03-13T00:00:00Z", rep.String())
	require.EqualValues(t, rep.ColdRows-rep.BulkRows, scalar(t, st, `SELECT count(*) FROM readings WHERE malo_id = $1 AND "from" < $2`, maloB, w),
		"the report counts what readings holds below the watermark: %s", rep.String())
	require.EqualValues(t, 4, rep.ColdRows-rep.BulkRows)
	require.EqualValues(t, 1, scalar(t, st, `SELECT count(*) FROM readings WHERE malo_id = $1 AND "from" >= $2`, maloB, w))
}
