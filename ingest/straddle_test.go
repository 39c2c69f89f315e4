package ingest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/ingest"
)

// A batch with rows on both sides of the watermark goes in as two halves,
// each whole or refused alone, and the report says what is stored: here the
// half at or above the watermark restates a stored PostgreSQL row under its
// version and is refused, while the half below went to Iceberg — counted in
// the report, as readings shows it.
func TestBatchAcrossTheWatermarkGoesInAsTwoHalves(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	dir := t.TempDir()
	w := historyToTheWatermark(t, st)

	stored := writeFile(t, dir, "stored.csv", append([]string{header},
		quarterHours(maloB, w, 1, "20260314000001", func(int) string { return "1" })...)...)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, stored)
	require.NoError(t, err)
	require.Equal(t, 1, rep.HotRows, rep.String())

	// One batch (maloB, March): four quarter-hours below the watermark, four
	// from it, the first of which restates the stored row with another value.
	across := writeFile(t, dir, "across.csv", append([]string{header},
		quarterHours(maloB, w.Add(-time.Hour), 8, "20260314000001", func(int) string { return "2" })...)...)
	rep, err = ingest.Files(ctx, st.Store, ingest.Options{}, across)
	require.NoError(t, err)
	require.EqualValues(t, rep.ColdRows, scalar(t, st, `SELECT count(*) FROM readings WHERE malo_id = $1 AND "from" < $2`, maloB, w),
		"the report counts what readings holds below the watermark")
	require.Len(t, rep.Refused, 1, rep.String())
	require.Contains(t, rep.Refused[0].Batch, "rows from the watermark 2026-03-13T00:00:00Z")
	require.Equal(t, 4, rep.Refused[0].Rows)
	require.Equal(t, 2, rep.Batches, "one batch read, written as two halves")
	require.Contains(t, rep.String(), "went in as two each")
	require.Equal(t, 4, rep.Rows)
	require.Equal(t, 4, rep.ColdRows)
	require.Zero(t, rep.HotRows)
	require.Equal(t, 4, rep.Inserted)

	require.EqualValues(t, 1, scalar(t, st, `SELECT count(*) FROM readings WHERE malo_id = $1 AND "from" >= $2`, maloB, w))
	require.Equal(t, "1.000000", decimalOf(t, scalar(t, st, `SELECT sum(value) FROM readings WHERE malo_id = $1 AND "from" >= $2`, maloB, w)))
}
