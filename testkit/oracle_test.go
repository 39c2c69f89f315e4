package testkit

import (
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
)

var (
	opA = mustBdew("9910125000002")
	opB = mustBdew("9904768000008")
	// 2026-03-02 00:00 Berlin.
	day0 = time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)
)

func mustBdew(s string) metering.BdewCode {
	c, err := metering.ParseBdewCode(s)
	if err != nil {
		panic(err)
	}
	return c
}

type spec struct {
	op       metering.BdewCode
	malo     string
	melo     string
	sparte   metering.Sparte
	res      metering.Resolution
	version  uint64
	recorded time.Time
	tenant   string
	start    time.Time
	values   []string
	quality  metering.Quality
}

// series builds a delivery of consecutive intervals from start.
func series(t *testing.T, s spec) meterstore.StoredSeries {
	t.Helper()
	if s.malo == "" {
		s.malo = "41373559241"
	}
	if s.sparte == 0 {
		s.sparte = metering.SparteStrom
	}
	if s.res.IsZero() {
		s.res = metering.ResolutionPT15M
	}
	if s.start.IsZero() {
		s.start = day0
	}
	if s.quality == 0 {
		s.quality = metering.QualityMeasured
	}
	malo, err := metering.ParseMaloID(s.malo)
	require.NoError(t, err)
	v, err := metering.NewVersion(s.version)
	require.NoError(t, err)
	step, _ := s.res.Fixed()
	var ivs []metering.Interval
	for i, x := range s.values {
		f := s.start.Add(time.Duration(i) * step)
		iv, err := metering.NewInterval(f, f.Add(step), decimal.RequireFromString(x), s.quality)
		require.NoError(t, err)
		ivs = append(ivs, iv)
	}
	src, err := metering.SourceMscons(s.op, "T1")
	require.NoError(t, err)
	unit := s.sparte.MeasuredUnit()
	if s.sparte == metering.SparteGas {
		unit = metering.UnitKWh
	}
	d := metering.Delivery{MaloID: malo, Obis: ObisImport, Sparte: s.sparte, Unit: unit, Resolution: s.res,
		Intervals: ivs, Source: src, Scope: metering.ScopeFor(s.op, s.start, s.sparte), Version: v, RecordedAt: s.recorded}
	if s.melo != "" {
		d.MeloID, err = metering.ParseMeloID(s.melo)
		require.NoError(t, err)
	}
	out := meterstore.StoredSeries{Delivery: d}
	if s.tenant != "" {
		out.Extra = map[string]string{"tenant": s.tenant}
	}
	return out
}

func record(t *testing.T, o *Oracle, ss ...meterstore.StoredSeries) Recorded {
	t.Helper()
	r, err := o.RecordSeries(ss...)
	require.NoError(t, err)
	return r
}

func values(rows []meterstore.Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Value.String())
	}
	return out
}

func plainTable() meterstore.TableConfig {
	return meterstore.TableSpec{Name: "readings_versions"}.MustBuild()
}

var (
	t1 = day0.Add(30 * time.Hour)
	t2 = t1.Add(72 * time.Hour)
)

func TestOracleLatestVersionWins(t *testing.T) {
	v1 := series(t, spec{op: opA, version: 20260302000001, recorded: t1, values: []string{"1", "2"}})
	v2 := series(t, spec{op: opA, version: 20260302000002, recorded: t2, values: []string{"10", "20"}})
	for _, order := range [][]meterstore.StoredSeries{{v1, v2}, {v2, v1}} {
		o := NewOracle(plainTable())
		record(t, o, order...)
		require.Equal(t, []string{"10", "20"}, values(o.Winners(time.Time{}, time.Time{})), "recording order does not matter")
		require.Equal(t, 2, o.RowCount(day0, day0.Add(time.Hour)))
		require.Equal(t, 4, o.RawRowCount(day0, day0.Add(time.Hour)))
		require.Equal(t, 1, o.RowCount(day0, day0.Add(15*time.Minute)), "from in [from, to)")
		require.Equal(t, "30", o.Sum(time.Time{}, time.Time{}).String())
		require.Equal(t, "33", o.NaiveSum(time.Time{}, time.Time{}).String())
		sums := o.SumsByMaloChannelDay(time.Time{}, time.Time{})
		require.Equal(t, map[MaloChannelDay]decimal.Decimal{
			{"41373559241", "1-0:1.29.0", metering.Date{Year: 2026, Month: 3, Day: 2}}: decimal.RequireFromString("30"),
		}, sums)
	}
}

