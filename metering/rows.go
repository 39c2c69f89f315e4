package metering

import (
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// valueScale and valueIntDigits are decimal(18,6): six decimals, twelve
// integer digits — the storage column's type in both tiers.
const (
	valueScale     = 6
	valueIntDigits = 12
)

var valueLimit = decimal.New(1, valueIntDigits) // 10^12

// checkValue refuses a value that decimal(18,6) cannot hold exactly; rounding
// it silently would change a billed quantity.
func checkValue(v decimal.Decimal) (decimal.Decimal, error) {
	t := v.Truncate(valueScale)
	if !t.Equal(v) {
		return decimal.Decimal{}, fmt.Errorf("%w: value %s has more than %d decimals; round it where its precision is known", ErrInvalid, v, valueScale)
	}
	if t.Abs().GreaterThanOrEqual(valueLimit) {
		return decimal.Decimal{}, fmt.Errorf("%w: value %s has more than %d integer digits (decimal(18,6)); check the unit", ErrInvalid, v, valueIntDigits)
	}
	return t, nil
}

// checkInstant refuses a zero time and sub-microsecond precision: storage
// holds UTC microseconds, and truncating would move a boundary.
func checkInstant(name string, t time.Time) (time.Time, error) {
	if t.IsZero() {
		return time.Time{}, fmt.Errorf("%w: %s is unset", ErrInvalid, name)
	}
	if t.Nanosecond()%1000 != 0 {
		return time.Time{}, fmt.Errorf("%w: %s %s has sub-microsecond precision; storage holds microseconds", ErrInvalid, name, t.Format(time.RFC3339Nano))
	}
	return t.UTC(), nil
}

// Interval is an energy quantity over [From, To). Both bounds are stored,
// never derived: a P1D or P1M interval is 23, 24 or 25 hours long across a
// DST switch, and a 100-interval autumn day must survive archival with its
// boundaries exactly as delivered.
type Interval struct {
	From, To time.Time // UTC, microsecond precision, From < To
	Value    decimal.Decimal
	Quality  Quality
}

// NewInterval validates and normalises (UTC) an interval.
func NewInterval(from, to time.Time, v decimal.Decimal, q Quality) (Interval, error) {
	f, err := checkInstant("interval from", from)
	if err != nil {
		return Interval{}, err
	}
	t, err := checkInstant("interval to", to)
	if err != nil {
		return Interval{}, err
	}
	if !f.Before(t) {
		return Interval{}, fmt.Errorf("%w: interval [%s, %s) is empty or reversed; from must be before to",
			ErrInvalid, formatInstant(f), formatInstant(t))
	}
	val, err := checkValue(v)
	if err != nil {
		return Interval{}, err
	}
	if q.IsZero() || q.String() == "" {
		return Interval{}, fmt.Errorf("%w: interval at %s has no quality; set one, e.g. MEASURED", ErrInvalid, formatInstant(f))
	}
	return Interval{From: f, To: t, Value: val, Quality: q}, nil
}

// Reading is a cumulative register value at an instant (a Zählerstand). It
// has no end: an instant has none, and a zero-width interval would make
// demand (energy over duration) meaningless.
type Reading struct {
	At      time.Time // UTC, microsecond precision
	Value   decimal.Decimal
	Quality Quality
}

// NewReading validates and normalises (UTC) a reading.
func NewReading(at time.Time, v decimal.Decimal, q Quality) (Reading, error) {
	a, err := checkInstant("reading at", at)
	if err != nil {
		return Reading{}, err
	}
	val, err := checkValue(v)
	if err != nil {
		return Reading{}, err
	}
	if q.IsZero() || q.String() == "" {
		return Reading{}, fmt.Errorf("%w: reading at %s has no quality; set one, e.g. MEASURED", ErrInvalid, formatInstant(a))
	}
	return Reading{At: a, Value: val, Quality: q}, nil
}

// Delivery is one series of one reading as a producer wrote it: one MaLo
// (and optionally one MeLo), one OBIS channel, one version in one scope.
// Interval tables take Intervals, point tables take Readings — never both,
// because summing Zählerstände gives a number that looks like consumption.
type Delivery struct {
	MaloID     MaloID
	MeloID     MeloID // zero = none named
	Obis       ObisCode
	Sparte     Sparte
	Unit       Unit
	Resolution Resolution // zero = undeclared

	Intervals []Interval // interval tables
	Readings  []Reading  // point tables

	Source     Source
	Provenance Provenance

	Scope      VersionScope
	Version    Version
	RecordedAt time.Time
}

// Validate checks what the write path must refuse before anything is stored:
// the identifiers are set, the unit fits the Sparte, exactly one of
// Intervals/Readings is given, every row is valid (fields are exported, so
// the constructors may have been bypassed), every start lies in the scope's
// Bilanzierungsmonat, intervals do not overlap, readings do not repeat an
// instant, a declared minute/hour grid matches each interval's length, and
// RecordedAt is set.
func (d Delivery) Validate() error {
	switch {
	case d.MaloID.IsZero():
		return fmt.Errorf("%w: delivery names no MaLo-ID", ErrInvalid)
	case d.Obis.IsZero():
		return fmt.Errorf("%w: delivery %s names no OBIS code", ErrInvalid, d.MaloID)
	case d.Sparte.IsZero() || d.Sparte.String() == "":
		return fmt.Errorf("%w: delivery %s %s has no sparte", ErrInvalid, d.MaloID, d.Obis)
	case d.Scope.IsZero():
		return fmt.Errorf("%w: delivery %s %s has no version scope; build it with ScopeFor", ErrInvalid, d.MaloID, d.Obis)
	case d.Version.IsZero():
		return fmt.Errorf("%w: delivery %s %s has no version; use the MSCONS label or VersionArrival", ErrInvalid, d.MaloID, d.Obis)
	case d.RecordedAt.IsZero():
		return fmt.Errorf("%w: delivery %s %s has no RecordedAt", ErrInvalid, d.MaloID, d.Obis)
	case d.Source.IsZero():
		return fmt.Errorf("%w: delivery %s %s has no source", ErrInvalid, d.MaloID, d.Obis)
	}
	if err := d.Sparte.AllowsUnit(d.Unit); err != nil {
		return fmt.Errorf("delivery %s %s: %w", d.MaloID, d.Obis, err)
	}
	if (len(d.Intervals) == 0) == (len(d.Readings) == 0) {
		return fmt.Errorf("%w: delivery %s %s must carry either intervals or readings, not %d and %d",
			ErrInvalid, d.MaloID, d.Obis, len(d.Intervals), len(d.Readings))
	}
	for _, p := range d.Provenance {
		if err := p.validate(); err != nil {
			return fmt.Errorf("delivery %s %s: %w", d.MaloID, d.Obis, err)
		}
	}
	step, fixed := d.Resolution.Fixed()
	for _, iv := range d.Intervals {
		if _, err := NewInterval(iv.From, iv.To, iv.Value, iv.Quality); err != nil {
			return fmt.Errorf("delivery %s %s: %w", d.MaloID, d.Obis, err)
		}
		if !d.Scope.Covers(iv.From, d.Sparte) {
			return fmt.Errorf("%w: interval [%s, %s) of %s %s belongs to %s month %s, not scope %s",
				ErrScopeMismatch, formatInstant(iv.From), formatInstant(iv.To), d.MaloID, d.Obis,
				d.Sparte, BalancingMonth(iv.From, d.Sparte).String()[:7], d.Scope)
		}
		if fixed && iv.To.Sub(iv.From) != step {
			return fmt.Errorf("%w: interval [%s, %s) of %s %s is not one %s step",
				ErrInvalid, formatInstant(iv.From), formatInstant(iv.To), d.MaloID, d.Obis, d.Resolution)
		}
	}
	sorted := slices.Clone(d.Intervals)
	slices.SortFunc(sorted, func(a, b Interval) int { return a.From.Compare(b.From) })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].From.Before(sorted[i-1].To) {
			return fmt.Errorf("%w: intervals [%s, %s) and [%s, %s) of %s %s overlap within one version",
				ErrOverlap, formatInstant(sorted[i-1].From), formatInstant(sorted[i-1].To),
				formatInstant(sorted[i].From), formatInstant(sorted[i].To), d.MaloID, d.Obis)
		}
	}
	seen := make(map[time.Time]bool, len(d.Readings))
	for _, r := range d.Readings {
		if _, err := NewReading(r.At, r.Value, r.Quality); err != nil {
			return fmt.Errorf("delivery %s %s: %w", d.MaloID, d.Obis, err)
		}
		if !d.Scope.Covers(r.At, d.Sparte) {
			return fmt.Errorf("%w: reading at %s of %s %s belongs to %s month %s, not scope %s",
				ErrScopeMismatch, formatInstant(r.At), d.MaloID, d.Obis,
				d.Sparte, BalancingMonth(r.At, d.Sparte).String()[:7], d.Scope)
		}
		k := r.At.UTC()
		if seen[k] {
			return fmt.Errorf("%w: reading at %s of %s %s appears twice", ErrOverlap, formatInstant(r.At), d.MaloID, d.Obis)
		}
		seen[k] = true
	}
	return nil
}
