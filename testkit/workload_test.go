package testkit

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
)

func richWorkload(seed uint64) Workload {
	w := NewWorkload(seed)
	w.MaLos, w.Days = 10, 4
	w.GapRate, w.RedeliveryRate, w.CorrectionRate = 0.02, 0.1, 0.1
	w.Tenants, w.SharedMaLoShare = 2, 0.3
	w.PointReadings, w.TwoMeLoShare = true, 0.5
	w.MinuteShare = 0.2
	return w
}

func generate(t *testing.T, w Workload) Batch {
	t.Helper()
	b, err := w.Generate()
	require.NoError(t, err)
	return b
}

// fingerprint renders a batch through the encoder, so it covers every stored field.
func fingerprint(t *testing.T, b Batch) string {
	t.Helper()
	cfg := b.Workload.IntervalTable("readings_versions").MustBuild()
	pcfg := b.Workload.PointTable("register_versions").MustBuild()
	var sb strings.Builder
	for _, ds := range [][]Delivery{b.Deliveries, b.Points} {
		for _, d := range ds {
			c := cfg
			if d.Point {
				c = pcfg
			}
			rows, err := c.Encode(d.Series)
			require.NoError(t, err)
			fmt.Fprintf(&sb, "%s %s\n", d.Kind, d.Arrival.Format(time.RFC3339Nano))
			for _, r := range rows {
				sb.WriteString(rowString(r))
				sb.WriteByte('\n')
			}
		}
	}
	return sb.String()
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// rowString renders every field of a row, pointers dereferenced.
func rowString(r meterstore.Row) string {
	extra := make([]any, len(r.Extra))
	for i, e := range r.Extra {
		extra[i] = deref(e)
	}
	return fmt.Sprint(r.MaloID, deref(r.MeloID), r.ObisCode, r.Sparte, r.From, deref(r.To), r.Value, r.Unit, r.Quality,
		deref(r.Resolution), r.SourceKind, deref(r.SourceDetail), deref(r.Provenance), r.Version, r.VersionScope,
		r.RecordedAt, r.BalancingDay, extra)
}

func balancingDayOf(d metering.Delivery) metering.Date {
	if len(d.Intervals) > 0 {
		return metering.BalancingDay(d.Intervals[0].From, d.Sparte)
	}
	return metering.BalancingDay(d.Readings[0].At, d.Sparte)
}

func TestGenerateIsDeterministic(t *testing.T) {
	w := richWorkload(42)
	a, b := generate(t, w), generate(t, w)
	require.True(t, fingerprint(t, a) == fingerprint(t, b), "same seed, same batch")
	require.Equal(t, a, b)

	w2 := w
	w2.Seed = 43
	require.False(t, fingerprint(t, a) == fingerprint(t, generate(t, w2)), "another seed, another batch")

	// Stream yields the same deliveries in the same order.
	var streamed []Delivery
	require.NoError(t, w.Stream(func(d Delivery) error { streamed = append(streamed, d); return nil }))
	var iv, pt []Delivery
	for _, d := range streamed {
		if d.Point {
			pt = append(pt, d)
		} else {
			iv = append(iv, d)
		}
	}
	require.Equal(t, a.Deliveries, iv)
	require.Equal(t, a.Points, pt)

	// Growing Days keeps the days already generated.
	w3 := w
	w3.Days = 6
	longer := generate(t, w3)
	first := a.Days[0]
	pick := func(b Batch) []Delivery {
		var out []Delivery
		for _, d := range b.Deliveries {
			if d.Kind == Original && balancingDayOf(d.Series.Delivery) == first {
				out = append(out, d)
			}
		}
		return out
	}
	require.NotEmpty(t, pick(a))
	require.Equal(t, pick(a), pick(longer))
}

func TestGenerateRefusesBadConfiguration(t *testing.T) {
	for name, w := range map[string]Workload{
		"rate above one":     {CorrectionRate: 1.5},
		"negative malos":     {MaLos: -1},
		"three channels":     {ElectricityChannels: 3},
		"shared w/o tenants": {SharedMaLoShare: 0.5, Tenants: 1},
		"bad operator":       {Operators: []string{"9900357000004"}},
		"gas unit":           {GasUnit: metering.Unit(9)},
	} {
		_, err := w.Generate()
		require.Error(t, err, name)
	}
}

func TestIdentifiersAreValid(t *testing.T) {
	b := generate(t, richWorkload(7))
	cfg := b.Workload.IntervalTable("readings_versions").MustBuild()
	pcfg := b.Workload.PointTable("register_versions").MustBuild()
	for _, m := range b.Meters {
		_, err := metering.ParseMaloID(m.MaloID.String())
		require.NoError(t, err)
		require.True(t, m.Operator.PassesBDEW(), m.Operator.String())
		require.Contains(t, DefaultOperators, m.Operator.String())
		for _, melo := range m.MeloIDs {
			_, err := metering.ParseMeloID(melo.String())
			require.NoError(t, err)
		}
	}
	for _, d := range slices.Concat(b.Deliveries, b.Points) {
		s := d.Series.Delivery
		require.NoError(t, s.Validate())
		_, err := metering.ParseMaloID(s.MaloID.String())
		require.NoError(t, err)
		op, err := metering.ParseBdewCode(s.Scope.Operator().String())
		require.NoError(t, err)
		require.NotEqual(t, "9900357000004", op.String())
		sender, ref, ok := s.Source.Mscons()
		require.True(t, ok, "MSCONS source")
		require.Equal(t, op, sender, "the operator sends the MSCONS")
		require.NotEmpty(t, ref)
		_, err = metering.ParseVersionScope(s.Scope.String())
		require.NoError(t, err)
		_, err = metering.ParseObis(s.Obis.String())
		require.NoError(t, err)
		c := cfg
		if d.Point {
			c = pcfg
		}
		rows, err := c.Encode(d.Series)
		require.NoError(t, err)
		for _, r := range rows {
			require.Equal(t, "MSCONS", r.SourceKind)
			require.Contains(t, *r.Provenance, `"actor":"MSCONS"`)
		}
	}
}

func TestCompleteMaloIDUsesTheParser(t *testing.T) {
	m, err := completeMaloID("4137355924")
	require.NoError(t, err)
	require.Equal(t, "41373559241", m.String()) // the AWH example
}

func TestSpartenUnitsAndChannels(t *testing.T) {
	b := generate(t, NewWorkload(3))
	seen := map[metering.Sparte]bool{}
	for _, m := range b.Meters {
		seen[m.Sparte] = true
		require.NoError(t, m.Sparte.AllowsUnit(m.Unit))
		switch m.Sparte {
		case metering.SparteStrom:
			require.Equal(t, metering.UnitKWh, m.Unit)
			require.Equal(t, []metering.ObisCode{ObisImport, ObisExport}, m.Channels)
			require.True(t, m.Channels[0].IsImport())
			require.True(t, m.Channels[1].IsExport())
		case metering.SparteGas:
			require.Equal(t, metering.UnitKWh, m.Unit)
			require.Equal(t, 7, m.Channels[0].Medium())
			require.Equal(t, metering.UnitM3, m.RegisterUnit)
		case metering.SparteWaerme:
			require.Equal(t, metering.UnitKWh, m.Unit)
			require.Equal(t, 6, m.Channels[0].Medium())
		case metering.SparteWasser:
			require.Equal(t, metering.UnitM3, m.Unit)
			require.Equal(t, 8, m.Channels[0].Medium())
		}
		for _, ch := range m.Channels {
			require.True(t, ch.IsLastgang(), ch.String())
		}
	}
	require.Len(t, seen, 4, "the default mix has all four Sparten")

	w := NewWorkload(3)
	w.GasUnit = metering.UnitM3
	for _, m := range generate(t, w).Meters {
		if m.Sparte == metering.SparteGas {
			require.Equal(t, metering.UnitM3, m.Unit)
			require.Equal(t, ObisGasVolume, m.Channels[0])
		}
	}
}

func TestValuesAreRealistic(t *testing.T) {
	for _, start := range []time.Time{DefaultStart, time.Date(2025, 6, 18, 22, 0, 0, 0, time.UTC)} {
		w := NewWorkload(11)
		w.Start, w.MaLos, w.MinuteShare = start, 24, 0.25
		b := generate(t, w)
		var n, substituted int
		var middayExport bool
		var gasNight, gasMorning []float64
		for _, d := range b.Deliveries {
			if d.Kind != Original {
				continue
			}
			s := d.Series.Delivery
			step, ok := s.Resolution.Fixed()
			require.True(t, ok)
			per15 := float64(step) / float64(15*time.Minute)
			for _, iv := range s.Intervals {
				n++
				if iv.Quality == metering.QualitySubstituted {
					substituted++
				}
				require.GreaterOrEqual(t, iv.Value.Exponent(), int32(-6), "decimal(18,6) holds it exactly: %s", iv.Value)
				require.True(t, iv.Value.Equal(iv.Value.Round(6)))
				v := iv.Value.InexactFloat64()
				require.GreaterOrEqual(t, v, 0.0)
				h := iv.From.In(metering.Berlin()).Hour()
				switch {
				case s.Obis == ObisImport:
					require.GreaterOrEqual(t, v, ImportMinPer15*per15-1e-6, "import %s at %s", iv.Value, iv.From)
					require.LessOrEqual(t, v, ImportMaxPer15*per15+1e-6, "import %s at %s", iv.Value, iv.From)
				case s.Obis == ObisExport:
					require.LessOrEqual(t, v, ExportMaxPer15*per15)
					if h >= 22 || h < 4 {
						require.True(t, iv.Value.IsZero(), "PV export at night %s: %s", iv.From, iv.Value)
					}
					if h >= 12 && h < 14 && v > 0 {
						middayExport = true
					}
				case s.Sparte == metering.SparteGas && step == 15*time.Minute:
					if h >= 1 && h < 4 {
						gasNight = append(gasNight, v)
					}
					if h >= 6 && h < 9 {
						gasMorning = append(gasMorning, v)
					}
				}
			}
		}
		require.True(t, middayExport, "PV feeds in at midday")
		share := float64(substituted) / float64(n)
		require.InDelta(t, 0.01, share, 0.006, "about 1 %% SUBSTITUTED (%d of %d)", substituted, n)
		if len(gasNight) > 0 && len(gasMorning) > 0 {
			require.Less(t, mean(gasNight), mean(gasMorning), "gas has a daily shape")
		}
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func countsByDay(b Batch) map[string][]int {
	out := map[string][]int{}
	for _, d := range b.Deliveries {
		if d.Kind != Original {
			continue
		}
		s := d.Series.Delivery
		k := fmt.Sprintf("%s %s %s", s.Sparte, s.Resolution, balancingDayOf(s))
		out[k] = append(out[k], len(s.Intervals))
	}
	return out
}

func TestDSTDaysHaveTheirIntervalCounts(t *testing.T) {
	autumn := NewWorkload(5)
	autumn.CorrectionRate = 0
	autumn.MinuteShare = 0.5
	autumn.MaLos = 16
	spring := autumn
	spring.Start, spring.Days = time.Date(2025, 3, 27, 23, 0, 0, 0, time.UTC), 4 // 28 Mar local

	a := countsByDay(generate(t, autumn))
	s := countsByDay(generate(t, spring))
	for k, want := range map[string]int{
		"STROM PT15M 2025-10-26": 100, "STROM PT15M 2025-10-25": 96, "STROM PT15M 2025-10-27": 96,
		"GAS PT15M 2025-10-25": 100, "GAS PT15M 2025-10-26": 96,
		"STROM PT1M 2025-10-26": 1500, "STROM PT1M 2025-10-27": 1440,
	} {
		require.NotEmpty(t, a[k], k)
		for _, got := range a[k] {
			require.Equal(t, want, got, k)
		}
	}
	for k, want := range map[string]int{
		"STROM PT15M 2025-03-30": 92, "STROM PT15M 2025-03-29": 96,
		"GAS PT15M 2025-03-29": 92, "GAS PT15M 2025-03-30": 96,
		"STROM PT1M 2025-03-30": 1380,
	} {
		require.NotEmpty(t, s[k], k)
		for _, got := range s[k] {
			require.Equal(t, want, got, k)
		}
	}
}

type groupKey struct {
	malo, obis, tenant string
	day                metering.Date
}

func keyOf(d Delivery) groupKey {
	s := d.Series.Delivery
	return groupKey{s.MaloID.String(), s.Obis.String(), d.Series.Extra["tenant"], balancingDayOf(s)}
}

func TestVersionsAndCorrections(t *testing.T) {
	w := richWorkload(9)
	w.CorrectionRate = 0.3
	b := generate(t, w)
	originals := map[groupKey]Delivery{}
	corrections := 0
	for _, d := range b.Deliveries {
		s := d.Series.Delivery
		day := balancingDayOf(s)
		switch d.Kind {
		case Original:
			require.Equal(t, fmt.Sprintf("%04d%02d%02d000001", day.Year, day.Month, day.Day), s.Version.String())
			require.Len(t, s.Version.String(), 14)
			require.True(t, s.Version.IsWellFormed())
			require.Equal(t, d.Arrival, s.RecordedAt)
			_, dup := originals[keyOf(d)]
			require.False(t, dup, "one delivery per meter-day and channel")
			originals[keyOf(d)] = d
		case Correction:
			corrections++
			o, ok := originals[keyOf(d)]
			require.True(t, ok, "a correction follows its original")
			os := o.Series.Delivery
			require.Equal(t, os.Version.Next(), s.Version, "next version")
			require.Equal(t, os.Scope, s.Scope, "same scope")
			require.Equal(t, os.Scope.Operator(), s.Scope.Operator(), "same operator")
			require.Equal(t, os.RecordedAt.Add(72*time.Hour), s.RecordedAt)
			require.Equal(t, d.Arrival, s.RecordedAt)
			require.Len(t, s.Intervals, len(os.Intervals))
			for i, iv := range s.Intervals {
				require.Equal(t, os.Intervals[i].From, iv.From)
				require.True(t, os.Intervals[i].Value.Mul(decimal.RequireFromString("1.05")).Round(6).Equal(iv.Value))
			}
		}
	}
	require.Positive(t, corrections)
}

func TestBatchOrderAndRedeliveries(t *testing.T) {
	b := generate(t, richWorkload(13))
	for _, ds := range [][]Delivery{b.Deliveries, b.Points} {
		for i := 1; i < len(ds); i++ {
			require.False(t, ds[i].Arrival.Before(ds[i-1].Arrival), "arrival order at %d", i)
		}
	}
	originals := map[groupKey]int{}
	redeliveries := 0
	for i, d := range b.Deliveries {
		switch d.Kind {
		case Original:
			originals[keyOf(d)] = i
		case Redelivery:
			redeliveries++
			j, ok := originals[keyOf(d)]
			require.True(t, ok, "a redelivery follows its original")
			require.Equal(t, b.Deliveries[j].Series, d.Series, "byte-identical re-send")
			require.True(t, d.Arrival.After(b.Deliveries[j].Arrival))
		}
	}
	require.Positive(t, redeliveries)
}

func TestGaps(t *testing.T) {
	w := NewWorkload(17)
	w.GapRate = 0.05
	b := generate(t, w)
	have, want := 0, 0
	for _, d := range b.Deliveries {
		if d.Kind != Original {
			continue
		}
		s := d.Series.Delivery
		n, err := metering.ExpectedIntervals(balancingDayOf(s), s.Resolution, s.Sparte)
		require.NoError(t, err)
		require.LessOrEqual(t, len(s.Intervals), n)
		require.NotEmpty(t, s.Intervals)
		have += len(s.Intervals)
		want += n
	}
	missing := float64(want-have) / float64(want)
	require.InDelta(t, 0.05, missing, 0.02)
}

func TestPointReadingsAreMonotone(t *testing.T) {
	w := richWorkload(21)
	w.TwoMeLoShare = 0.6
	b := generate(t, w)
	require.NotEmpty(t, b.Points)
	cfg := w.PointTable("register_versions").MustBuild()
	last := map[string]decimal.Decimal{}
	melosPerMalo := map[string]map[string]bool{}
	for _, d := range b.Points {
		s := d.Series.Delivery
		require.True(t, d.Point)
		require.True(t, s.Obis.IsZaehlerstand() || s.Obis == ObisRegisterGas, s.Obis.String())
		require.Empty(t, s.Intervals)
		_, err := cfg.Encode(d.Series)
		require.NoError(t, err)
		from, to := metering.DayBounds(balancingDayOf(s), s.Sparte)
		require.Len(t, s.Readings, int(to.Sub(from)/time.Hour), "hourly readings over the balancing day")
		k := s.MeloID.String() + " " + s.Obis.String()
		if melosPerMalo[s.MaloID.String()] == nil {
			melosPerMalo[s.MaloID.String()] = map[string]bool{}
		}
		melosPerMalo[s.MaloID.String()][s.MeloID.String()] = true
		for _, r := range s.Readings {
			if prev, ok := last[k]; ok {
				require.True(t, r.Value.GreaterThanOrEqual(prev), "register %s went back from %s to %s", k, prev, r.Value)
			}
			last[k] = r.Value
		}
	}
	two := 0
	for _, m := range melosPerMalo {
		if len(m) == 2 {
			two++
		}
	}
	require.Positive(t, two, "some MaLo has two MeLos")
}

func TestTenantsAndIdentifyByMelo(t *testing.T) {
	w := richWorkload(23)
	w.Tenants, w.SharedMaLoShare, w.IdentifyByMelo = 3, 0.5, true
	b := generate(t, w)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	require.Equal(t, []string{"malo_id", "obis_code", "from", "melo_id", "tenant"}, cfg.MergeKey())
	tenants := map[string]map[string]bool{}
	for _, d := range b.Deliveries {
		tn := d.Series.Extra["tenant"]
		require.Regexp(t, `^tenant0[1-3]$`, tn)
		require.False(t, d.Series.MeloID.IsZero())
		_, err := cfg.Encode(d.Series)
		require.NoError(t, err)
		malo := d.Series.MaloID.String()
		if tenants[malo] == nil {
			tenants[malo] = map[string]bool{}
		}
		tenants[malo][tn] = true
	}
	shared := 0
	for _, ts := range tenants {
		if len(ts) == 2 {
			shared++
		}
	}
	require.Positive(t, shared, "some MaLo is delivered under two tenants")
}