func TestOracleResolvesPerScope(t *testing.T) {
	// A second operator's rows for the same reading are another scope: both
	// survive resolution (the inflation the GiST constraint exists to stop).
	o := NewOracle(plainTable())
	record(t, o,
		series(t, spec{op: opA, version: 20260302000001, recorded: t1, values: []string{"1"}}),
		series(t, spec{op: opA, version: 20260302000002, recorded: t1, values: []string{"2"}}),
		series(t, spec{op: opB, version: 20260302000003, recorded: t1, values: []string{"5"}}))
	w := o.Winners(time.Time{}, time.Time{})
	require.Equal(t, []string{"5", "2"}, values(w), "ordered by scope; operator 9904768000008 first")
	require.Equal(t, "7", o.Sum(time.Time{}, time.Time{}).String())

	// The same (merge key, version) in another scope is a different assertion: refused.
	_, err := o.RecordSeries(series(t, spec{op: opB, version: 20260302000001, recorded: t1, values: []string{"1"}}))
	require.ErrorContains(t, err, "conflicting restatement")
}

func TestOracleCeilings(t *testing.T) {
	o := NewOracle(plainTable())
	record(t, o,
		series(t, spec{op: opA, version: 20260302000001, recorded: t1, values: []string{"1", "2"}}),
		series(t, spec{op: opA, version: 20260302000002, recorded: t2, values: []string{"10", "20"}}),
		// A reading first delivered late.
		series(t, spec{op: opA, version: 20260302000002, recorded: t2, start: day0.Add(time.Hour), values: []string{"7"}}))

	all := time.Time{}
	require.Equal(t, []string{"10", "20", "7"}, values(o.Current().Winners(all, all)))
	require.Equal(t, []string{"1", "2"}, values(o.With(Ceiling{MaxVersion: 20260302000001}).Winners(all, all)))
	require.Equal(t, []string{"1", "2"}, values(o.KnownAt(t2.Add(-time.Microsecond))), "a later correction and a later reading are invisible")
	require.Equal(t, []string{"10", "20", "7"}, values(o.KnownAt(t2)), "recorded_at ≤ t")
	require.Empty(t, o.KnownAt(t1.Add(-time.Second)))
	both := o.With(Ceiling{MaxVersion: 20260302000001, KnownAt: t2})
	require.Equal(t, 2, both.RowCount(all, all))
	require.Equal(t, 2, both.RawRowCount(all, all))
	require.Equal(t, "3", both.NaiveSum(all, all).String())
	require.Equal(t, 5, o.RawRowCount(all, all))
}

func TestOracleRedeliveryIsIdempotent(t *testing.T) {
	o := NewOracle(plainTable())
	s := series(t, spec{op: opA, version: 20260302000001, recorded: t1, values: []string{"1", "2"}})
	require.Equal(t, Recorded{New: 2}, record(t, o, s))
	require.Equal(t, Recorded{Duplicate: 2}, record(t, o, s))
	// The same assertion recorded later (another message) keeps the first row.
	later := s
	later.RecordedAt = t2
	require.Equal(t, Recorded{Duplicate: 2}, record(t, o, later))
	require.Equal(t, 2, o.RawRowCount(time.Time{}, time.Time{}))
	require.Len(t, o.KnownAt(t1), 2, "the first recording's recorded_at stands")
}

func TestOracleRefusesConflictAtomically(t *testing.T) {
	o := NewOracle(plainTable())
	record(t, o, series(t, spec{op: opA, version: 20260302000001, recorded: t1, values: []string{"1"}}))
	other := series(t, spec{op: opA, version: 20260302000001, recorded: t1, values: []string{"1.5", "3"}})
	rows, err := plainTable().Encode(other)
	require.NoError(t, err)
	_, err = o.Record(rows[1], rows[0])
	require.ErrorContains(t, err, "conflicting restatement")
	require.Equal(t, 1, o.RawRowCount(time.Time{}, time.Time{}), "nothing of a refused call is recorded")
}

