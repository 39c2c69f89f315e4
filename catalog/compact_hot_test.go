package catalog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
)

// TestCompactionRefusesAForeignIntervalOverHotRows: a file committed out of
// band holds a day whose interval starts below the watermark and ends above
// it, at the version of a quarter-hour PostgreSQL holds above the watermark —
// the overlap the hot tier's no_overlap refuses, which no check of either
// tier saw (the foreign writer asked neither). Compaction, which would mark
// the day clean, compares the rows it rewrites that reach above the watermark
// with the hot tier's and refuses, naming the reading, both intervals and the
// rule; nothing is rewritten.
func TestCompactionRefusesAForeignIntervalOverHotRows(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	h := hot.New(e.pool, e.cfg)
	require.NoError(t, h.CreateTables(ctx, time.Now()))
	tb.HoldAgainstHot(h.HoldReadings)

	w := time.Date(2025, 2, 10, 0, 0, 0, 0, time.UTC)
	const v = 20250210000001
	archived := mkRow(malos[0], "tenant01", w.Add(-12*time.Hour), "1", v, opA)
	_, err = tb.CommitWindow(ctx, &SliceSource{Rows: []meterstore.Row{archived}}, w)
	require.NoError(t, err)
	require.NoError(t, h.EnsurePartitions(ctx, w, w.Add(48*time.Hour)))
	quarter := mkRow(malos[0], "tenant01", w.Add(15*time.Minute), "1", v, opA)
	_, err = h.Write(ctx, []meterstore.Row{quarter})
	require.NoError(t, err)

	day := mkRow(malos[0], "tenant01", w.Add(-time.Hour), "24", v, opA)
	end := w.Add(23 * time.Hour)
	day.To, day.Resolution = &end, strp("P1D")
	commitOutOfBand(t, tb, []meterstore.Row{day})
	before := len(readAll(t, tb))

	res, err := tb.Compact(ctx, CompactOptions{Month: w, OpenMonthFiles: 1})
	var foreign *ForeignIntervalError
	require.True(t, errors.As(err, &foreign), "compacted %+v: %v", res, err)
	var overlap *hot.OverlapError
	require.True(t, errors.As(err, &overlap), "%v", err)
	require.ErrorIs(t, err, meterstore.ErrOverlap)
	for _, want := range []string{malos[0], "no_overlap across tiers", formatWatermark(day.From), formatWatermark(quarter.From), "remove"} {
		require.ErrorContains(t, err, want)
	}
	t.Logf("refused: %v", err)
	require.Empty(t, res.Partitions)
	require.Len(t, readAll(t, tb), before, "nothing rewritten")
	parts, err := tb.Partitions(ctx)
	require.NoError(t, err)
	require.Len(t, parts, 1)
	require.Equal(t, 2, parts[0].Files, "the archived file and the foreign one, not a compaction's")
}

// commitOutOfBand adds rows to tb in files and a commit of its own that
// keeps the watermark, as another writer of the Iceberg table would: no rule
// of either tier is asked.
func commitOutOfBand(t *testing.T, tb *Table, rows []meterstore.Row) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, tb.Refresh(ctx))
	files, err := tb.writeFiles(ctx, tb.Iceberg(), rowPages(rows, 1000), defaultBounds)
	require.NoError(t, err)
	tx := tb.Iceberg().NewTransaction()
	require.NoError(t, tx.AddDataFiles(ctx, files, iceberg.Properties{WatermarkProperty: formatWatermark(*mustWatermark(t, tb))}))
	_, err = tb.commitTx(ctx, tx, "out-of-band append")
	require.NoError(t, err)
}
