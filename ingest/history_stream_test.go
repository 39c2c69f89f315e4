package ingest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// hoursOfTwoYears are the hours of 2024 and 2025.
const hoursOfTwoYears = (366 + 365) * 24

// historyParquet writes two years of hourly rows of maloA and maloB, the
// latest first and the MaLos interleaved — the order the streamed path must
// not rely on; quality(malo, hour) is each row's quality.
func historyParquet(t *testing.T, st *storetest.Store, name, quality string) string {
	return parquetFrom(t, st, filepath.Join(t.TempDir(), name), fmt.Sprintf(`
		SELECT CASE WHEN i %% 2 = 0 THEN '%s' ELSE '%s' END AS malo_id, '%s' AS obis_code, 'STROM' AS sparte,
		       TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_hours(i // 2) AS "from",
		       TIMESTAMPTZ '2024-01-01 01:00:00+00' + to_hours(i // 2) AS "to",
		       CAST('0.5' AS DECIMAL(18,6)) AS value, 'KWH' AS unit, %s AS quality,
		       CAST(20260101000001 AS DECIMAL(20,0)) AS version, '%s' AS operator
		FROM range(2 * %d) r(i) ORDER BY i DESC`, maloA, maloB, obisIn, quality, op, hoursOfTwoYears))
}

// Two years of history from Parquet go in through the streamed history path
// in one commit, a file per month, and what the importer holds at once is a
// page and one channel's month — not the file: the bound is the same
// whatever the file's months.
func TestHistoryIsStreamedAChannelMonthAtATime(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	const page = 500
	most, pages := 0, 0
	ingest.SetHistoryPaging(t, page, func(held int) { most, pages = max(most, held), pages+1 })
	pq := historyParquet(t, st, "history.parquet", "'MEASURED'")
	before, err := st.Table().Cold.Snapshots(ctx)
	require.NoError(t, err)

	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, pq)
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())
	rows := 2 * hoursOfTwoYears
	require.Equal(t, rows, rep.Rows)
	require.Equal(t, rows, rep.BulkRows)
	require.Equal(t, 1, rep.BulkCommits)
	require.Equal(t, rows, rep.Inserted)
	require.Equal(t, 2*25, rep.Batches, "a batch per MaLo and balancing month: the last hour is January 2026's")

	channelMonth := 31 * 24
	require.LessOrEqual(t, most, page+channelMonth, "held at once: a page and the channel's month it began")
	require.GreaterOrEqual(t, pages, rows/(page+channelMonth), "handed over a page at a time")

	after, err := st.Table().Cold.Snapshots(ctx)
	require.NoError(t, err)
	require.Len(t, after, len(before)+1, "one commit")
	w, err := st.Store.Tables()[0].Watermark(ctx)
	require.NoError(t, err)
	require.True(t, w.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), "watermark %s", w)
	files, _, err := st.Table().Cold.PlanFiles(ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	require.Len(t, files, 24, "one file per month")
	for _, m := range []string{maloA, maloB} {
		require.Equal(t, fmt.Sprintf("%d.000000", hoursOfTwoYears/2), decimalOf(t, scalar(t, st, `SELECT sum(value) FROM readings WHERE malo_id = $1`, m)))
	}

	again, err := ingest.Files(ctx, st.Store, ingest.Options{}, pq)
	require.NoError(t, err)
	require.Equal(t, rows, again.Duplicate, again.String())
	require.False(t, again.Changed())
}

// A batch of the history with a bad row is refused before anything is
// written, naming the row as the file numbers it; the others go in streamed.
func TestStreamedHistoryRefusesABatchBeforeWriting(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	streamed := false
	ingest.SetHistoryPaging(t, 1000, func(int) { streamed = true })
	// maloB's hour 2025-06-10 12:00 UTC: file row 2*(hours-h)-1 counted from 1, latest first.
	bad := int(time.Date(2025, 6, 10, 12, 0, 0, 0, time.UTC).Sub(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)).Hours())
	pq := historyParquet(t, st, "bad.parquet", fmt.Sprintf("CASE WHEN i = %d THEN 'SO-SO' ELSE 'MEASURED' END", 2*bad+1))

	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, pq)
	require.NoError(t, err)
	require.True(t, streamed)
	require.Len(t, rep.Refused, 1, rep.String())
	r := rep.Refused[0]
	require.Contains(t, r.Batch, "malo_id "+maloB)
	require.Contains(t, r.Batch, ":2025-06")
	require.Equal(t, fmt.Sprintf("row %d, column quality", 2*hoursOfTwoYears-(2*bad+1)), r.Where)
	require.Equal(t, 30*24, r.Rows)
	require.Equal(t, 2*hoursOfTwoYears-30*24, rep.BulkRows)
	require.EqualValues(t, 0, scalar(t, st, `SELECT count(*) FROM readings WHERE malo_id = $1 AND "from" >= '2025-05-31 22:00:00+00' AND "from" < '2025-06-30 22:00:00+00'`, maloB))
	require.EqualValues(t, 30*24, scalar(t, st, `SELECT count(*) FROM readings WHERE malo_id = $1 AND "from" >= '2025-05-31 22:00:00+00' AND "from" < '2025-06-30 22:00:00+00'`, maloA))
}