func TestOracleTenantsAreSeparateReadings(t *testing.T) {
	cfg := meterstore.TableSpec{Name: "readings_versions",
		Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}}}.MustBuild()
	o := NewOracle(cfg)
	record(t, o,
		series(t, spec{op: opA, version: 20260302000001, recorded: t1, tenant: "a", values: []string{"1"}}),
		series(t, spec{op: opA, version: 20260302000001, recorded: t1, tenant: "b", values: []string{"4"}}),
		series(t, spec{op: opA, version: 20260302000002, recorded: t2, tenant: "a", values: []string{"2"}}))
	require.Equal(t, []string{"2", "4"}, values(o.Winners(time.Time{}, time.Time{})), "a's correction leaves b's reading")
	by := o.SumBy(time.Time{}, time.Time{}, func(r meterstore.Row) string { return *r.Extra[0] })
	require.Equal(t, "2", by["a"].String())
	require.Equal(t, "4", by["b"].String())
	_, err := o.RecordSeries(series(t, spec{op: opA, version: 20260302000003, recorded: t2, values: []string{"1"}}))
	require.Error(t, err, "an identity column is NOT NULL")
}

func TestOracleIdentifyByMelo(t *testing.T) {
	yes := true
	cfg := meterstore.TableSpec{Name: "readings_versions", IdentifyByMelo: &yes}.MustBuild()
	o := NewOracle(cfg)
	record(t, o,
		series(t, spec{op: opA, version: 20260302000001, recorded: t1, melo: "DE00056266802AO6G56M11SN51G21M24S", values: []string{"1"}}),
		series(t, spec{op: opA, version: 20260302000002, recorded: t1, melo: "DE00056266802AO6G56M11SN51G21M24T", values: []string{"3"}}))
	require.Equal(t, 2, o.RowCount(time.Time{}, time.Time{}), "two MeLos are two readings")

	plain := NewOracle(plainTable())
	record(t, plain,
		series(t, spec{op: opA, version: 20260302000001, recorded: t1, melo: "DE00056266802AO6G56M11SN51G21M24S", values: []string{"1"}}),
		series(t, spec{op: opA, version: 20260302000002, recorded: t1, melo: "DE00056266802AO6G56M11SN51G21M24T", values: []string{"3"}}))
	require.Equal(t, []string{"3"}, values(plain.Winners(time.Time{}, time.Time{})), "melo is an attribute there")
}

// TestOracleAgainstGeneratedBatch folds the batch by hand — latest delivery
// per (MaLo, channel, tenant, day) — and compares with the oracle, and checks
// that the naive sum differs exactly where corrections exist.
func TestOracleAgainstGeneratedBatch(t *testing.T) {
	for _, rate := range []float64{0, 0.1} {
		w := richWorkload(31)
		w.CorrectionRate = rate
		b := generate(t, w)
		o := NewOracle(w.IntervalTable("readings_versions").MustBuild())
		res, err := o.RecordDeliveries(b.Deliveries...)
		require.NoError(t, err)

		latest := map[groupKey]Delivery{}
		corrected := map[MaloChannelDay]bool{}
		originalRows, redelivered := 0, 0
		for _, d := range b.Deliveries {
			k := keyOf(d)
			switch d.Kind {
			case Original:
				originalRows += len(d.Series.Intervals)
				if _, ok := latest[k]; !ok {
					latest[k] = d
				}
			case Correction:
				latest[k] = d
				corrected[MaloChannelDay{k.malo, k.obis, k.day}] = true
			case Redelivery:
				redelivered += len(d.Series.Intervals)
			}
		}
		require.Equal(t, redelivered, res.Duplicate, "every redelivered row is a duplicate")
		want := decimal.Zero
		rows := 0
		for _, d := range latest {
			for _, iv := range d.Series.Intervals {
				want = want.Add(iv.Value)
				rows++
			}
		}
		all := time.Time{}
		require.True(t, want.Equal(o.Sum(all, all)), "hand fold %s, oracle %s", want, o.Sum(all, all))
		require.Equal(t, rows, o.RowCount(all, all))
		require.Equal(t, originalRows, rows)

		naive := map[MaloChannelDay]decimal.Decimal{}
		for _, r := range o.Current().Versions(all, all) {
			k := MaloChannelDay{r.MaloID, r.ObisCode, metering.DateOf(r.BalancingDay)}
			naive[k] = naive[k].Add(r.Value)
		}
		resolved := o.SumsByMaloChannelDay(all, all)
		require.Equal(t, len(naive), len(resolved))
		for k, v := range resolved {
			require.Equal(t, corrected[k], !v.Equal(naive[k]), "%v: naive %s resolved %s", k, naive[k], v)
		}
		if rate == 0 {
			require.True(t, o.NaiveSum(all, all).Equal(o.Sum(all, all)))
		} else {
			require.NotEmpty(t, corrected)
			require.True(t, o.NaiveSum(all, all).GreaterThan(o.Sum(all, all)))
			// Known just before the first correction, nothing is superseded yet.
			var first time.Time
			for _, d := range b.Deliveries {
				if d.Kind == Correction {
					first = d.Series.RecordedAt
					break
				}
			}
			before := o.With(Ceiling{KnownAt: first.Add(-time.Microsecond)})
			require.True(t, before.NaiveSum(all, all).Equal(before.Sum(all, all)))
		}
	}
}

