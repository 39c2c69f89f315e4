package mscons

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore/metering"
)

// Kind is what a message's values are: energy over intervals (Lastgang,
// Energiemenge) or register readings at instants (Zählerstand). They go to
// different tables and are never mixed.
type Kind uint8

// Kinds.
const (
	KindInterval Kind = iota + 1 // metering.Delivery.Intervals
	KindPoint                    // metering.Delivery.Readings
)

// String returns "interval" or "point".
func (k Kind) String() string {
	switch k {
	case KindInterval:
		return "interval"
	case KindPoint:
		return "point"
	}
	return ""
}

// pid is what a Prüfidentifikator (RFF+Z13) says about its values.
type pid struct {
	name   string
	sparte metering.Sparte
	kind   Kind
	grid   bool // a Lastgang: one fixed step of whole minutes dividing an hour, or an hour
}

// pids are the Prüfidentifikatoren read as readings (domain-rules.md §9,
// from the MSCONS AHB's list as quoted there; secondary).
var pids = map[string]pid{
	"13025": {"Lastgang Marktlokation/Tranche", metering.SparteStrom, KindInterval, true},
	"13018": {"Lastgang Messlokation", metering.SparteStrom, KindInterval, true},
	"13008": {"Lastgang Gas", metering.SparteGas, KindInterval, true},
	"13019": {"Energiemenge Strom", metering.SparteStrom, KindInterval, false},
	"13009": {"Energiemenge Gas", metering.SparteGas, KindInterval, false},
	"13017": {"Zählerstand Strom", metering.SparteStrom, KindPoint, false},
	"13002": {"Zählerstand Gas", metering.SparteGas, KindPoint, false},
}

// notReadings are Prüfidentifikatoren known and refused: their values are
// not readings of a location, or their meaning is not confirmed.
var notReadings = map[string]string{
	"13022": "Ausfallarbeit (Redispatch 2.0) is lost energy computed by the operator, not a reading",
	"13027": "Werte nach Typ 2: no source confirms them as readings of the location named",
}

// qualities maps the QTY qualifier (DE 6063) to a quality. Source: BO4E
// Messwertstatus (bo4e.de, enum-messwertstatus), domain-rules.md §6. A code
// not listed is refused, never guessed: 201 Vorschlagswert, 79 Summenwert,
// Z30 Fehlender Wert and Z31 Angabe für Lieferschein are no quality of a
// stored reading.
var qualities = map[string]metering.Quality{
	"220": metering.QualityMeasured,    // Wahrer Wert / abgelesener Wert
	"67":  metering.QualitySubstituted, // Ersatzwert
	"187": metering.QualityEstimated,   // Prognosewert
	"Z18": metering.QualityPreliminary, // Vorläufiger Wert
	"20":  metering.QualityFaulty,      // Nicht verwendbarer Wert
}

// units maps QTY's unit (DE 6411, UN/ECE Rec. 20).
var units = map[string]metering.Unit{
	"KWH": metering.UnitKWh,
	"MTQ": metering.UnitM3,
}

// obisMedium is the OBIS value group A of each Sparte this reader maps
// (domain-rules.md §5: 1 electricity, 7 gas).
var obisMedium = map[metering.Sparte]int{metering.SparteStrom: 1, metering.SparteGas: 7}