// A delivery stating one interval twice is refused as the whole read
// refuses it (the intervals of one version overlap) — the streamed commit
// finds it while writing, so nothing of it is committed and the file is read
// whole; the rest goes in as history in one commit.
func TestStreamedHistoryRefusedWhileWritingFallsBackToTheWholeRead(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	streamed := false
	ingest.SetHistoryPaging(t, 100, func(int) { streamed = true })
	pq := parquetFrom(t, st, filepath.Join(t.TempDir(), "twice.parquet"), fmt.Sprintf(`
		SELECT '%s' AS malo_id, '%s' AS obis_code, 'STROM' AS sparte,
		       TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_hours(i) AS "from",
		       TIMESTAMPTZ '2025-01-01 01:00:00+00' + to_hours(i) AS "to",
		       CAST('1' AS DECIMAL(18,6)) AS value, 'KWH' AS unit, 'MEASURED' AS quality,
		       CAST(20260101000001 AS DECIMAL(20,0)) AS version, '%s' AS operator
		FROM range(2000) r(i)
		UNION ALL SELECT '%s', '%s', 'STROM', TIMESTAMPTZ '2025-01-05 00:00:00+00', TIMESTAMPTZ '2025-01-05 01:00:00+00',
		       CAST('2' AS DECIMAL(18,6)), 'KWH', 'MEASURED', CAST(20260101000001 AS DECIMAL(20,0)), '%s'`,
		maloA, obisIn, op, maloA, obisIn, op))
	before, err := st.Table().Cold.Snapshots(ctx)
	require.NoError(t, err)

	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, pq)
	require.NoError(t, err)
	require.True(t, streamed)
	require.Len(t, rep.Refused, 1, rep.String())
	require.ErrorIs(t, rep.Refused[0], metering.ErrOverlap)
	require.Contains(t, rep.Refused[0].Batch, ":2025-01")
	after, err := st.Table().Cold.Snapshots(ctx)
	require.NoError(t, err)
	require.Len(t, after, len(before)+1, "one commit: the history without the refused batch")
	require.EqualValues(t, 0, scalar(t, st, `SELECT count(*) FROM readings WHERE "from" < '2025-01-31 23:00:00+00'`))
	require.EqualValues(t, rep.BulkRows, scalar(t, st, `SELECT count(*) FROM readings`))
	require.Positive(t, rep.BulkRows)
}

// historyCSV writes hours hourly rows of maloA and maloB from from on, the
// latest first and the MaLos interleaved; at formats each row's "from" and
// "to".
func historyCSV(t *testing.T, name string, from time.Time, hours int, at func(time.Time) string) string {
	lines := []string{header}
	for h := hours - 1; h >= 0; h-- {
		f := from.Add(time.Duration(h) * time.Hour)
		for _, m := range []string{maloA, maloB} {
			lines = append(lines, fmt.Sprintf("%s,%s,STROM,%s,%s,0.5,KWH,MEASURED,20260101000001,%s", m, obisIn, at(f), at(f.Add(time.Hour)), op))
		}
	}
	return writeFile(t, t.TempDir(), name, lines...)
}

// A CSV file of history is streamed as a Parquet file is: one commit, a page
// and a channel's month held at once, its rows in whole — read in the order
// of its instants, not of its text (the offsets change at the DST switches).
func TestCSVHistoryIsStreamed(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	const page = 500
	most, pages := 0, 0
	ingest.SetHistoryPaging(t, page, func(held int) { most, pages = max(most, held), pages+1 })
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	csv := historyCSV(t, "history.csv", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), hoursOfTwoYears,
		func(t time.Time) string { return t.In(berlin).Format(time.RFC3339) })

	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, csv)
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())
	rows := 2 * hoursOfTwoYears
	require.Equal(t, rows, rep.Rows)
	require.Equal(t, rows, rep.BulkRows)
	require.Equal(t, 1, rep.BulkCommits)
	require.Equal(t, rows, rep.Inserted)
	require.Empty(t, rep.Notes)
	channelMonth := 31 * 24
	require.LessOrEqual(t, most, page+channelMonth, "held at once: a page and the channel's month it began")
	require.GreaterOrEqual(t, pages, rows/(page+channelMonth), "handed over a page at a time")
	files, _, err := st.Table().Cold.PlanFiles(ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	require.Len(t, files, 24, "one file per month")
	for _, m := range []string{maloA, maloB} {
		require.Equal(t, fmt.Sprintf("%d.000000", hoursOfTwoYears/2), decimalOf(t, scalar(t, st, `SELECT sum(value) FROM readings WHERE malo_id = $1`, m)))
	}
}

