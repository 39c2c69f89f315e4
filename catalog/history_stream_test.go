package catalog

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

func historyOrdered(rows []meterstore.Row) []meterstore.Row {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b meterstore.Row) int { return CompareHistoryOrder(&a, &b) })
	return rows
}

// A history streamed in pages that cut channels' months anywhere is
// committed as CommitHistory commits it: once, an identical redelivery
// written once and counted, rows PostgreSQL held merged in.
func TestCommitHistoryFromWritesWhatCommitHistoryWrites(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	rows := genRows(time.Date(2025, 1, 30, 0, 0, 0, 0, time.UTC), 400, "tenant01", 20250210000001)
	held := rows[len(rows)-5:]
	src := historyOrdered(append(slices.Clone(rows[:len(rows)-5]), rows[7]))
	f, err := tb.Fence(ctx, nil)
	require.NoError(t, err)

	res, dups, err := tb.CommitHistoryFrom(ctx, f, MergeHistory(&SliceSource{Rows: src, PageSize: 37}, held), time.Date(2025, 2, 10, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, 1, dups)
	require.EqualValues(t, len(rows), res.Rows)
	require.Equal(t, rowSet(rows), rowSet(readAll(t, tb)))
	w, err := tb.Watermark(ctx)
	require.NoError(t, err)
	require.True(t, w.Equal(time.Date(2025, 2, 10, 0, 0, 0, 0, time.UTC)), "watermark %s", w)
}

// An interval reaching over a month's end is checked against the next
// month's rows: an hour from 23:30 on 31 January overlaps the quarter-hour
// at midnight of 1 February at the same version, in another partition and
// another unit of the stream, and the history is refused — nothing committed.
func TestCommitHistoryFromCarriesIntervalsOverMonthEnds(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	const v = 20250210000001
	hour := mkRow(malos[0], "tenant01", time.Date(2025, 1, 31, 23, 30, 0, 0, time.UTC), "4", v, opA)
	end := hour.From.Add(time.Hour)
	hour.To, hour.Resolution = &end, strp("PT1H")
	q := mkRow(malos[0], "tenant01", time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), "1", v, opA)
	q.VersionScope = hour.VersionScope
	f, err := tb.Fence(ctx, nil)
	require.NoError(t, err)

	_, _, err = tb.CommitHistoryFrom(ctx, f, &SliceSource{Rows: []meterstore.Row{hour, q}, PageSize: 1}, time.Date(2025, 2, 10, 0, 0, 0, 0, time.UTC))
	require.ErrorIs(t, err, meterstore.ErrOverlap)
	require.ErrorContains(t, err, "[2025-01-31T23:30:00Z, 2025-02-01T00:30:00Z)")
	require.Empty(t, readAll(t, tb))

	_, _, err = tb.CommitHistoryFrom(ctx, f, &SliceSource{Rows: []meterstore.Row{q, hour}}, time.Date(2025, 2, 10, 0, 0, 0, 0, time.UTC))
	require.ErrorIs(t, err, ErrHistoryOrder)
	require.Empty(t, readAll(t, tb))
}
