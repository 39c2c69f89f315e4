package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// TestMissingWatermarkIsAnError: an out-of-band compaction (a rewrite of every
// data file committed without meterstore.tiering_watermark, as Spark or
// PyIceberg would) followed by expiry of the snapshots MeterStore wrote leaves
// a table with data and no watermark. Queries, archival and Append refuse it
// with ErrWatermarkMissing instead of reading the watermark as zero (every
// cold row hidden); RestoreWatermark derives the lost value from the tiers and
// every answer equals the oracle again.
func TestMissingWatermarkIsAnError(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	oracle := testkit.NewOracle(tbl.Config())
	series := append(mkDays(t, day0, 3, "1"), mk(t, dl{from: day0.Add(96 * time.Hour), value: "9"}))
	_, err := e.st.Append(e.ctx, series...)
	require.NoError(t, err)
	_, err = oracle.RecordSeries(series...)
	require.NoError(t, err)
	wm := day0.Add(48 * time.Hour)
	e.archiveThrough(t, tbl, wm)

	storetest.LoseWatermark(t, e.ctx, tbl.Cold())

	_, err = e.st.Query(e.ctx, `SELECT count(*) FROM readings`)
	require.ErrorIs(t, err, catalog.ErrWatermarkMissing, "a query must not read the watermark as zero")
	require.Contains(t, err.Error(), "msql watermark restore")
	_, err = tbl.Archive(e.ctx, day0.Add(30*24*time.Hour), 0)
	require.ErrorIs(t, err, catalog.ErrWatermarkMissing, "archival must not restart at the oldest partition")
	_, err = e.st.Append(e.ctx, mk(t, dl{from: day0.Add(100 * time.Hour), value: "5"}))
	require.ErrorIs(t, err, catalog.ErrWatermarkMissing, "routing needs the boundary")

	require.NoError(t, e.st.Engine().RefreshSystemTables(e.ctx, day0), "system tables show the table, unhealthy")
	res, err := e.st.Query(e.ctx, `SELECT healthy, watermark IS NULL FROM system.tables`)
	require.NoError(t, err)
	require.Equal(t, [][]any{{false, true}}, res.Rows)

	_, err = tbl.RestoreWatermark(e.ctx, day0.Add(24*time.Hour))
	require.Error(t, err, "a watermark below a cold row is refused")
	got, err := tbl.RestoreWatermark(e.ctx, time.Time{})
	require.NoError(t, err)
	require.True(t, got.Equal(wm), "derived %s, want %s", got, wm)
	_, err = tbl.RestoreWatermark(e.ctx, time.Time{})
	require.Error(t, err, "a watermark that reads fine is not restored again")

	e.healthy(t, tbl)
	all := time.Time{}
	require.Equal(t, int64(oracle.RowCount(all, all)), e.scalar(t, `SELECT count(*) FROM readings`))
	require.True(t, oracle.Sum(all, all).Equal(dec(t, e.scalar(t, `SELECT sum(value) FROM readings`))))
	out, err := tbl.Archive(e.ctx, day0.Add(72*time.Hour).Add(tbl.Config().SettlementLag()), 0)
	require.NoError(t, err)
	require.Len(t, out.Windows, 1, "archival resumes at the restored watermark")
	require.True(t, out.Windows[0].From.Equal(wm))
}

// mkDays is one four-interval delivery at the start of each of n days from d.
func mkDays(t testing.TB, d time.Time, n int, value string) []meterstore.StoredSeries {
	var out []meterstore.StoredSeries
	for i := range n {
		out = append(out, mk(t, dl{from: d.Add(time.Duration(i) * 24 * time.Hour), value: value}))
	}
	return out
}
