package metering

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Version orders the restatements of one reading within a VersionScope; the
// highest wins (invariants 3 and 4). It has decimal(20,0) semantics — an MSCONS
// label is CCYYMMDDHHMMSS (DTM+293, format 304), at least 14 digits — and is
// held as a uint64, so values above 18446744073709551615 are refused rather
// than wrapped. Zero is not a version.
type Version struct{ v uint64 }

// wellFormedMin is the smallest 14-digit number: an MSCONS label has at least
// 14 digits (CCYYMMDDHHMMSS; the AHB wording is unverified, domain-rules.md §8).
const wellFormedMin = 10_000_000_000_000

// ParseVersion parses a positive decimal integer with no sign, no leading
// zeros and no surrounding space: it is a stored form, and "007" would be a
// second spelling of 7.
func ParseVersion(s string) (Version, error) {
	const kind = "version"
	if s == "" || !allDigits(s) {
		return Version{}, idErr(kind, s, "must be a decimal integer of digits only", "write the MSCONS label as CCYYMMDDHHMMSS without the UTC offset, e.g. 20210601060030")
	}
	if s[0] == '0' {
		t := strings.TrimLeft(s, "0")
		if t == "" {
			return Version{}, idErr(kind, s, "zero is not a version", "versions start at 1")
		}
		return Version{}, idErr(kind, s, "must not have leading zeros", "write "+t)
	}
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return Version{}, idErr(kind, s, "exceeds 18446744073709551615, the largest version this store holds", "a longer label is not an MSCONS CCYYMMDDHHMMSS version; check the field it came from")
	}
	return Version{v: u}, nil
}

// NewVersion wraps u; zero is refused.
func NewVersion(u uint64) (Version, error) {
	if u == 0 {
		return Version{}, idErr("version", "0", "zero is not a version", "versions start at 1")
	}
	return Version{v: u}, nil
}

// VersionArrival derives a version for a delivery that states none (an SMGW
// push, a manual entry, a backfill) from when it was recorded: Unix
// milliseconds. That is 13 digits from 2001-09-09 to 2286-11-20, so it always
// sorts below any stated 14-digit MSCONS label — a late delivery that carries
// its own version wins — while still telling apart two writes in one second.
// Outside that window it is refused rather than leaving the band.
func VersionArrival(recordedAt time.Time) (Version, error) {
	if recordedAt.IsZero() {
		return Version{}, fmt.Errorf("%w: arrival version needs the recording time; set RecordedAt", ErrInvalid)
	}
	ms := recordedAt.UnixMilli()
	if ms < 1_000_000_000_000 || ms >= wellFormedMin {
		return Version{}, fmt.Errorf("%w: recorded at %s is outside the 13-digit millisecond band (2001-09-09 to 2286-11-20); check the clock",
			ErrInvalid, recordedAt.UTC().Format(time.RFC3339Nano))
	}
	return Version{v: uint64(ms)}, nil
}

// String returns the decimal form, "" for the zero value.
func (v Version) String() string {
	if v.v == 0 {
		return ""
	}
	return strconv.FormatUint(v.v, 10)
}

// IsZero reports an unset version.
func (v Version) IsZero() bool { return v.v == 0 }

// Uint64 returns the value.
func (v Version) Uint64() uint64 { return v.v }

// IsWellFormed reports a version of at least 14 digits — one the operator
// stated — as opposed to an arrival-derived one, which is 13.
func (v Version) IsWellFormed() bool { return v.v >= wellFormedMin }

// Next returns v + 1, the version an authoritative write re-appends at. It
// panics at the largest uint64: a wrapped or saturated version would silently
// lose to the one it must beat, and no calendar label gets there.
func (v Version) Next() Version {
	if v.v == math.MaxUint64 {
		panic("metering: version overflow: no version above 18446744073709551615")
	}
	return Version{v: v.v + 1}
}

// Compare returns -1, 0 or +1.
func (v Version) Compare(o Version) int { return cmp.Compare(v.v, o.v) }

// MarshalText writes the decimal form.
func (v Version) MarshalText() ([]byte, error) {
	if v.IsZero() {
		return nil, idErr("version", "", "zero is not a version", "set a version")
	}
	return []byte(v.String()), nil
}

// UnmarshalText parses with ParseVersion.
func (v *Version) UnmarshalText(b []byte) error {
	x, err := ParseVersion(string(b))
	if err == nil {
		*v = x
	}
	return err
}

// VersionScope is what a version is comparable within: the network
// operator's Marktpartner-ID and the Bilanzierungsmonat of the interval —
// never of the delivery, or a July reading corrected in August would have two
// scopes, both would survive resolution and every sum would be inflated.
// Stored as 21 characters "<13 digits>:<YYYY-MM>".
type VersionScope struct {
	op    BdewCode
	month Date // first day of the month
}

// ScopeFor builds the scope of an interval starting at from, for s: the
// month is BalancingMonth(from, s), so a gas interval at 05:00 local on the
// 1st belongs to the previous month.
func ScopeFor(op BdewCode, from time.Time, s Sparte) VersionScope {
	return VersionScope{op: op, month: BalancingMonth(from, s)}
}

// ParseVersionScope parses the stored form exactly (no trimming) and
// enforces the operator's check digit (BDEW or GS1): a plausible-but-wrong
// operator is a different scope whose corrections never supersede.
func ParseVersionScope(s string) (VersionScope, error) {
	const kind = "version-scope"
	hint := "write <13-digit operator>:<YYYY-MM>, e.g. 9910125000002:2026-03"
	if len(s) != 21 || s[13] != ':' || s[18] != '-' || !allDigits(s[:13]) || !allDigits(s[14:18]) || !allDigits(s[19:]) {
		return VersionScope{}, idErr(kind, s, "must be 21 characters <13 digits>:<YYYY-MM>", hint)
	}
	op, err := ParseBdewCode(s[:13])
	if err != nil {
		return VersionScope{}, fmt.Errorf("version-scope %q: operator: %w", s, err)
	}
	y, _ := strconv.Atoi(s[14:18])
	m, _ := strconv.Atoi(s[19:])
	if y < 1 || m < 1 || m > 12 {
		return VersionScope{}, idErr(kind, s, "month must be 01-12 of a year from 0001", hint)
	}
	return VersionScope{op: op, month: Date{y, time.Month(m), 1}}, nil
}

// Operator returns the network operator.
func (v VersionScope) Operator() BdewCode { return v.op }

// Month returns the Bilanzierungsmonat as its first day.
func (v VersionScope) Month() Date { return v.month }

// String returns "<operator>:<YYYY-MM>", "" for the zero value.
func (v VersionScope) String() string {
	if v.IsZero() {
		return ""
	}
	return fmt.Sprintf("%s:%04d-%02d", v.op, v.month.Year, int(v.month.Month))
}

// IsZero reports an unset scope.
func (v VersionScope) IsZero() bool { return v.op.IsZero() }

// Covers reports whether an interval starting at from belongs to this
// scope's Bilanzierungsmonat for s.
func (v VersionScope) Covers(from time.Time, s Sparte) bool {
	return !v.IsZero() && BalancingMonth(from, s) == v.month
}

// MarshalText writes the stored form.
func (v VersionScope) MarshalText() ([]byte, error) {
	if v.IsZero() {
		return nil, idErr("version-scope", "", "scope is unset", "build it with ScopeFor")
	}
	return []byte(v.String()), nil
}

// UnmarshalText parses with ParseVersionScope.
func (v *VersionScope) UnmarshalText(b []byte) error {
	x, err := ParseVersionScope(string(b))
	if err == nil {
		*v = x
	}
	return err
}
