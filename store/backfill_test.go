package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/catalog"
)

// Backfill commits settled history straight to Iceberg, one window per call,
// as archival would have: identical redeliveries once, the watermark in the
// same commit, every rule of the write paths held; afterwards Append,
// archival and late corrections carry on as usual.
func TestBackfillCommitsSettledHistory(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl := e.st.Tables()[0]
	day1 := day0.Add(24 * time.Hour)
	a := mk(t, dl{from: day0, n: 96, value: "1.000", step: "0.001"})
	b := mk(t, dl{malo: maloB, from: day0.Add(6 * time.Hour), n: 8, value: "2.5"})
	win, dups, err := tbl.Backfill(e.ctx, day1, a, b, a) // a redelivered
	require.NoError(t, err)
	require.Equal(t, 96, dups)
	require.EqualValues(t, 96+8, win.Rows)
	require.True(t, win.Watermark.Equal(day1))
	w, err := tbl.Watermark(e.ctx)
	require.NoError(t, err)
	require.True(t, w.Equal(day1))
	require.EqualValues(t, 104, e.scalar(t, `SELECT count(*) FROM readings`))
	require.Equal(t, "120.560", dec(t, e.scalar(t, `SELECT sum(value) FROM readings`)).StringFixed(3), "96 × 1 + 0.001 × (0+…+95) + 8 × 2.5")
	inHot, err := tbl.Hot().RowsBelow(e.ctx, day0.AddDate(10, 0, 0))
	require.NoError(t, err)
	require.Zero(t, inHot, "history is in Iceberg only")

	// Refused, writing nothing: rows below the watermark (late corrections go
	// through Append), rows at or above until, a restatement, a second operator,
	// until off a partition boundary.
	day2 := day1.Add(24 * time.Hour)
	_, _, err = tbl.Backfill(e.ctx, day2, mk(t, dl{from: day0, n: 2, value: "9"}))
	require.ErrorIs(t, err, catalog.ErrBelowWatermark)
	_, _, err = tbl.Backfill(e.ctx, day2, mk(t, dl{from: day2, n: 2, value: "9"}))
	require.ErrorIs(t, err, catalog.ErrAboveWatermark)
	_, _, err = tbl.Backfill(e.ctx, day2, mk(t, dl{from: day1, n: 2, value: "1"}), mk(t, dl{from: day1, n: 2, value: "2"}))
	require.ErrorIs(t, err, catalog.ErrRestatement)
	_, _, err = tbl.Backfill(e.ctx, day2, mk(t, dl{from: day1, n: 2, value: "1"}), mk(t, dl{from: day1.Add(15 * time.Minute), n: 2, value: "1", op: op2}))
	require.ErrorIs(t, err, catalog.ErrSecondOperator)
	_, _, err = tbl.Backfill(e.ctx, day2.Add(time.Hour), mk(t, dl{from: day1, n: 2, value: "1"}))
	require.ErrorContains(t, err, "not a partition boundary")
	w, err = tbl.Watermark(e.ctx)
	require.NoError(t, err)
	require.True(t, w.Equal(day1), "nothing committed")

	// The hot window through Append; a backfill over hot rows is refused, since
	// the new watermark would hide them.
	_, err = tbl.Append(e.ctx, mk(t, dl{from: day1.Add(time.Hour), n: 4, value: "3"}))
	require.NoError(t, err)
	_, _, err = tbl.Backfill(e.ctx, day2, mk(t, dl{malo: maloB, from: day1, n: 2, value: "1"}))
	require.ErrorIs(t, err, archive.ErrInvariant)

	// A late correction below the watermark goes to Iceberg through Append,
	// and archival moves the hot day as usual.
	co, err := tbl.Append(e.ctx, mk(t, dl{from: day0, n: 2, value: "5", version: 20260301000002}))
	require.NoError(t, err)
	require.Equal(t, 2, co.ColdRows)
	e.archiveThrough(t, tbl, day2)
	e.healthy(t, tbl)
	require.EqualValues(t, 104+4, e.scalar(t, `SELECT count(*) FROM readings`))
	require.Equal(t, "5.000", dec(t, e.scalar(t, `SELECT value FROM readings WHERE malo_id = $1 AND "from" = $2`, maloA, day0)).StringFixed(3))
}

