package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/testkit/rulecases"
)

// span is one interval of a hand-built delivery.
type span struct {
	from, to time.Time
	value    string
}

// spans builds one electricity delivery of arbitrary intervals (no declared
// resolution, so an hour and quarter-hours may share a channel).
func spans(t testing.TB, obis, op string, version uint64, ivs ...span) meterstore.StoredSeries {
	t.Helper()
	malo, err := metering.ParseMaloID(maloA)
	require.NoError(t, err)
	o, err := metering.ParseObis(obis)
	require.NoError(t, err)
	bo, err := metering.ParseBdewCode(op)
	require.NoError(t, err)
	src, err := metering.SourceMscons(bo, "MSCONS-RULES")
	require.NoError(t, err)
	v, err := metering.NewVersion(version)
	require.NoError(t, err)
	d := metering.Delivery{MaloID: malo, Obis: o, Sparte: metering.SparteStrom, Unit: metering.UnitKWh, Source: src,
		Scope: metering.ScopeFor(bo, ivs[0].from, metering.SparteStrom), Version: v, RecordedAt: ivs[0].from.Add(48 * time.Hour)}
	for _, s := range ivs {
		d.Intervals = append(d.Intervals, metering.Interval{From: s.from, To: s.to, Value: decimal.RequireFromString(s.value), Quality: metering.QualityMeasured})
	}
	return meterstore.StoredSeries{Delivery: d}
}

// An hour stored at version V and archived, then the quarter-hours inside it
// delivered at V as a late correction: PostgreSQL's no_overlap refuses the
// pair, so the cold tier must too — else the hour sums to 1+2+2+2 = 7.
func TestColdRefusesQuarterHoursInsideAnArchivedHour(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	const v = 20260302000001
	_, err := e.st.Append(e.ctx, spans(t, imp, op1, v, span{day0, day0.Add(time.Hour), "1"}))
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(24*time.Hour))

	q := func(i int) span {
		f := day0.Add(time.Duration(i) * 15 * time.Minute)
		return span{f, f.Add(15 * time.Minute), "2"}
	}
	out, err := e.st.Append(e.ctx, spans(t, imp, op1, v, q(1), q(2), q(3)))
	require.ErrorIs(t, err, meterstore.ErrOverlap, "outcome %v", effects(out))
	require.Equal(t, "1", dec(t, e.scalar(t, `SELECT sum(value) FROM readings WHERE "from" >= $1 AND "from" < $2`, day0, day0.Add(time.Hour))).String())
}

// A day value archived with its "from" below the watermark reaches above it:
// history loaded above the watermark is checked against it.
func TestHistoryRefusesOverlapWithAStoredStraddler(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	e.archivedStraddler(t)
	_, _, err := tbl.Backfill(e.ctx, day0.Add(48*time.Hour), quarterHourInStraddler(t, op1, straddlerVersion))
	require.ErrorIs(t, err, meterstore.ErrOverlap)
	_, _, err = tbl.Backfill(e.ctx, day0.Add(48*time.Hour), quarterHourInStraddler(t, op1, straddlerVersion+1))
	require.NoError(t, err, "a higher version may overlap")
}

// ruleDelivery is d of a rule case whose base is base, at versions from
// 20260302000001.
func ruleDelivery(t testing.TB, base time.Time, d rulecases.Delivery) meterstore.StoredSeries {
	t.Helper()
	obis, op := imp, op1
	if d.Reading == rulecases.Export {
		obis = exp
	}
	if d.Operator == rulecases.SecondOperator {
		op = op2
	}
	ivs := make([]span, len(d.Intervals))
	for i, x := range d.Intervals {
		ivs[i] = span{base.Add(x.From), base.Add(x.To), x.Value}
	}
	s := spans(t, obis, op, 20260302000001+d.Version, ivs...)
	if d.WithMelo {
		melo, err := metering.ParseMeloID(meloA)
		require.NoError(t, err)
		s.Delivery.MeloID = melo
	}
	return s
}

// ruleDeliveries is ds of a rule case whose base is base.
func ruleDeliveries(t testing.TB, base time.Time, ds []rulecases.Delivery) []meterstore.StoredSeries {
	out := make([]meterstore.StoredSeries, len(ds))
	for i, d := range ds {
		out[i] = ruleDelivery(t, base, d)
	}
	return out
}

// TestColdRefusesWhatHotRefuses runs every case of rulecases — the refusals
// of the hot tier's constraints, which hot's tests run through PostgreSQL —
// through each write path — PostgreSQL, a late correction into
// Iceberg (Append below the watermark), a history load (Backfill) — and
// expects the same rule's sentinel from each, with nothing written.
func TestColdRefusesWhatHotRefuses(t *testing.T) {
	cases := rulecases.Cases()
	base := func(i int) time.Time { return day0.Add(time.Duration(i) * rulecases.Span) }
	end := base(len(cases))
	check := func(t *testing.T, e *env, c rulecases.Case, err error) {
		t.Helper()
		if c.Want == nil {
			require.NoError(t, err)
			return
		}
		require.ErrorIs(t, err, c.Want)
		require.ErrorIs(t, err, meterstore.ErrConflict)
		t.Logf("refused: %v", err)
	}
	count := func(t *testing.T, e *env) int64 {
		t.Helper()
		return e.scalar(t, `SELECT count(*) FROM readings_versions`).(int64)
	}
	t.Run("path=hot", func(t *testing.T) {
		e := open(t, nil, intervalTable(t, nil))
		for i, c := range cases {
			if len(c.Stored) > 0 {
				_, err := e.st.Append(e.ctx, ruleDeliveries(t, base(i), c.Stored)...)
				require.NoError(t, err, c.Name)
			}
		}
		for i, c := range cases {
			t.Run(c.Name, func(t *testing.T) {
				before := count(t, e)
				_, err := e.st.Append(e.ctx, ruleDeliveries(t, base(i), c.Offered)...)
				check(t, e, c, err)
				if c.Want != nil {
					require.Equal(t, before, count(t, e), "nothing written")
				}
			})
		}
	})
	t.Run("path=late-correction", func(t *testing.T) {
		e := open(t, nil, intervalTable(t, nil))
		tbl, _ := e.st.Table("readings_versions")
		for i, c := range cases {
			if len(c.Stored) > 0 {
				_, err := e.st.Append(e.ctx, ruleDeliveries(t, base(i), c.Stored)...)
				require.NoError(t, err, c.Name)
			}
		}
		e.archiveThrough(t, tbl, end)
		for i, c := range cases {
			t.Run(c.Name, func(t *testing.T) {
				before := count(t, e)
				out, err := e.st.Append(e.ctx, ruleDeliveries(t, base(i), c.Offered)...)
				check(t, e, c, err)
				if c.Want != nil {
					require.Equal(t, before, count(t, e), "nothing written")
					return
				}
				require.Zero(t, out.HotRows, "every row went to Iceberg")
			})
		}
	})
	t.Run("path=history", func(t *testing.T) {
		e := open(t, nil, intervalTable(t, nil))
		tbl, _ := e.st.Table("readings_versions")
		for i, c := range cases {
			t.Run(c.Name, func(t *testing.T) {
				all := ruleDeliveries(t, base(i), append(slices.Clone(c.Stored), c.Offered...))
				before := count(t, e)
				_, _, err := tbl.Backfill(e.ctx, base(i+1), all...)
				check(t, e, c, err)
				if c.Want != nil {
					require.Equal(t, before, count(t, e), "nothing written")
				}
			})
		}
	})
}
