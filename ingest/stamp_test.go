package ingest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/store"
)

// The report says which clock stamped recorded_at: rows that carry none get
// the store's clock at the import's start, rows that carry one keep it.
func TestReportSaysWhoStampedRecordedAt(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	dir := t.TempDir()
	plain := writeFile(t, dir, "plain.csv", append([]string{header}, quarterHours(maloA, hotDay, 4, "20260319000001", func(int) string { return "1" })...)...)
	own := []string{header + ",recorded_at"}
	for _, l := range quarterHours(maloB, hotDay, 2, "20260319000001", func(int) string { return "2" }) {
		own = append(own, l+",2026-03-19T08:00:00Z")
	}
	carried := writeFile(t, dir, "carried.csv", own...)

	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, plain, carried)
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())
	require.Equal(t, 4, rep.Stamped)
	require.Equal(t, now, rep.StampedAt)
	require.Equal(t, store.StoreClock, rep.StampClock)
	require.Contains(t, rep.String(), "recorded_at: 4 rows stamped 2026-03-20T12:00:00Z by the store's clock, 2 carried their own")
	require.Equal(t, int64(4), scalar(t, st, "SELECT count(*) FROM readings_versions WHERE recorded_at = $1", now))
	require.Equal(t, int64(2), scalar(t, st, "SELECT count(*) FROM readings_versions WHERE recorded_at = $1", time.Date(2026, 3, 19, 8, 0, 0, 0, time.UTC)))

	rep, err = ingest.Files(ctx, st.Store, ingest.Options{DryRun: true, Now: func() time.Time { return now.Add(time.Minute) }}, plain)
	require.NoError(t, err)
	require.Equal(t, store.CallerClock, rep.StampClock)
	require.Contains(t, rep.String(), "recorded_at: 4 rows stamped 2026-03-20T12:01:00Z by Options.Now, 0 carried their own")
}