func completenessFor(rows []CompletenessRow, sparte, res string) []CompletenessRow {
	var out []CompletenessRow
	for _, r := range rows {
		if r.Sparte == sparte && r.Resolution == res {
			out = append(out, r)
		}
	}
	return out
}

func date(y int, m time.Month, d int) metering.Date { return metering.Date{Year: y, Month: m, Day: d} }

func TestCompletenessOnDSTAndGasDays(t *testing.T) {
	cases := []struct {
		name     string
		start    time.Time
		day      metering.Date
		sparte   string
		res      string
		expected int
	}{
		{"autumn electricity day", DefaultStart, date(2025, 10, 26), "STROM", "PT15M", 100},
		{"autumn Saturday electricity", DefaultStart, date(2025, 10, 25), "STROM", "PT15M", 96},
		{"autumn gas day is the Saturday", DefaultStart, date(2025, 10, 25), "GAS", "PT15M", 100},
		{"autumn Sunday gas day", DefaultStart, date(2025, 10, 26), "GAS", "PT15M", 96},
		{"autumn heat follows the calendar day", DefaultStart, date(2025, 10, 26), "WAERME", "PT15M", 100},
		{"autumn 1-minute", DefaultStart, date(2025, 10, 26), "STROM", "PT1M", 1500},
		{"ordinary 1-minute", DefaultStart, date(2025, 10, 27), "STROM", "PT1M", 1440},
		{"spring electricity day", time.Date(2025, 3, 27, 23, 0, 0, 0, time.UTC), date(2025, 3, 30), "STROM", "PT15M", 92},
		{"spring gas day is the Saturday", time.Date(2025, 3, 27, 23, 0, 0, 0, time.UTC), date(2025, 3, 29), "GAS", "PT15M", 92},
		{"spring 1-minute", time.Date(2025, 3, 27, 23, 0, 0, 0, time.UTC), date(2025, 3, 30), "STROM", "PT1M", 1380},
	}
	oracles := map[time.Time]*Oracle{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := oracles[c.start]
			if o == nil {
				w := NewWorkload(41)
				w.Start, w.Days, w.MaLos, w.MinuteShare, w.SubstitutedRate = c.start, 5, 16, 0.3, 0.05
				w.CorrectionRate, w.RedeliveryRate = 0.2, 0.2
				b := generate(t, w)
				o = NewOracle(w.IntervalTable("readings_versions").MustBuild())
				_, err := o.RecordDeliveries(b.Deliveries...)
				require.NoError(t, err)
				oracles[c.start] = o
			}
			rows := completenessFor(o.Completeness(c.day, c.day.AddDays(1)), c.sparte, c.res)
			require.NotEmpty(t, rows)
			for _, r := range rows {
				require.Equal(t, c.expected, r.Expected, "%+v", r)
				require.Equal(t, c.expected, r.Actual, "%+v", r)
				require.True(t, r.Complete)
				require.Zero(t, r.Missing)
				require.Zero(t, r.Surplus)
				require.True(t, r.FirstGap.IsZero())
				require.Zero(t, r.NotBillable, "MEASURED and SUBSTITUTED are billable")
			}
		})
	}
}