// parseValue reads a QTY value with the interchange's decimal mark exactly:
// an optional minus, digits, optionally the mark and digits. Anything else
// (a thousands separator, the other mark, an exponent) is refused.
func parseValue(s string, mark byte) (decimal.Decimal, error) {
	t := strings.TrimPrefix(s, "-")
	intPart, frac, hasMark := strings.Cut(t, string(mark))
	if intPart == "" || !digits(intPart) || (hasMark && (frac == "" || !digits(frac))) {
		return decimal.Decimal{}, fmt.Errorf("%q is not a number with decimal mark %q", s, mark)
	}
	if mark != '.' && hasMark {
		s = strings.Replace(s, string(mark), ".", 1)
	}
	return decimal.NewFromString(s)
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseOffset reads a UTC offset "+01", "-02" or "+0100" in hours and
// minutes; the EDI@Energy files write "?+01", released.
func parseOffset(s string) (int, bool) {
	if len(s) != 3 && len(s) != 5 || (s[0] != '+' && s[0] != '-') || !digits(s[1:]) {
		return 0, false
	}
	h, _ := strconv.Atoi(s[1:3])
	m := 0
	if len(s) == 5 {
		m, _ = strconv.Atoi(s[3:5])
	}
	if h > 14 || m > 59 {
		return 0, false
	}
	sec := h*3600 + m*60
	if s[0] == '-' {
		sec = -sec
	}
	return sec, true
}

// parseDTM reads a DTM value in format 303 (CCYYMMDDHHMM plus UTC offset)
// or 304 (CCYYMMDDHHMMSS plus UTC offset) into a UTC instant. A local time
// without an offset (203, 204) is read as wall-clock time in tz
// (Options.TimeZone), refusing one the clocks skip or repeat there; with tz
// nil it is refused, naming the option: it is ambiguous on the autumn DST
// night, and nothing in the message says which zone it is in.
func parseDTM(value, format string, tz *time.Location) (time.Time, error) {
	var n int
	local := false
	switch format {
	case "303":
		n = 12
	case "304":
		n = 14
	case "203", "204":
		if tz == nil {
			return time.Time{}, fmt.Errorf("format %q carries no UTC offset, and no time zone was named to read it in; write format 303 (CCYYMMDDHHMM?+ZZ) or 304 (CCYYMMDDHHMMSS?+ZZ), or name the zone the sender's local times are in: msql import --time-zone Europe/Berlin (Options.TimeZone)", format)
		}
		n, local = 12, true
		if format == "204" {
			n = 14
		}
	default:
		return time.Time{}, fmt.Errorf("format %q carries no UTC offset or is not a point in time; an instant needs format 303 (CCYYMMDDHHMM?+ZZ) or 304 (CCYYMMDDHHMMSS?+ZZ)", format)
	}
	if len(value) < n || !digits(value[:n]) {
		return time.Time{}, fmt.Errorf("%q is not format %s: it starts with %d digits", value, format, n)
	}
	off := 0
	if local {
		if len(value) != n {
			return time.Time{}, fmt.Errorf("%q is not format %s: %d digits and nothing after them", value, format, n)
		}
	} else {
		var ok bool
		if off, ok = parseOffset(value[n:]); !ok {
			return time.Time{}, fmt.Errorf("%q has no UTC offset after the %d digits (write ?+00, ?+01 or ?+02)", value, n)
		}
	}
	num := func(i, j int) int {
		v := 0
		for _, c := range value[i:j] {
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, d, h, mi, sec := num(0, 4), num(4, 6), num(6, 8), num(8, 10), num(10, 12), 0
	if n == 14 {
		sec = num(12, 14)
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, 0, time.UTC)
	if mo < 1 || mo > 12 || t.Day() != d || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, fmt.Errorf("%q is not a calendar date and time", value)
	}
	if local {
		u, err := metering.InZone(t, tz)
		if err != nil {
			return time.Time{}, fmt.Errorf("format %s, local time in %s: %w; write format 303 with the offset the sender meant", format, tz, err)
		}
		return u, nil
	}
	return t.Add(-time.Duration(off) * time.Second), nil
}

// gridOf returns the Resolution of a Lastgang step: whole minutes dividing
// an hour, or an hour.
func gridOf(step time.Duration) (metering.Resolution, bool) {
	if step <= 0 || step > time.Hour || step%time.Minute != 0 || time.Hour%step != 0 {
		return metering.Resolution{}, false
	}
	text := fmt.Sprintf("PT%dM", step/time.Minute)
	if step == time.Hour {
		text = "PT1H"
	}
	r, err := metering.ParseResolution(text)
	return r, err == nil
}
