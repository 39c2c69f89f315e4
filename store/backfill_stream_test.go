package store_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
)

// seriesPages yields its pages in turn.
type seriesPages [][]meterstore.StoredSeries

func (p *seriesPages) Next(context.Context) ([]meterstore.StoredSeries, error) {
	if len(*p) == 0 {
		return nil, io.EOF
	}
	page := (*p)[0]
	*p = (*p)[1:]
	return page, nil
}

// BackfillFrom commits what Backfill commits, page by page: identical
// redeliveries once, the watermark in the same commit, every rule of the
// write paths held, and a source out of order refused — nothing committed
// by a refused one.
func TestBackfillFromCommitsAsBackfill(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl := e.st.Tables()[0]
	day1 := day0.Add(24 * time.Hour)
	a := mk(t, dl{from: day0, n: 96, value: "1.000", step: "0.001"})
	b := mk(t, dl{malo: maloB, from: day0.Add(6 * time.Hour), n: 8, value: "2.5"})
	win, dups, err := tbl.BackfillFrom(e.ctx, day1, &seriesPages{{a}, {a, b}})
	require.NoError(t, err)
	require.Equal(t, 96, dups)
	require.EqualValues(t, 96+8, win.Rows)
	w, err := tbl.Watermark(e.ctx)
	require.NoError(t, err)
	require.True(t, w.Equal(day1))
	require.Equal(t, "120.560", dec(t, e.scalar(t, `SELECT sum(value) FROM readings`)).StringFixed(3))

	day2 := day1.Add(24 * time.Hour)
	for _, c := range []struct {
		pages seriesPages
		want  error
	}{
		{seriesPages{{mk(t, dl{from: day0, n: 2, value: "9"})}}, catalog.ErrBelowWatermark},
		{seriesPages{{mk(t, dl{from: day2, n: 2, value: "9"})}}, catalog.ErrAboveWatermark},
		{seriesPages{{mk(t, dl{from: day1, n: 2, value: "1"})}, {mk(t, dl{from: day1, n: 2, value: "2"})}}, catalog.ErrRestatement},
		{seriesPages{{mk(t, dl{from: day1, n: 2, value: "1"}), mk(t, dl{from: day1.Add(15 * time.Minute), n: 2, value: "1", op: op2})}}, catalog.ErrSecondOperator},
		{seriesPages{{mk(t, dl{malo: maloB, from: day1, n: 2, value: "1"})}, {mk(t, dl{from: day1, n: 2, value: "1"})}}, catalog.ErrHistoryOrder},
	} {
		_, _, err = tbl.BackfillFrom(e.ctx, day2, &c.pages)
		require.ErrorIs(t, err, c.want)
	}
	w, err = tbl.Watermark(e.ctx)
	require.NoError(t, err)
	require.True(t, w.Equal(day1), "nothing committed")
	require.EqualValues(t, 104, e.scalar(t, `SELECT count(*) FROM readings`))
}
