package metering

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func date(y int, m time.Month, d int) Date { return Date{y, m, d} }

// DST switches in Europe/Berlin (domain-rules.md §7, IANA tzdata).
var dstSwitches = []struct {
	year           int
	spring, autumn time.Time // the UTC instant of the switch (01:00Z on the Sunday)
}{
	{2025, utc("2025-03-30T01:00:00Z"), utc("2025-10-26T01:00:00Z")},
	{2026, utc("2026-03-29T01:00:00Z"), utc("2026-10-25T01:00:00Z")},
	{2027, utc("2027-03-28T01:00:00Z"), utc("2027-10-31T01:00:00Z")},
}

func TestDSTSwitchesAreSundays(t *testing.T) {
	for _, d := range dstSwitches {
		for _, sw := range []time.Time{d.spring, d.autumn} {
			require.Equal(t, time.Sunday, sw.Weekday())
			_, before := sw.Add(-time.Second).In(berlin).Zone()
			_, after := sw.In(berlin).Zone()
			require.NotEqual(t, before, after, sw)
		}
	}
}

// TestDSTWeekends checks every calendar function for every Sparte across the
// spring and autumn weekends of 2025–2027.
func TestDSTWeekends(t *testing.T) {
	for _, y := range dstSwitches {
		for _, season := range []string{"spring", "autumn"} {
			sw := y.spring
			short := season == "spring"
			if !short {
				sw = y.autumn
			}
			sun := DateOf(sw)
			sat := sun.AddDays(-1)
			odd15 := map[bool]int{true: 92, false: 100}[short]
			oddHours := map[bool]time.Duration{true: 23 * time.Hour, false: 25 * time.Hour}[short]
			for _, sp := range Sparten() {
				t.Run(fmt.Sprintf("dst=%d-%s,sparte=%s", y.year, season, sp), func(t *testing.T) {
					gas := sp == SparteGas
					// ExpectedIntervals: the odd day is the Saturday for gas, the Sunday otherwise.
					want := map[Date]int{sat.AddDays(-1): 96, sat: 96, sun: 96, sun.AddDays(1): 96}
					oddDay := sun
					if gas {
						oddDay = sat
					}
					want[oddDay] = odd15
					for d, n := range want {
						got, err := ExpectedIntervals(d, ResolutionPT15M, sp)
						require.NoError(t, err)
						require.Equal(t, n, got, "PT15M %s", d)
						got, err = ExpectedIntervals(d, ResolutionPT1M, sp)
						require.NoError(t, err)
						require.Equal(t, n*15, got, "PT1M %s", d)
						got, err = ExpectedIntervals(d, ResolutionPT1H, sp)
						require.NoError(t, err)
						require.Equal(t, n/4, got, "PT1H %s", d)
						got, err = ExpectedIntervals(d, ResolutionP1D, sp)
						require.NoError(t, err)
						require.Equal(t, 1, got)
						from, to := DayBounds(d, sp)
						require.Equal(t, time.Duration(n)*15*time.Minute, to.Sub(from), "DayBounds %s", d)
					}

					// DayBounds of the odd day, spelled out in UTC.
					from, to := DayBounds(oddDay, sp)
					require.Equal(t, oddHours, to.Sub(from))
					switch {
					case gas && short: // Sat 06:00 CET → Sun 06:00 CEST
						require.Equal(t, sat.Time().Add(5*time.Hour), from)
						require.Equal(t, sun.Time().Add(4*time.Hour), to)
					case gas && !short: // Sat 06:00 CEST → Sun 06:00 CET
						require.Equal(t, sat.Time().Add(4*time.Hour), from)
						require.Equal(t, sun.Time().Add(5*time.Hour), to)
					case short: // Sun 00:00 CET → Mon 00:00 CEST
						require.Equal(t, sat.Time().Add(23*time.Hour), from)
						require.Equal(t, sun.Time().Add(22*time.Hour), to)
					default: // Sun 00:00 CEST → Mon 00:00 CET
						require.Equal(t, sat.Time().Add(22*time.Hour), from)
						require.Equal(t, sun.Time().Add(23*time.Hour), to)
					}

					// Day functions around the switch instant itself.
					require.Equal(t, sun, LocalDay(sw))
					require.Equal(t, sun, LocalDay(sw.Add(-time.Minute)))
					require.Equal(t, sat, GasDay(sw))
					wantBal := sun
					if gas {
						wantBal = sat
					}
					require.Equal(t, wantBal, BalancingDay(sw, sp))

					// The gas day turns at 06:00 local, which is 04:00Z after a spring
					// switch and 05:00Z after an autumn one.
					turn := sun.Time().Add(4 * time.Hour)
					if !short {
						turn = sun.Time().Add(5 * time.Hour)
					}
					require.Equal(t, sat, GasDay(turn.Add(-time.Microsecond)))
					require.Equal(t, sun, GasDay(turn))
					require.Equal(t, sun, LocalDay(turn.Add(-time.Microsecond)))

					// Every quarter hour of the weekend lies in the bounds of its
					// balancing day, and its month is the one that day names.
					for ts := sat.Time().Add(-6 * time.Hour); ts.Before(sun.Time().Add(36 * time.Hour)); ts = ts.Add(15 * time.Minute) {
						bd := BalancingDay(ts, sp)
						f, e := DayBounds(bd, sp)
						require.False(t, ts.Before(f), ts)
						require.True(t, ts.Before(e), ts)
						require.Equal(t, Date{bd.Year, bd.Month, 1}, BalancingMonth(ts, sp))
						ld := LocalDay(ts)
						require.Equal(t, Date{ld.Year, ld.Month, 1}, LocalMonth(ts))
						mf, mt := MonthBounds(bd.Year, bd.Month, sp)
						require.False(t, ts.Before(mf), ts)
						require.True(t, ts.Before(mt), ts)
					}

					// The month holding the switch is one hour short or long, and the
					// days' counts add up to it.
					m := sun.Month
					mf, mt := MonthBounds(y.year, m, sp)
					total := 0
					for d := date(y.year, m, 1); d.Month == m; d = d.AddDays(1) {
						n, err := ExpectedIntervals(d, ResolutionPT15M, sp)
						require.NoError(t, err)
						total += n
					}
					require.Equal(t, int(mt.Sub(mf)/(15*time.Minute)), total)
					days := time.Date(y.year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
					require.Equal(t, days*96+odd15-96, total)
				})
			}
		}
	}
}

func TestGasDaySaturdayRule2026(t *testing.T) {
	cases := []struct {
		day          Date
		gas, electro int
	}{
		{date(2026, 10, 24), 100, 96}, // Sat 24 Oct
		{date(2026, 10, 25), 96, 100}, // Sun 25 Oct
		{date(2026, 3, 28), 92, 96},   // Sat 28 Mar
		{date(2026, 3, 29), 96, 92},   // Sun 29 Mar
	}
	for _, tc := range cases {
		g, err := ExpectedIntervals(tc.day, ResolutionPT15M, SparteGas)
		require.NoError(t, err)
		require.Equal(t, tc.gas, g, tc.day)
		e, err := ExpectedIntervals(tc.day, ResolutionPT15M, SparteStrom)
		require.NoError(t, err)
		require.Equal(t, tc.electro, e, tc.day)
	}
	// domain-rules.md §7 worked gas days for 2025.
	f, to := DayBounds(date(2025, 3, 29), SparteGas)
	require.Equal(t, utc("2025-03-29T05:00:00Z"), f)
	require.Equal(t, utc("2025-03-30T04:00:00Z"), to)
	f, to = DayBounds(date(2025, 10, 25), SparteGas)
	require.Equal(t, utc("2025-10-25T04:00:00Z"), f)
	require.Equal(t, utc("2025-10-26T05:00:00Z"), to)
}

func TestOneMinuteCounts(t *testing.T) {
	for d, want := range map[Date]int{date(2026, 3, 29): 1380, date(2026, 6, 1): 1440, date(2026, 10, 25): 1500} {
		n, err := ExpectedIntervals(d, ResolutionPT1M, SparteStrom)
		require.NoError(t, err)
		require.Equal(t, want, n, d)
	}
}

func TestBalancingMonthBoundary(t *testing.T) {
	// 02:00 local on 1 March is February for gas, March for everything else.
	ts := utc("2026-03-01T01:00:00Z")
	require.Equal(t, date(2026, 2, 1), BalancingMonth(ts, SparteGas))
	require.Equal(t, date(2026, 2, 28), GasDay(ts))
	for _, sp := range []Sparte{SparteStrom, SparteWaerme, SparteWasser} {
		require.Equal(t, date(2026, 3, 1), BalancingMonth(ts, sp), sp)
	}
	require.Equal(t, date(2026, 3, 1), LocalMonth(ts))
	// 06:00 local (05:00Z in winter) is March for gas too.
	require.Equal(t, date(2026, 3, 1), BalancingMonth(utc("2026-03-01T05:00:00Z"), SparteGas))
	require.Equal(t, date(2026, 2, 1), BalancingMonth(utc("2026-03-01T04:59:59Z"), SparteGas))
	// Autumn 2027: the switch is on 31 October, so the October gas month ends at 05:00Z.
	require.Equal(t, date(2027, 10, 1), BalancingMonth(utc("2027-11-01T04:30:00Z"), SparteGas))
	require.Equal(t, date(2027, 11, 1), LocalMonth(utc("2027-11-01T04:30:00Z")))
}

func TestMonthBounds(t *testing.T) {
	cases := []struct {
		y        int
		m        time.Month
		s        Sparte
		from, to string
	}{
		{2025, time.June, SparteGas, "2025-06-01T04:00:00Z", "2025-07-01T04:00:00Z"},
		{2025, time.June, SparteStrom, "2025-05-31T22:00:00Z", "2025-06-30T22:00:00Z"},
		{2026, time.March, SparteGas, "2026-03-01T05:00:00Z", "2026-04-01T04:00:00Z"},
		{2026, time.March, SparteWasser, "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z"},
		{2027, time.October, SparteGas, "2027-10-01T04:00:00Z", "2027-11-01T05:00:00Z"},
		{2027, time.October, SparteWaerme, "2027-09-30T22:00:00Z", "2027-10-31T23:00:00Z"},
		{2025, time.December, SparteGas, "2025-12-01T05:00:00Z", "2026-01-01T05:00:00Z"},
	}
	for _, tc := range cases {
		f, to := MonthBounds(tc.y, tc.m, tc.s)
		require.Equal(t, utc(tc.from), f, "%d-%d %s", tc.y, tc.m, tc.s)
		require.Equal(t, utc(tc.to), to, "%d-%d %s", tc.y, tc.m, tc.s)
	}
	// October 2025 electricity holds the autumn extra hour: 2 980 quarter hours.
	f, to := MonthBounds(2025, time.October, SparteStrom)
	require.Equal(t, 2980, int(to.Sub(f)/(15*time.Minute)))
}

func TestExpectedIntervalsRefusals(t *testing.T) {
	_, err := ExpectedIntervals(date(2026, 3, 1), ResolutionP1M, SparteStrom)
	require.ErrorIs(t, err, ErrNotDaily)
	_, err = ExpectedIntervals(date(2026, 1, 1), ResolutionP1Y, SparteGas)
	require.ErrorIs(t, err, ErrNotDaily)
	_, err = ExpectedIntervals(date(2026, 2, 30), ResolutionPT15M, SparteStrom)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = ExpectedIntervals(Date{}, ResolutionPT15M, SparteStrom)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = ExpectedIntervals(date(2026, 2, 3), Resolution{}, SparteStrom)
	require.ErrorIs(t, err, ErrInvalid)
}

func TestDate(t *testing.T) {
	d := date(2026, 3, 1)
	require.Equal(t, "2026-03-01", d.String())
	require.Equal(t, utc("2026-03-01T00:00:00Z"), d.Time())
	require.Equal(t, date(2026, 2, 28), d.AddDays(-1))
	require.Equal(t, d, DateOf(utc("2026-03-01T23:59:59Z")))
	// DateOf reads the date in t's own location.
	require.Equal(t, date(2026, 3, 2), DateOf(utc("2026-03-01T23:30:00Z").In(berlin)))
	require.True(t, d.Valid())
	require.False(t, date(2026, 2, 29).Valid())
	require.Equal(t, -1, date(2026, 2, 28).Compare(d))
	require.True(t, Date{}.IsZero())
	require.Equal(t, "Europe/Berlin", Berlin().String())
}

// TestBalancingDaysAgreeWithBalancingDay: BalancingDays.Of answers what
// BalancingDay answers, over the DST weekends of 2025–2027 and both day
// starts (00:00 and the Gastag's 06:00), for runs an encoder sees — every
// Sparte's quarter-hours in key order, several meters in turn — and for
// instants in random order with random Sparten, including those a
// nanosecond either side of each day's bounds.
func TestBalancingDaysAgreeWithBalancingDay(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, y := range dstSwitches {
		for _, sw := range []time.Time{y.spring, y.autumn} {
			lo := sw.Add(-72 * time.Hour).Truncate(24 * time.Hour)
			var instants []time.Time
			for at := lo; at.Before(sw.Add(72 * time.Hour)); at = at.Add(15 * time.Minute) {
				instants = append(instants, at)
			}
			for d := DateOf(lo).AddDays(-1); d.Compare(DateOf(sw).AddDays(4)) < 0; d = d.AddDays(1) {
				for _, sp := range []Sparte{SparteStrom, SparteGas} {
					from, to := DayBounds(d, sp)
					for _, b := range []time.Time{from, to} {
						instants = append(instants, b.Add(-time.Nanosecond), b, b.Add(time.Nanosecond))
					}
				}
			}
			for i := 0; i < 2000; i++ {
				instants = append(instants, lo.Add(time.Duration(rng.Int64N(int64(144*time.Hour)))))
			}
			t.Run(sw.Format(time.DateOnly), func(t *testing.T) {
				for _, sp := range Sparten() {
					var c BalancingDays
					for meter := 0; meter < 3; meter++ {
						for _, at := range instants[:len(instants)-2000] {
							require.Equal(t, BalancingDay(at, sp), c.Of(at, sp), "%s %s, in key order", at, sp)
						}
					}
				}
				var c BalancingDays
				for i := 0; i < 20000; i++ {
					at, sp := instants[rng.IntN(len(instants))], Sparten()[rng.IntN(len(Sparten()))]
					require.Equal(t, BalancingDay(at, sp), c.Of(at, sp), "%s %s, in random order", at, sp)
				}
			})
		}
	}
}
