package metering

import (
	"strconv"
	"strings"
	"time"
)

type resKind uint8

const (
	resMinutes resKind = iota + 1
	resHour
	resDay
	resMonth
	resYear
)

// Resolution is the grid a series is measured on, as an ISO 8601 duration:
// whole minutes dividing an hour (PT1M … PT30M), PT1H, P1D, P1M or P1Y. The
// canonical spelling is the one storage holds and the only one the strict
// parser accepts: PT15M, never PT900S; PT1H, never PT60M.
type Resolution struct {
	kind    resKind
	minutes int // for resMinutes: 1..30, a divisor of 60
}

var canonicalResolutions = func() []string {
	var out []string
	for m := 1; m < 60; m++ {
		if 60%m == 0 {
			out = append(out, "PT"+strconv.Itoa(m)+"M")
		}
	}
	return append(out, "PT1H", "P1D", "P1M", "P1Y")
}()

// Resolution constants for the grids most code names.
var (
	ResolutionPT1M  = Resolution{kind: resMinutes, minutes: 1}
	ResolutionPT15M = Resolution{kind: resMinutes, minutes: 15}
	ResolutionPT1H  = Resolution{kind: resHour}
	ResolutionP1D   = Resolution{kind: resDay}
	ResolutionP1M   = Resolution{kind: resMonth}
	ResolutionP1Y   = Resolution{kind: resYear}
)

// ParseResolution accepts the canonical spelling only (stored forms); a
// spelling that means a valid grid is refused naming the canonical one.
func ParseResolution(s string) (Resolution, error) {
	r, err := ParseResolutionLenient(s)
	if err != nil {
		return Resolution{}, &CodeError{Kind: "resolution", Value: s, Allowed: canonicalResolutions}
	}
	if r.String() != s {
		return Resolution{}, &CodeError{Kind: "resolution", Value: s, Allowed: canonicalResolutions, Canonical: r.String()}
	}
	return r, nil
}

// ParseResolutionLenient trims, folds case and accepts other spellings of a
// valid grid (PT900S, PT60S, PT60M, pt15m), returning the canonical value.
// Durations that are not a supported grid (PT7M, PT24H, P2D) are refused:
// PT24H in particular is not P1D, which is 23 or 25 hours on DST days.
func ParseResolutionLenient(s string) (Resolution, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	bad := func() (Resolution, error) {
		return Resolution{}, &CodeError{Kind: "resolution", Value: s, Allowed: canonicalResolutions}
	}
	switch t {
	case "P1D":
		return ResolutionP1D, nil
	case "P1M":
		return ResolutionP1M, nil
	case "P1Y":
		return ResolutionP1Y, nil
	}
	if !strings.HasPrefix(t, "PT") || len(t) < 4 || len(t) > 12 {
		return bad()
	}
	num, unit := t[2:len(t)-1], t[len(t)-1]
	if !allDigits(num) {
		return bad()
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 {
		return bad()
	}
	var seconds int
	switch unit {
	case 'S':
		seconds = n
	case 'M':
		seconds = n * 60
	case 'H':
		seconds = n * 3600
	default:
		return bad()
	}
	if seconds%60 != 0 {
		return bad()
	}
	m := seconds / 60
	switch {
	case m == 60:
		return ResolutionPT1H, nil
	case m < 60 && 60%m == 0:
		return Resolution{kind: resMinutes, minutes: m}, nil
	}
	return bad()
}

// String returns the canonical ISO 8601 spelling, "" for the zero value.
func (r Resolution) String() string {
	switch r.kind {
	case resMinutes:
		return "PT" + strconv.Itoa(r.minutes) + "M"
	case resHour:
		return "PT1H"
	case resDay:
		return "P1D"
	case resMonth:
		return "P1M"
	case resYear:
		return "P1Y"
	}
	return ""
}

// IsZero reports an undeclared resolution.
func (r Resolution) IsZero() bool { return r.kind == 0 }

// Fixed returns the grid's length for minute and hour grids, whose length is
// the same in UTC on every day. Days, months and years vary with DST and the
// calendar, so they report false.
func (r Resolution) Fixed() (time.Duration, bool) {
	switch r.kind {
	case resMinutes:
		return time.Duration(r.minutes) * time.Minute, true
	case resHour:
		return time.Hour, true
	}
	return 0, false
}

// MarshalText writes the canonical spelling.
func (r Resolution) MarshalText() ([]byte, error) {
	if r.IsZero() {
		return nil, &CodeError{Kind: "resolution", Allowed: canonicalResolutions}
	}
	return []byte(r.String()), nil
}

// UnmarshalText parses strictly.
func (r *Resolution) UnmarshalText(b []byte) error {
	v, err := ParseResolution(string(b))
	if err == nil {
		*r = v
	}
	return err
}
