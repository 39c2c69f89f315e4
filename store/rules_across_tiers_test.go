package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/store"
)

// An interval archived with its "from" below the watermark may reach above it
// (a gas day, 05:00Z–05:00Z, archived with the UTC day it starts in). The hot
// tier's no_overlap and its cross-partition check compare PostgreSQL's rows
// only, and the cold checks Iceberg's only, so an interval of the same reading
// at the same version on the other side of the watermark is taken by neither
// — and every sum over the overlap counts it twice.

const straddlerVersion = 20260302000001

// straddler is a day value of maloA's import channel by op at version,
// 23:00–23:00 UTC from day0: archived with day0, it reaches above the
// watermark day0+24h.
func straddler(t testing.TB, op string, version uint64) meterstore.StoredSeries {
	return spans(t, imp, op, version, span{day0.Add(23 * time.Hour), day0.Add(47 * time.Hour), "24"})
}

// quarterHourInStraddler is the quarter-hour at 06:00 of the day after day0,
// by op at version: inside the straddler, above the watermark.
func quarterHourInStraddler(t testing.TB, op string, version uint64) meterstore.StoredSeries {
	at := day0.Add(30 * time.Hour)
	return spans(t, imp, op, version, span{at, at.Add(15 * time.Minute), "1"})
}

// archivedStraddler stores operator 1's straddler and archives day0.
func (e *env) archivedStraddler(t testing.TB) {
	t.Helper()
	tbl, _ := e.st.Table("readings_versions")
	_, err := e.st.Append(e.ctx, straddler(t, op1, straddlerVersion))
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(24*time.Hour))
}

// hotQuarterHourAboveADay archives day0 (another MaLo's rows) and stores
// op's quarter-hour in the straddler's span above the watermark.
func (e *env) hotQuarterHourAboveADay(t testing.TB, op string) {
	t.Helper()
	tbl, _ := e.st.Table("readings_versions")
	_, err := e.st.Append(e.ctx, mk(t, dl{malo: maloB, from: day0, value: "2"}))
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(24*time.Hour))
	_, err = e.st.Append(e.ctx, quarterHourInStraddler(t, op, straddlerVersion))
	require.NoError(t, err)
}

// TestHotRefusesOverlapWithAnArchivedStraddler: the day value is archived,
// then a quarter-hour inside it, above the watermark, goes to PostgreSQL.
func TestHotRefusesOverlapWithAnArchivedStraddler(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	e.archivedStraddler(t)
	out, err := e.st.Append(e.ctx, quarterHourInStraddler(t, op1, straddlerVersion))
	require.ErrorIs(t, err, meterstore.ErrOverlap, "outcome %v, hot rows %d", effects(out), out.HotRows)
	require.Equal(t, "24", dec(t, e.scalar(t, `SELECT sum(value) FROM readings`)).String())
}

// TestColdRefusesAStraddlerOverHotRows: a quarter-hour is stored above the
// watermark, then a late correction at the same version starting below the
// watermark reaches over it.
func TestColdRefusesAStraddlerOverHotRows(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	e.hotQuarterHourAboveADay(t, op1)
	out, err := e.st.Append(e.ctx, straddler(t, op1, straddlerVersion))
	require.ErrorIs(t, err, meterstore.ErrOverlap, "outcome %v, cold rows %d", effects(out), out.ColdRows)
	require.Equal(t, "1", dec(t, e.scalar(t, `SELECT sum(value) FROM readings WHERE malo_id = $1`, maloA)).String())
}

// One network operator per reading holds across the watermark as the cold
// tier holds it within itself: an interval of another operator overlapping
// one of the other tier is refused, whatever the versions — else both
// operators' scopes survive resolution and every sum over the overlap counts
// both.

// TestHotRefusesASecondOperatorInsideAnArchivedStraddler: operator 1's day
// value is archived; operator 2's quarter-hour inside it goes to PostgreSQL.
func TestHotRefusesASecondOperatorInsideAnArchivedStraddler(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	e.archivedStraddler(t)
	out, err := e.st.Append(e.ctx, quarterHourInStraddler(t, op2, straddlerVersion+1))
	require.ErrorIs(t, err, meterstore.ErrSecondOperator, "outcome %v, hot rows %d", effects(out), out.HotRows)
	require.Equal(t, "24", dec(t, e.scalar(t, `SELECT sum(value) FROM readings_versions`)).String())
}

// TestColdRefusesAStraddlerOfASecondOperatorOverHotRows: operator 2's
// quarter-hour is stored above the watermark, then operator 1's day value
// starting below it reaches over it as a late correction.
func TestColdRefusesAStraddlerOfASecondOperatorOverHotRows(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	e.hotQuarterHourAboveADay(t, op2)
	out, err := e.st.Append(e.ctx, straddler(t, op1, straddlerVersion+1))
	require.ErrorIs(t, err, meterstore.ErrSecondOperator, "outcome %v, cold rows %d", effects(out), out.ColdRows)
	require.Equal(t, "1", dec(t, e.scalar(t, `SELECT sum(value) FROM readings_versions WHERE malo_id = $1`, maloA)).String())
}

// A history ends at a partition boundary below every row PostgreSQL holds,
// but an interval of it may reach above that end (a gas day loaded with the
// UTC day it starts in), over rows PostgreSQL holds: the history load checks
// them, in both its forms, for the same reading at the same version and for
// a second operator.
func TestHistoryRefusesConflictsWithHotRows(t *testing.T) {
	const v = straddlerVersion
	day1 := day0.Add(24 * time.Hour)
	gasDay := func(op string, version uint64) meterstore.StoredSeries { return straddler(t, op, version) }
	loads := map[string]func(e *env, tbl *store.Table, s meterstore.StoredSeries) error{
		"Backfill": func(e *env, tbl *store.Table, s meterstore.StoredSeries) error {
			_, _, err := tbl.Backfill(e.ctx, day1, s)
			return err
		},
		"BackfillFrom": func(e *env, tbl *store.Table, s meterstore.StoredSeries) error {
			_, _, err := tbl.BackfillFrom(e.ctx, day1, &seriesPages{{s}})
			return err
		},
	}
	cases := []struct {
		name    string
		hotOp   string
		history meterstore.StoredSeries
		want    error
	}{
		{"same reading and version", op1, gasDay(op1, v), meterstore.ErrOverlap},
		{"second operator", op2, gasDay(op1, v+1), meterstore.ErrSecondOperator},
		{"control: a higher version of the same operator", op1, gasDay(op1, v+1), nil},
	}
	for name, load := range loads {
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				e := open(t, nil, intervalTable(t, nil))
				tbl, _ := e.st.Table("readings_versions")
				_, err := e.st.Append(e.ctx, quarterHourInStraddler(t, c.hotOp, v))
				require.NoError(t, err)
				err = load(e, tbl, c.history)
				if c.want == nil {
					require.NoError(t, err)
					return
				}
				require.ErrorIs(t, err, c.want)
				t.Logf("refused: %v", err)
				w, err := tbl.Watermark(e.ctx)
				require.NoError(t, err)
				require.True(t, w.IsZero(), "nothing committed: watermark %s", w)
				require.Equal(t, "1", dec(t, e.scalar(t, `SELECT sum(value) FROM readings_versions`)).String())
			})
		}
	}
}
