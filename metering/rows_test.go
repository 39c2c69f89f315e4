package metering

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestNewInterval(t *testing.T) {
	from := utc("2026-03-01T05:00:00Z")
	iv, err := NewInterval(from.In(berlin), from.Add(15*time.Minute), dec("1.234500"), QualityMeasured)
	require.NoError(t, err)
	require.Equal(t, time.UTC, iv.From.Location())
	require.True(t, iv.Value.Equal(dec("1.2345")))

	_, err = NewInterval(from, from.Add(15*time.Minute), dec("1.0000000000"), QualityMeasured)
	require.NoError(t, err, "trailing zeros beyond 6 decimals are the same value")
	_, err = NewInterval(from, from.Add(15*time.Minute), dec("-999999999999.999999"), QualityMeasured)
	require.NoError(t, err)

	bad := []struct {
		name     string
		from, to time.Time
		v        string
		q        Quality
	}{
		{"empty", from, from, "1", QualityMeasured},
		{"reversed", from, from.Add(-time.Minute), "1", QualityMeasured},
		{"zero from", time.Time{}, from, "1", QualityMeasured},
		{"sub-microsecond", from.Add(time.Nanosecond), from.Add(time.Minute), "1", QualityMeasured},
		{"seven decimals", from, from.Add(time.Minute), "0.0000001", QualityMeasured},
		{"thirteen integer digits", from, from.Add(time.Minute), "1000000000000", QualityMeasured},
		{"no quality", from, from.Add(time.Minute), "1", 0},
		{"quality out of range", from, from.Add(time.Minute), "1", Quality(99)},
	}
	for _, tc := range bad {
		_, err := NewInterval(tc.from, tc.to, dec(tc.v), tc.q)
		require.ErrorIs(t, err, ErrInvalid, tc.name)
	}
}

func TestNewReading(t *testing.T) {
	r, err := NewReading(utc("2026-03-01T00:00:00Z"), dec("12345.6"), QualityMeasured)
	require.NoError(t, err)
	require.True(t, r.Value.Equal(dec("12345.6")))
	_, err = NewReading(time.Time{}, dec("1"), QualityMeasured)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = NewReading(utc("2026-03-01T00:00:00Z"), dec("1.1234567"), QualityMeasured)
	require.ErrorIs(t, err, ErrInvalid)
}

// gasDelivery is a gas Lastgang for the gas day 28 Feb 2026, whose last
// intervals lie on 1 March local time but in the February Bilanzierungsmonat.
func gasDelivery(t *testing.T) Delivery {
	t.Helper()
	op := mustBdew(t, "9904768000008")
	malo, err := ParseMaloID("52935155442")
	require.NoError(t, err)
	obis := mustObis(t, "7-0:13.29.0")
	from, to := DayBounds(date(2026, 2, 28), SparteGas)
	var ivs []Interval
	for ts := from; ts.Before(to); ts = ts.Add(time.Hour) {
		iv, err := NewInterval(ts, ts.Add(time.Hour), dec("10.5"), QualityMeasured)
		require.NoError(t, err)
		ivs = append(ivs, iv)
	}
	src, err := SourceMscons(op, "MSG0001")
	require.NoError(t, err)
	v, err := ParseVersion("20260302060000")
	require.NoError(t, err)
	return Delivery{
		MaloID: malo, Obis: obis, Sparte: SparteGas, Unit: UnitKWh, Resolution: ResolutionPT1H,
		Intervals: ivs, Source: src,
		Provenance: Provenance{{OccurredAt: utc("2026-03-02T06:00:00Z"), EventType: "INGESTED", Actor: "MSCONS"}},
		Scope:      ScopeFor(op, from, SparteGas), Version: v, RecordedAt: utc("2026-03-02T06:00:01Z"),
	}
}

