package catalog

import (
	"context"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"os"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/testkit"
)

// A realistic archival day (200 MaLo × 2 channels × 96 quarter-hours) through
// CommitWindow: footers as declared, bloom filters sized to the row group,
// bytes per row measured (and compared with iceberg-go's own writer).
func TestFootersRealisticDay(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	w := testkit.NewWorkload(11)
	w.MaLos, w.Days, w.Mix, w.ElectricityChannels, w.Tenants = 200, 1, testkit.StromOnly, 2, 1
	cfg, err := w.IntervalTable("readings_versions").Build()
	require.NoError(t, err)
	batch, err := w.Generate()
	require.NoError(t, err)
	var rows []meterstore.Row
	for _, d := range batch.Deliveries {
		if d.Kind != testkit.Original {
			continue
		}
		rs, err := cfg.Encode(d.Series)
		require.NoError(t, err)
		rows = append(rows, rs...)
	}
	require.Equal(t, 200*2*96, len(rows))
	sortRowsKeyset(rows)
	wm := rows[0].From
	for _, r := range rows {
		if r.From.After(wm) {
			wm = r.From
		}
	}
	wm = wm.Add(24 * time.Hour).Truncate(24 * time.Hour)

	tb, err := e.cat.CreateTable(ctx, cfg)
	require.NoError(t, err)
	res, err := tb.CommitWindow(ctx, &SliceSource{Rows: rows, PageSize: 10_000}, wm)
	require.NoError(t, err)
	require.EqualValues(t, len(rows), res.Rows)

	files, _, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	var total int64
	for _, f := range files {
		checkFooter(t, f.Path)
		st, err := os.Stat(s3test.LocalCopy(t, f.Path))
		require.NoError(t, err)
		total += st.Size()
		require.NotNil(t, f.VersionMin)
		require.NotNil(t, f.FromMin)
		r, err := file.OpenParquetFile(s3test.LocalCopy(t, f.Path), false)
		require.NoError(t, err)
		bf, err := r.GetBloomFilterReader().RowGroup(0)
		require.NoError(t, err)
		var bloom int64
		for _, name := range BloomColumns {
			ci := r.MetaData().Schema.ColumnIndexByName(name)
			f, err := bf.GetColumnBloomFilter(ci)
			require.NoError(t, err)
			bloom += f.Size()
		}
		t.Logf("file: %d rows in %d row group(s), %d bytes (%.2f B/row), bloom filters %d bytes", f.Records, r.NumRowGroups(), st.Size(), float64(st.Size())/float64(f.Records), bloom)
		require.LessOrEqual(t, bloom, int64(4096+128), "bloom filters sized to the row group")
		r.Close()
	}
	t.Logf("realistic day: %d rows, %d files, %d bytes, %.2f B/row", len(rows), len(files), total, float64(total)/float64(len(rows)))
	require.Less(t, float64(total)/float64(len(rows)), 12.0)

	// For comparison: iceberg-go's own writer with the table's properties (not committed).
	var oldTotal int64
	for df, err := range table.WriteRecords(ctx, tb.Iceberg(), ArrowSchema(cfg), func(yield func(arrow.RecordBatch, error) bool) {
		rec, err := rowsToRecord(cfg, rows, nil)
		yield(rec, err)
	}, table.WithMaxWriteWorkers(1)) {
		require.NoError(t, err)
		oldTotal += df.FileSizeBytes()
	}
	t.Logf("iceberg-go writer, same rows: %d bytes, %.2f B/row", oldTotal, float64(oldTotal)/float64(len(rows)))
}

// A window crossing a month boundary writes one file per month partition; rows
// out of (malo_id, obis_code, from) order are refused and leave no file behind.
func TestWriterMonthSplitAndOrder(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	start := time.Date(2024, 3, 31, 22, 0, 0, 0, time.UTC)
	rows := genRows(start, 16, opA, 1) // 22:00 → 02:00 across April 1st
	res, err := tb.CommitWindow(ctx, &SliceSource{Rows: rows, PageSize: 7}, start.Add(4*time.Hour))
	require.NoError(t, err)
	require.Equal(t, 2, res.Files)
	files, _, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	months := map[any]int64{}
	for _, f := range files {
		checkFooter(t, f.Path)
		months[f.Partition["from_month"]] += f.Records
		require.Contains(t, f.Path, "from_month=2024-0")
	}
	require.Equal(t, map[any]int64{int32((2024-1970)*12 + 2): 4 * 8, int32((2024-1970)*12 + 3): 4 * 8}, months)
	apr, _, err := tb.PlanFiles(ctx, PlanRequest{From: time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	require.Len(t, apr, 1)
	require.True(t, apr[0].FromMin.Equal(time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)))

	// Out of order: refused, nothing committed, the partial files removed.
	bad := genRows(start.Add(4*time.Hour), 4, opA, 1)
	bad[0], bad[1] = bad[1], bad[0]
	snap := tb.CurrentSnapshotID()
	_, err = tb.CommitWindow(ctx, &SliceSource{Rows: bad}, start.Add(6*time.Hour))
	require.ErrorContains(t, err, "out of (malo_id, obis_code, from) order")
	require.Equal(t, snap, tb.CurrentSnapshotID())
	orphans, err := tb.DeleteOrphanFiles(ctx, 0, true)
	require.NoError(t, err)
	for _, o := range orphans {
		require.NotContains(t, o, ".parquet", "a refused window leaves no data file")
	}
}
