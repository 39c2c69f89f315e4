// Package rulecases is the one list of writes the hot tier's integrity
// constraints refuse — PostgreSQL's exclusion constraints, its primary key
// and Write's check across partitions — with controls they accept. hot's
// tests run each case through PostgreSQL; store's tests run each through
// every cold write path (a late correction, a history load) and expect the
// same refusal. A refusal added here is held to every tier by construction.
//
// A case is tier-neutral: readings, operators and versions are indexes the
// runner maps to its own identifiers, and times are offsets from a base the
// runner gives each case (a UTC day start; the case stays within Span of it).
package rulecases

import (
	"time"

	"github.com/meterstore/meterstore"
)

// Span is how much time after its base a case's intervals may reach: a
// runner gives each case a stretch this long of its own.
const Span = 72 * time.Hour

// Reading names one of the two channels of one MaLo a case writes.
type Reading int

// The readings.
const (
	Import Reading = iota // the reading every case writes
	Export                // another reading of the same MaLo
)

// Operator names one of two network operators.
type Operator int

// The operators.
const (
	FirstOperator Operator = iota
	SecondOperator
)

// Interval is one interval of a delivery, as offsets from the case's base.
type Interval struct {
	From, To time.Duration
	Value    string
}

// Delivery is one delivery: intervals of one reading by one operator at one
// version, the runner's base version plus Version.
type Delivery struct {
	Reading   Reading
	Operator  Operator
	Version   uint64
	WithMelo  bool // the rows name a Messlokation (on a table not identifying by it)
	Intervals []Interval
}

// Case is a write: Stored is written first, in one call (none if empty),
// Offered after it in one call. Want is the sentinel of the rule refusing
// Offered (meterstore.ErrOverlap, ErrSecondOperator, ErrRestatement), nil for
// a control the rules accept.
type Case struct {
	Name            string
	Stored, Offered []Delivery
	Want            error
}

func quarterHour(i int, value string) Interval {
	f := time.Duration(i) * 15 * time.Minute
	return Interval{f, f + 15*time.Minute, value}
}

func quarterHours(from, n int) []Interval {
	var out []Interval
	for i := from; i < from+n; i++ {
		out = append(out, quarterHour(i, "1"))
	}
	return out
}

func hourAt(at time.Duration) Interval { return Interval{at, at + time.Hour, "4"} }

// dayAt is a daily value: a Berlin day, 23:00–23:00 UTC in winter.
func dayAt(at time.Duration) Interval { return Interval{at, at + 24*time.Hour, "24"} }

// at shifts intervals by d.
func at(d time.Duration, ivs ...Interval) []Interval {
	out := make([]Interval, len(ivs))
	for i, x := range ivs {
		out[i] = Interval{x.From + d, x.To + d, x.Value}
	}
	return out
}

func first(version uint64, ivs ...Interval) Delivery {
	return Delivery{Reading: Import, Operator: FirstOperator, Version: version, Intervals: ivs}
}

func deliveries(ds ...Delivery) []Delivery { return ds }

// Cases returns every case, in a fixed order.
func Cases() []Case {
	midnight := 24 * time.Hour // a partition boundary of UTC-day partitions
	return []Case{
		{"quarter-hours inside a stored hour",
			deliveries(first(0, hourAt(0))), deliveries(first(0, quarterHours(1, 3)...)), meterstore.ErrOverlap},
		{"hour over stored quarter-hours not sharing its start",
			deliveries(first(0, quarterHours(1, 4)...)), deliveries(first(0, hourAt(0))), meterstore.ErrOverlap},
		{"hour and quarter-hours in one call, not sharing a start",
			nil, deliveries(first(0, quarterHours(1, 4)...), first(0, hourAt(0))), meterstore.ErrOverlap},
		{"hour and quarter-hours in one call, sharing a start",
			nil, deliveries(first(0, quarterHours(0, 4)...), first(0, hourAt(0))), meterstore.ErrRestatement},
		{"quarter-hour inside a stored hour crossing a partition boundary",
			deliveries(first(0, hourAt(midnight-30*time.Minute))), deliveries(first(0, at(midnight, quarterHour(1, "1"))...)), meterstore.ErrOverlap},
		{"hour crossing a partition boundary over a stored quarter-hour after it",
			deliveries(first(0, at(midnight, quarterHour(1, "1"))...)), deliveries(first(0, hourAt(midnight-30*time.Minute))), meterstore.ErrOverlap},
		{"hour crossing a partition boundary and a quarter-hour inside it in one call",
			nil, deliveries(first(0, hourAt(midnight-30*time.Minute)), first(0, at(midnight, quarterHour(0, "1"))...)), meterstore.ErrOverlap},
		{"quarter-hour inside a stored day",
			deliveries(first(0, dayAt(23*time.Hour))), deliveries(first(0, at(30*time.Hour, quarterHour(0, "1"))...)), meterstore.ErrOverlap},
		{"second operator",
			deliveries(first(0, quarterHour(0, "1"))),
			deliveries(Delivery{Reading: Import, Operator: SecondOperator, Version: 1, Intervals: []Interval{quarterHour(0, "1.1")}}),
			meterstore.ErrSecondOperator},
		{"conflicting restatement",
			deliveries(first(0, quarterHour(0, "1"))), deliveries(first(0, quarterHour(0, "1.000001"))), meterstore.ErrRestatement},
		{"conflicting restatement next to another reading's new row",
			deliveries(first(0, quarterHour(0, "1"))),
			deliveries(Delivery{Reading: Export, Version: 0, Intervals: []Interval{quarterHour(0, "7")}}, first(0, quarterHour(0, "1.000001"))),
			meterstore.ErrRestatement},
		{"conflicting restatement in one call",
			nil, deliveries(first(0, quarterHour(0, "1")), first(0, quarterHour(0, "2"))), meterstore.ErrRestatement},
		{"a Messlokation named under a stored reading without one",
			deliveries(first(0, quarterHour(0, "1"))),
			deliveries(Delivery{Reading: Import, Version: 0, WithMelo: true, Intervals: []Interval{quarterHour(0, "1")}}),
			meterstore.ErrRestatement},
		{"control: a higher version may overlap",
			deliveries(first(0, hourAt(0))), deliveries(first(1, quarterHours(1, 3)...)), nil},
		{"control: the same operator at a higher version",
			deliveries(first(0, quarterHour(0, "1"))), deliveries(first(1, quarterHour(0, "1.1"))), nil},
		{"control: an adjacent interval at the same version",
			deliveries(first(0, hourAt(0))), deliveries(first(0, quarterHour(4, "1"))), nil},
		{"control: a quarter-hour after a crossing hour ends",
			deliveries(first(0, hourAt(midnight-30*time.Minute))), deliveries(first(0, at(midnight, quarterHour(2, "1"))...)), nil},
		{"control: two daily values touching across a partition boundary",
			nil, deliveries(first(0, dayAt(23*time.Hour), dayAt(23*time.Hour+midnight))), nil},
		{"control: another reading over the same span",
			deliveries(first(0, hourAt(0))), deliveries(Delivery{Reading: Export, Version: 0, Intervals: quarterHours(1, 3)}), nil},
	}
}
