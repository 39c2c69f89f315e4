package store_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
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

// ruleCase is a write one of the hot tier's constraints refuses (or, for the
// controls, accepts): stored is written first, offered after it in one call.
type ruleCase struct {
	name            string
	stored, offered func(base time.Time) []meterstore.StoredSeries
	want            error // nil: accepted
}

// ruleCases are the refusals hot/'s tests expect of PostgreSQL's exclusion
// constraints and primary key (write_test.go, straddle_test.go), as
// deliveries starting at base; each case gets two UTC days of its own.
// A day value archived with its "from" below the watermark reaches above it:
// history loaded above the watermark is checked against it.
func TestHistoryRefusesOverlapWithAStoredStraddler(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	const v = 20260302000001
	_, err := e.st.Append(e.ctx, spans(t, imp, op1, v, span{day0.Add(23 * time.Hour), day0.Add(47 * time.Hour), "24"}))
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(24*time.Hour))
	at := day0.Add(30 * time.Hour)
	_, _, err = tbl.Backfill(e.ctx, day0.Add(48*time.Hour), spans(t, imp, op1, v, span{at, at.Add(15 * time.Minute), "1"}))
	require.ErrorIs(t, err, meterstore.ErrOverlap)
	_, _, err = tbl.Backfill(e.ctx, day0.Add(48*time.Hour), spans(t, imp, op1, v+1, span{at, at.Add(15 * time.Minute), "1"}))
	require.NoError(t, err, "a higher version may overlap")
}

func ruleCases(t testing.TB) []ruleCase {
	const v = 20260302000001
	q := func(base time.Time, i int, value string) span {
		f := base.Add(time.Duration(i) * 15 * time.Minute)
		return span{f, f.Add(15 * time.Minute), value}
	}
	qs := func(base time.Time, from, n int) []span {
		var out []span
		for i := from; i < from+n; i++ {
			out = append(out, q(base, i, "1"))
		}
		return out
	}
	one := func(s ...meterstore.StoredSeries) []meterstore.StoredSeries { return s }
	hour := func(at time.Time) span { return span{at, at.Add(time.Hour), "4"} }
	return []ruleCase{
		{"quarter-hours inside a stored hour",
			func(b time.Time) []meterstore.StoredSeries { return one(spans(t, imp, op1, v, hour(b))) },
			func(b time.Time) []meterstore.StoredSeries { return one(spans(t, imp, op1, v, qs(b, 1, 3)...)) },
			meterstore.ErrOverlap},
		{"hour over stored quarter-hours not sharing its start",
			func(b time.Time) []meterstore.StoredSeries { return one(spans(t, imp, op1, v, qs(b, 1, 4)...)) },
			func(b time.Time) []meterstore.StoredSeries { return one(spans(t, imp, op1, v, hour(b))) },
			meterstore.ErrOverlap},
		{"hour and quarter-hours in one call, not sharing a start", nil,
			func(b time.Time) []meterstore.StoredSeries {
				return one(spans(t, imp, op1, v, qs(b, 1, 4)...), spans(t, imp, op1, v, hour(b)))
			},
			meterstore.ErrOverlap},
		{"hour and quarter-hours in one call, sharing a start", nil,
			func(b time.Time) []meterstore.StoredSeries {
				return one(spans(t, imp, op1, v, qs(b, 0, 4)...), spans(t, imp, op1, v, hour(b)))
			},
			meterstore.ErrRestatement},
		{"quarter-hour inside a stored hour crossing a partition boundary",
			func(b time.Time) []meterstore.StoredSeries {
				return one(spans(t, imp, op1, v, hour(b.Add(24*time.Hour-30*time.Minute))))
			},
			func(b time.Time) []meterstore.StoredSeries {
				return one(spans(t, imp, op1, v, q(b.Add(24*time.Hour), 1, "1")))
			},
			meterstore.ErrOverlap},
		{"quarter-hour inside a stored day",
			func(b time.Time) []meterstore.StoredSeries {
				return one(spans(t, imp, op1, v, span{b.Add(23 * time.Hour), b.Add(47 * time.Hour), "24"}))
			},
			func(b time.Time) []meterstore.StoredSeries {
				return one(spans(t, imp, op1, v, q(b.Add(30*time.Hour), 0, "1")))
			},
			meterstore.ErrOverlap},
		{"second operator",
			func(b time.Time) []meterstore.StoredSeries { return one(spans(t, imp, op1, v, q(b, 0, "1"))) },
			func(b time.Time) []meterstore.StoredSeries { return one(spans(t, imp, op2, v+1, q(b, 0, "1.1"))) },
			meterstore.ErrSecondOperator},
		{"conflicting restatement",
			func(b time.Time) []meterstore.StoredSeries { return one(spans(t, imp, op1, v, q(b, 0, "1"))) },
			func(b time.Time) []meterstore.StoredSeries { return one(spans(t, imp, op1, v, q(b, 0, "1.000001"))) },
			meterstore.ErrRestatement},
		{"conflicting restatement in one call", nil,
			func(b time.Time) []meterstore.StoredSeries {
				return one(spans(t, imp, op1, v, q(b, 0, "1")), spans(t, imp, op1, v, q(b, 0, "2")))
			},
			meterstore.ErrRestatement},
		{"control: a higher version may overlap",
			func(b time.Time) []meterstore.StoredSeries { return one(spans(t, imp, op1, v, hour(b))) },
			func(b time.Time) []meterstore.StoredSeries { return one(spans(t, imp, op1, v+1, qs(b, 1, 3)...)) },
			nil},
		{"control: an adjacent interval at the same version",
			func(b time.Time) []meterstore.StoredSeries { return one(spans(t, imp, op1, v, hour(b))) },
			func(b time.Time) []meterstore.StoredSeries { return one(spans(t, imp, op1, v, q(b, 4, "1"))) },
			nil},
		{"control: another reading over the same span",
			func(b time.Time) []meterstore.StoredSeries { return one(spans(t, imp, op1, v, hour(b))) },
			func(b time.Time) []meterstore.StoredSeries { return one(spans(t, exp, op1, v, qs(b, 1, 3)...)) },
			nil},
	}
}