// EXPLAIN counts the files a plan pruned against the whole snapshot: a MaLo
// equality and a range each keep one of the two windows' files.
func TestExplainCountsPrunedFiles(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl := e.st.Tables()[0]
	day1, day2 := day0.Add(24*time.Hour), day0.Add(48*time.Hour)
	_, _, err := tbl.Backfill(e.ctx, day1, mk(t, dl{from: day0, n: 8, value: "1"}))
	require.NoError(t, err)
	_, _, err = tbl.Backfill(e.ctx, day2, mk(t, dl{malo: maloB, from: day1, n: 8, value: "2"}))
	require.NoError(t, err)
	all, _, err := tbl.Cold().PlanFiles(e.ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	require.Len(t, all, 2)
	for q, want := range map[string]string{
		`SELECT count(*) FROM readings`:                                                     "2 files kept, 0 pruned",
		`SELECT count(*) FROM readings WHERE malo_id = '` + maloB + `'`:                     "1 files kept, 1 pruned",
		`SELECT count(*) FROM readings WHERE "from" < TIMESTAMPTZ '2026-03-02 06:00:00+00'`: "1 files kept, 1 pruned",
		`SELECT count(*) FROM readings WHERE malo_id = 'nobody'`:                            "0 files kept, 2 pruned",
	} {
		text, err := e.st.Engine().Explain(e.ctx, q)
		require.NoError(t, err)
		require.Contains(t, text, want, q)
	}
}

// A predicate on the stored balancing day prunes files through the calendar:
// its rows' "from" lie between 00:00 local that day and 06:00 local the next
// (a gas day), whatever their Sparte; and the answer is the unpruned one.
func TestBalancingDayPrunesFiles(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl := e.st.Tables()[0]
	day1, day2 := day0.Add(24*time.Hour), day0.Add(48*time.Hour)
	// 2 Mar 01:00–03:00 Berlin (balancing day 2 Mar); 3 Mar 07:00–09:00 Berlin (3 Mar).
	_, _, err := tbl.Backfill(e.ctx, day1, mk(t, dl{from: day0, n: 8, value: "1"}))
	require.NoError(t, err)
	_, _, err = tbl.Backfill(e.ctx, day2, mk(t, dl{malo: maloB, from: day1.Add(6 * time.Hour), n: 8, value: "2"}))
	require.NoError(t, err)
	for _, c := range []struct {
		where, explain string
		rows           int64
	}{
		{`balancing_day = DATE '2026-03-02'`, "1 files kept, 1 pruned", 8},
		{`balancing_day = '2026-03-03'`, "1 files kept, 1 pruned", 8},
		{`meter_balancing_day("from", sparte) = DATE '2026-03-03'`, "1 files kept, 1 pruned", 8},
		{`balancing_day >= DATE '2026-03-03'`, "1 files kept, 1 pruned", 8},
		{`balancing_day < DATE '2026-03-03'`, "1 files kept, 1 pruned", 8},
		{`balancing_day BETWEEN DATE '2026-03-01' AND DATE '2026-03-02'`, "1 files kept, 1 pruned", 8},
		{`balancing_day > DATE '2026-03-03'`, "0 files kept, 2 pruned", 0},
		// A timestamp is compared as one (the day 2 Mar is below its noon): no day bound.
		{`balancing_day < TIMESTAMP '2026-03-02 12:00:00'`, "2 files kept, 0 pruned", 8},
	} {
		q := `SELECT count(*) FROM readings WHERE ` + c.where
		text, err := e.st.Engine().Explain(e.ctx, q)
		require.NoError(t, err)
		plan, _, _ := strings.Cut(text, "\nprovenance:")
		require.Contains(t, plan, c.explain, c.where)
		require.EqualValues(t, c.rows, e.scalar(t, q), c.where)
	}
}