func TestDeliveryValidate(t *testing.T) {
	d := gasDelivery(t)
	require.Equal(t, "9904768000008:2026-02", d.Scope.String())
	require.Len(t, d.Intervals, 24)
	require.NoError(t, d.Validate())

	mutate := []struct {
		name string
		f    func(d *Delivery)
		want error
	}{
		{"water in kWh", func(d *Delivery) { d.Sparte = SparteWasser }, ErrUnitNotAllowed},
		{"interval past the gas month", func(d *Delivery) {
			last := d.Intervals[len(d.Intervals)-1]
			iv, _ := NewInterval(last.To, last.To.Add(time.Hour), dec("1"), QualityMeasured)
			d.Intervals = append(d.Intervals, iv)
		}, ErrScopeMismatch},
		{"electricity scope for a gas month", func(d *Delivery) { d.Sparte = SparteStrom }, ErrScopeMismatch},
		{"overlap", func(d *Delivery) {
			iv, _ := NewInterval(d.Intervals[3].From.Add(30*time.Minute), d.Intervals[3].To.Add(30*time.Minute), dec("1"), QualityMeasured)
			d.Intervals = append(d.Intervals, iv)
			d.Resolution = Resolution{}
		}, ErrOverlap},
		{"duplicate interval", func(d *Delivery) { d.Intervals = append(d.Intervals, d.Intervals[0]) }, ErrOverlap},
		{"wrong grid", func(d *Delivery) { d.Resolution = ResolutionPT15M }, ErrInvalid},
		{"both intervals and readings", func(d *Delivery) {
			r, _ := NewReading(d.Intervals[0].From, dec("1"), QualityMeasured)
			d.Readings = []Reading{r}
		}, ErrInvalid},
		{"neither", func(d *Delivery) { d.Intervals = nil }, ErrInvalid},
		{"no recorded at", func(d *Delivery) { d.RecordedAt = time.Time{} }, ErrInvalid},
		{"no scope", func(d *Delivery) { d.Scope = VersionScope{} }, ErrInvalid},
		{"no version", func(d *Delivery) { d.Version = Version{} }, ErrInvalid},
		{"no malo", func(d *Delivery) { d.MaloID = MaloID{} }, ErrInvalid},
		{"no obis", func(d *Delivery) { d.Obis = ObisCode{} }, ErrInvalid},
		{"no source", func(d *Delivery) { d.Source = Source{} }, ErrInvalid},
		{"no sparte", func(d *Delivery) { d.Sparte = 0 }, ErrInvalid},
		{"bypassed constructor", func(d *Delivery) { d.Intervals[0].Value = dec("0.1234567") }, ErrInvalid},
		{"bad provenance", func(d *Delivery) { d.Provenance[0].Actor = "" }, ErrInvalid},
	}
	for _, tc := range mutate {
		t.Run(tc.name, func(t *testing.T) {
			d := gasDelivery(t)
			tc.f(&d)
			require.ErrorIs(t, d.Validate(), tc.want)
		})
	}
}

func TestDeliveryReadings(t *testing.T) {
	op := mustBdew(t, "9910125000002")
	malo, _ := ParseMaloID("41373559241")
	melo, _ := ParseMeloID("DE00056266802AO6G56M11SN51G21M24S")
	src, _ := SourceSMGW("EDNT0012345678")
	at := utc("2026-03-31T21:45:00Z") // 23:45 CEST, still March for electricity
	r1, _ := NewReading(at, dec("1000.5"), QualityMeasured)
	r2, _ := NewReading(at.Add(15*time.Minute), dec("1000.7"), QualityMeasured) // 00:00 CEST 1 April
	v, _ := VersionArrival(utc("2026-04-01T00:00:00Z"))
	d := Delivery{
		MaloID: malo, MeloID: melo, Obis: mustObis(t, "1-0:1.8.0"), Sparte: SparteStrom, Unit: UnitKWh,
		Readings: []Reading{r1}, Source: src, Scope: ScopeFor(op, at, SparteStrom), Version: v, RecordedAt: utc("2026-04-01T00:00:00Z"),
	}
	require.NoError(t, d.Validate())
	d.Readings = append(d.Readings, r2)
	require.ErrorIs(t, d.Validate(), ErrScopeMismatch)
	d.Readings = []Reading{r1, r1}
	require.ErrorIs(t, d.Validate(), ErrOverlap)
}
