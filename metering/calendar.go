package metering

import (
	"fmt"
	"time"
	_ "time/tzdata" // the calendar must not depend on the host's zoneinfo
)

// berlin is loaded once: LoadLocation parses tz data on every call, and the
// calendar functions run per row.
var berlin = mustLoadBerlin()

func mustLoadBerlin() *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		// Unreachable: time/tzdata is embedded.
		panic("metering: load Europe/Berlin: " + err.Error())
	}
	return loc
}

// Berlin returns the Europe/Berlin location the calendar uses.
func Berlin() *time.Location { return berlin }

// gasDayStartHour is the Gastag boundary: 06:00 local (VO (EU) 312/2014
// Art. 3 / VO (EU) 2017/459 Art. 3; GaBi Gas).
const gasDayStartHour = 6

// Date is a civil date with no zone: the name of a balancing day or month.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf reads the year, month and day of t as given, in t's own location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

// String returns "2006-01-02".
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day) }

// Time returns midnight UTC of d — a zone-free encoding (e.g. Arrow Date32),
// not the start of the day in Berlin; use DayBounds for that.
func (d Date) Time() time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }

// IsZero reports the zero Date.
func (d Date) IsZero() bool { return d == Date{} }

// Valid reports whether d names a real calendar day.
func (d Date) Valid() bool { return !d.IsZero() && DateOf(d.Time()) == d }

// AddDays returns the date n days later.
func (d Date) AddDays(n int) Date { return DateOf(d.Time().AddDate(0, 0, n)) }

// Compare returns -1, 0 or +1.
func (d Date) Compare(o Date) int { return d.Time().Compare(o.Time()) }

// LocalDay is the Berlin calendar day of t: the balancing day of
// electricity, heat and water.
func LocalDay(t time.Time) Date { return DateOf(t.In(berlin)) }

// GasDay is the Gastag of t: 06:00 to 06:00 local, named after the day it
// starts. The DST switch (02:00/03:00 local) falls before 06:00, so the 23-
// and 25-hour gas days are the ones named after the Saturday.
func GasDay(t time.Time) Date {
	l := t.In(berlin)
	d := DateOf(l)
	if l.Hour() < gasDayStartHour {
		d = d.AddDays(-1)
	}
	return d
}

// BalancingDay is the day s balances on: the Gastag for gas, the local day
// for everything else (the rule is gas, not "everything but electricity").
func BalancingDay(t time.Time, s Sparte) Date {
	if s == SparteGas {
		return GasDay(t)
	}
	return LocalDay(t)
}

// BalancingDays answers BalancingDay for a run of instants — an encoder's
// rows in key order, most in the day of the row before — by comparing each
// instant with the UTC bounds of the last two days it found (DayBounds)
// instead of converting it to Berlin's zone. An instant in neither day is
// converted, and its day's bounds replace the older of the two. The zero
// value is ready; it is not safe for concurrent use.
type BalancingDays struct {
	recent [2]dayRange // recent[0] the last found
}

// dayRange is one balancing day of one Sparte and its UTC bounds.
type dayRange struct {
	sparte   Sparte
	day      Date
	from, to time.Time
}

func (r *dayRange) holds(t time.Time, s Sparte) bool {
	return r.sparte == s && !r.day.IsZero() && !t.Before(r.from) && t.Before(r.to)
}

// Of is BalancingDay(t, s).
func (c *BalancingDays) Of(t time.Time, s Sparte) Date {
	if c.recent[0].holds(t, s) {
		return c.recent[0].day
	}
	if c.recent[1].holds(t, s) {
		c.recent[0], c.recent[1] = c.recent[1], c.recent[0]
		return c.recent[0].day
	}
	d := BalancingDay(t, s)
	from, to := DayBounds(d, s)
	c.recent[1], c.recent[0] = c.recent[0], dayRange{s, d, from, to}
	return d
}

// LocalMonth is the first day of t's Berlin calendar month.
func LocalMonth(t time.Time) Date {
	d := LocalDay(t)
	return Date{d.Year, d.Month, 1}
}

// BalancingMonth is the Bilanzierungsmonat of t, as its first day. A gas
// month is a whole number of gas days (EDI@Energy Allgemeine Festlegungen:
// Juni = 01.06 06:00 to 01.07 06:00 for gas), so 02:00 local on 1 March is
// February for gas and March for everything else.
func BalancingMonth(t time.Time, s Sparte) Date {
	d := BalancingDay(t, s)
	return Date{d.Year, d.Month, 1}
}

func dayStartHour(s Sparte) int {
	if s == SparteGas {
		return gasDayStartHour
	}
	return 0
}

// DayBounds returns the half-open UTC range [from, to) of balancing day d
// for s. Neither 00:00 nor 06:00 local is ever skipped or repeated by a Berlin
// DST switch, so the bounds are unambiguous.
func DayBounds(d Date, s Sparte) (from, to time.Time) {
	h := dayStartHour(s)
	from = time.Date(d.Year, d.Month, d.Day, h, 0, 0, 0, berlin).UTC()
	to = time.Date(d.Year, d.Month, d.Day+1, h, 0, 0, 0, berlin).UTC()
	return from, to
}

// MonthBounds returns the half-open UTC range of the Bilanzierungsmonat
// year-m for s, e.g. June 2025 gas = [2025-06-01T04:00Z, 2025-07-01T04:00Z).
func MonthBounds(year int, m time.Month, s Sparte) (from, to time.Time) {
	h := dayStartHour(s)
	from = time.Date(year, m, 1, h, 0, 0, 0, berlin).UTC()
	to = time.Date(year, m+1, 1, h, 0, 0, 0, berlin).UTC()
	return from, to
}

// ExpectedIntervals is the number of intervals of grid r in balancing day d
// for s: 96 / 92 / 100 at PT15M, 1440 / 1380 / 1500 at PT1M, 24 / 23 / 25 at
// PT1H, 1 at P1D. For gas the short and long days are the ones named after
// the Saturday. P1M and P1Y have no per-day count (an interval spans many
// days), so they return ErrNotDaily rather than a number that would read as
// "one interval expected every day".
func ExpectedIntervals(d Date, r Resolution, s Sparte) (int, error) {
	if !d.Valid() {
		return 0, fmt.Errorf("%w: date %s is not a calendar day", ErrInvalid, d)
	}
	if r.IsZero() {
		return 0, fmt.Errorf("%w: resolution is undeclared; declare the grid, e.g. PT15M", ErrInvalid)
	}
	if r.kind == resDay {
		return 1, nil
	}
	step, ok := r.Fixed()
	if !ok {
		return 0, fmt.Errorf("%w: %s spans more than a day; count per month or year instead", ErrNotDaily, r)
	}
	from, to := DayBounds(d, s)
	return int(to.Sub(from) / step), nil
}