// TestColdRefusesWhatHotRefuses runs every refusal of the hot tier's
// constraints through each write path — PostgreSQL, a late correction into
// Iceberg (Append below the watermark), a history load (Backfill) — and
// expects the same rule's sentinel from each, with nothing written.
func TestColdRefusesWhatHotRefuses(t *testing.T) {
	cases := ruleCases(t)
	base := func(i int) time.Time { return day0.Add(time.Duration(2*i) * 24 * time.Hour) }
	end := base(len(cases))
	check := func(t *testing.T, e *env, c ruleCase, err error) {
		t.Helper()
		if c.want == nil {
			require.NoError(t, err)
			return
		}
		require.ErrorIs(t, err, c.want)
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
			if c.stored != nil {
				_, err := e.st.Append(e.ctx, c.stored(base(i))...)
				require.NoError(t, err, c.name)
			}
		}
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				before := count(t, e)
				_, err := e.st.Append(e.ctx, c.offered(base(i))...)
				check(t, e, c, err)
				if c.want != nil {
					require.Equal(t, before, count(t, e), "nothing written")
				}
			})
		}
	})
	t.Run("path=late-correction", func(t *testing.T) {
		e := open(t, nil, intervalTable(t, nil))
		tbl, _ := e.st.Table("readings_versions")
		for i, c := range cases {
			if c.stored != nil {
				_, err := e.st.Append(e.ctx, c.stored(base(i))...)
				require.NoError(t, err, c.name)
			}
		}
		e.archiveThrough(t, tbl, end)
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				before := count(t, e)
				out, err := e.st.Append(e.ctx, c.offered(base(i))...)
				check(t, e, c, err)
				if c.want != nil {
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
			t.Run(c.name, func(t *testing.T) {
				var all []meterstore.StoredSeries
				if c.stored != nil {
					all = c.stored(base(i))
				}
				all = append(all, c.offered(base(i))...)
				before := count(t, e)
				_, _, err := tbl.Backfill(e.ctx, base(i+1), all...)
				check(t, e, c, err)
				if c.want != nil {
					require.Equal(t, before, count(t, e), "nothing written")
				}
			})
		}
	})
}