func TestCompletenessCountsGapsAndQuality(t *testing.T) {
	w := NewWorkload(43)
	w.GapRate, w.SubstitutedRate, w.CorrectionRate = 0.03, 0.05, 0.1
	b := generate(t, w)
	o := NewOracle(w.IntervalTable("readings_versions").MustBuild())
	_, err := o.RecordDeliveries(b.Deliveries...)
	require.NoError(t, err)
	from, to := b.Days[0], b.Days[len(b.Days)-1].AddDays(1)

	type sk struct{ malo, obis string }
	delivered := map[sk]int{}
	substituted := map[sk]int{}
	firstGap := map[sk]metering.Date{}
	latest := map[groupKey]Delivery{}
	for _, d := range b.Deliveries {
		if d.Kind == Original || d.Kind == Correction {
			latest[keyOf(d)] = d
		}
	}
	for k, d := range latest {
		s := sk{k.malo, k.obis}
		delivered[s] += len(d.Series.Intervals)
		for _, iv := range d.Series.Intervals {
			if iv.Quality == metering.QualitySubstituted {
				substituted[s]++
			}
		}
		n, err := metering.ExpectedIntervals(k.day, d.Series.Resolution, d.Series.Sparte)
		require.NoError(t, err)
		if len(d.Series.Intervals) < n && (firstGap[s].IsZero() || k.day.Compare(firstGap[s]) < 0) {
			firstGap[s] = k.day
		}
	}
	rows := o.Completeness(from, to)
	require.Len(t, rows, len(delivered))
	incomplete := 0
	for _, r := range rows {
		s := sk{r.MaloID, r.ObisCode}
		require.Equal(t, delivered[s], r.Actual)
		require.Equal(t, r.Expected-r.Actual, r.Missing, "no surplus here, so missing is the shortfall")
		require.Zero(t, r.Surplus)
		require.Equal(t, substituted[s], r.Substituted)
		require.Equal(t, firstGap[s], r.FirstGap)
		require.Equal(t, r.Missing == 0, r.Complete)
		if !r.Complete {
			incomplete++
		}
	}
	require.Positive(t, incomplete)
}

func TestCompletenessNeverNetsSurplusAgainstMissing(t *testing.T) {
	o := NewOracle(plainTable())
	full := make([]string, 96)
	for i := range full {
		full[i] = "0.1"
	}
	day1 := date(2026, 3, 2)
	record(t, o,
		// Day 1 complete at version 1, plus a partial re-grid at version 2
		// shifted by five minutes: four more winners on the same span.
		series(t, spec{op: opA, version: 20260302000001, recorded: t1, values: full}),
		series(t, spec{op: opA, version: 20260302000002, recorded: t2, start: day0.Add(5 * time.Minute), values: []string{"1", "1", "1", "1"}}),
		// Day 2 four intervals short, one FAULTY value.
		series(t, spec{op: opA, version: 20260303000001, recorded: t2, start: day0.Add(24 * time.Hour), values: full[:92]}),
		series(t, spec{op: opA, version: 20260303000001, recorded: t2, start: day0.Add(47 * time.Hour), values: []string{"9"}, quality: metering.QualityFaulty}),
	)
	rows := o.Completeness(day1, day1.AddDays(2))
	require.Len(t, rows, 1)
	r := rows[0]
	require.Equal(t, 192, r.Expected)
	require.Equal(t, 100+93, r.Actual)
	require.Equal(t, 3, r.Missing)
	require.Equal(t, 4, r.Surplus)
	require.Equal(t, day1.AddDays(1), r.FirstGap)
	require.Equal(t, 1, r.NotBillable)
	require.False(t, r.Complete)

	// Gas balances 06:00 to 06:00: 05:45 local on 3 March is still the 2 March gas day.
	g := NewOracle(plainTable())
	gasStart, _ := metering.DayBounds(day1, metering.SparteGas)
	gas := make([]string, 96)
	for i := range gas {
		gas[i] = "0.5"
	}
	record(t, g, series(t, spec{op: opA, malo: "11000000007", sparte: metering.SparteGas, version: 20260302000001, recorded: t2, start: gasStart, values: gas}))
	rows = g.Completeness(day1, day1.AddDays(1))
	require.Len(t, rows, 1)
	require.True(t, rows[0].Complete, "%+v", rows[0])
	require.Empty(t, g.Completeness(day1.AddDays(1), day1.AddDays(2)))
	require.Equal(t, fmt.Sprint(gasStart), "2026-03-02 05:00:00 +0000 UTC")
}
