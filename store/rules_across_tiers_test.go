package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

// An interval archived with its "from" below the watermark may reach above it
// (a gas day, 05:00Z–05:00Z, archived with the UTC day it starts in). The hot
// tier's no_overlap and its cross-partition check compare PostgreSQL's rows
// only, and the cold checks Iceberg's only, so an interval of the same reading
// at the same version on the other side of the watermark is taken by neither
// — and every sum over the overlap counts it twice.

// TestHotRefusesOverlapWithAnArchivedStraddler: the day value is archived,
// then a quarter-hour inside it, above the watermark, goes to PostgreSQL.
func TestHotRefusesOverlapWithAnArchivedStraddler(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	const v = 20260302000001
	_, err := e.st.Append(e.ctx, spans(t, imp, op1, v, span{day0.Add(23 * time.Hour), day0.Add(47 * time.Hour), "24"}))
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(24*time.Hour))
	at := day0.Add(30 * time.Hour)
	out, err := e.st.Append(e.ctx, spans(t, imp, op1, v, span{at, at.Add(15 * time.Minute), "1"}))
	require.ErrorIs(t, err, meterstore.ErrOverlap, "outcome %v, hot rows %d", effects(out), out.HotRows)
	require.Equal(t, "24", dec(t, e.scalar(t, `SELECT sum(value) FROM readings`)).String())
}

// TestColdRefusesAStraddlerOverHotRows: a quarter-hour is stored above the
// watermark, then a late correction at the same version starting below the
// watermark reaches over it.
func TestColdRefusesAStraddlerOverHotRows(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	const v = 20260302000001
	_, err := e.st.Append(e.ctx, mk(t, dl{malo: maloB, from: day0, value: "2"}))
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(24*time.Hour))
	at := day0.Add(30 * time.Hour)
	_, err = e.st.Append(e.ctx, spans(t, imp, op1, v, span{at, at.Add(15 * time.Minute), "1"}))
	require.NoError(t, err)
	out, err := e.st.Append(e.ctx, spans(t, imp, op1, v, span{day0.Add(23 * time.Hour), day0.Add(47 * time.Hour), "24"}))
	require.ErrorIs(t, err, meterstore.ErrOverlap, "outcome %v, cold rows %d", effects(out), out.ColdRows)
	require.Equal(t, "1", dec(t, e.scalar(t, `SELECT sum(value) FROM readings WHERE malo_id = $1`, maloA)).String())
}