// Naive CSV timestamps read in Options.TimeZone are streamed in the order of
// the instants they are there.
func TestCSVHistoryInATimeZoneIsStreamed(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	pages := 0
	ingest.SetHistoryPaging(t, 100, func(int) { pages++ })
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	hours := 59 * 24 // January and February 2025 in Berlin: no DST switch
	csv := historyCSV(t, "naive.csv", time.Date(2024, 12, 31, 23, 0, 0, 0, time.UTC), hours,
		func(t time.Time) string { return t.In(berlin).Format("2006-01-02 15:04:05") })

	rep, err := ingest.Files(ctx, st.Store, ingest.Options{TimeZone: berlin}, csv)
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())
	require.Equal(t, 2*hours, rep.BulkRows)
	require.Equal(t, 1, rep.BulkCommits)
	require.Positive(t, pages)
	first := scalar(t, st, `SELECT min("from") FROM readings`).(time.Time)
	require.True(t, first.Equal(time.Date(2024, 12, 31, 23, 0, 0, 0, time.UTC)), "2025-01-01 00:00 in Berlin, got %s", first)
	require.EqualValues(t, 2*hours, scalar(t, st, `SELECT count(*) FROM readings`))
}

// The sort of the second read orders channels by their text, the parse by
// their canonical code: a channel spelled 1-0:01.29.0 and 1-0:1.29.0 sorts
// on either side of 1-0:02.29.0, so the second read meets the channel's
// month again after another channel's (errOutOfOrder). The file is then read
// whole, not committed in pieces: every row goes in, once, in one commit.
func TestHistorySortedOtherwiseThanParsedIsReadWhole(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	streamed := false
	ingest.SetHistoryPaging(t, 100, func(int) { streamed = true })
	pq := parquetFrom(t, st, filepath.Join(t.TempDir(), "spelled.parquet"), fmt.Sprintf(`
		SELECT '%s' AS malo_id, CASE WHEN i %% 3 = 0 THEN '1-0:02.29.0' WHEN i %% 3 = 1 THEN '1-0:01.29.0' ELSE '1-0:1.29.0' END AS obis_code,
		       'STROM' AS sparte,
		       TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_hours(i // 3 * 2 + CASE WHEN i %% 3 = 2 THEN 1 ELSE 0 END) AS "from",
		       TIMESTAMPTZ '2025-01-01 01:00:00+00' + to_hours(i // 3 * 2 + CASE WHEN i %% 3 = 2 THEN 1 ELSE 0 END) AS "to",
		       CAST('1' AS DECIMAL(18,6)) AS value, 'KWH' AS unit, 'MEASURED' AS quality,
		       CAST(20260101000001 AS DECIMAL(20,0)) AS version, '%s' AS operator
		FROM range(3 * 1000) r(i)`, maloA, op))
	before, err := st.Table().Cold.Snapshots(ctx)
	require.NoError(t, err)

	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, pq)
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())
	require.True(t, streamed, "the second read began")
	require.Equal(t, 3000, rep.BulkRows)
	require.Equal(t, 3000, rep.Inserted)
	after, err := st.Table().Cold.Snapshots(ctx)
	require.NoError(t, err)
	require.Len(t, after, len(before)+1, "one commit")
	require.EqualValues(t, 2000, scalar(t, st, `SELECT count(*) FROM readings WHERE obis_code = '1-0:1.29.0'`))
	require.EqualValues(t, 1000, scalar(t, st, `SELECT count(*) FROM readings WHERE obis_code = '1-0:2.29.0'`))
	require.EqualValues(t, 3000, scalar(t, st, `SELECT count(DISTINCT (obis_code, "from")) FROM readings`))
}

// The streamed path keeps the bulk path's file order within a channel
// (TestTheBulkPathKeepsFileOrderWithinAChannel) inside one file: its
// history commit comes before the routed write of the file's other
// batches, so a batch it takes would stand against an earlier batch of the
// same channel it does not take. Here maloB's batch from operator op
// reaches past the bulk boundary (13 March) and a later batch of the same
// quarter-hours of the 12th from another operator lies below it: the later
// one is refused — one operator per reading — while maloA's history is still
// streamed in one commit.
func TestTheStreamedPathKeepsFileOrderWithinAChannel(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	streamed := false
	ingest.SetHistoryPaging(t, 100, func(int) { streamed = true })
	const version, other = "20260314000001", "9904768000008"
	from := time.Date(2026, 3, 12, 22, 0, 0, 0, time.UTC)
	lines := append([]string{header}, quarterHours(maloA, time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), 3*96, version, func(int) string { return "1" })...)
	lines = append(lines, quarterHours(maloB, from, 12, version, func(int) string { return "1" })...)
	for _, l := range quarterHours(maloB, from, 4, version, func(int) string { return "2" }) {
		lines = append(lines, strings.TrimSuffix(l, op)+other)
	}
	f := writeFile(t, t.TempDir(), "one.csv", lines...)

	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, f)
	require.NoError(t, err)
	require.True(t, streamed, "the file is streamed")
	require.Equal(t, 3*96, rep.BulkRows, rep.String())
	require.Len(t, rep.Refused, 1, rep.String())
	require.Contains(t, rep.Refused[0].Batch, "version_scope "+other, "the later batch is refused: %s", rep.String())
	require.Equal(t, "12.000000", decimalOf(t, scalar(t, st, `SELECT sum(value) FROM readings WHERE malo_id = $1`, maloB)))
}
