package metering

import (
	"strconv"
	"strings"
)

// ObisCode is an OBIS code A-B:C.D.E with an optional storage group F
// (IEC 62056-61; EDI@Energy OBIS-Kennzahlen-System). It names the channel a
// value was measured on, so canonicalisation must never merge two channels:
// F = 255 means "not used" and is dropped (1-0:1.8.0*255 ≡ 1-0:1.8.0), any
// other F (a Vorwert) is kept, and B is never folded (1-1:1.8.0 ≠ 1-0:1.8.0).
type ObisCode struct {
	a, b, c, d, e, f uint8
	hasF             bool
	set              bool
}

// ParseObis trims surrounding space and parses A-B:C.D.E[*F], each group a
// decimal 0-255 of up to three digits (leading zeros accepted, not kept).
// Reduced codes such as 1.8.0 are refused: without A and B they are
// ambiguous between media and channels.
func ParseObis(s string) (ObisCode, error) {
	const kind = "obis"
	t := strings.TrimSpace(s)
	bad := func(rule string) (ObisCode, error) {
		return ObisCode{}, idErr(kind, s, rule, "write the full code A-B:C.D.E, e.g. 1-0:1.8.0 (F is optional)")
	}
	if !strings.ContainsAny(t, "-:") {
		return bad("reduced code without medium and channel (A-B:) is ambiguous")
	}
	var g [6]uint8
	seps := []byte{'-', ':', '.', '.', '*'}
	rest := t
	n := 0
	for ; n < 6; n++ {
		end := len(rest)
		if n < 5 {
			if i := strings.IndexByte(rest, seps[n]); i >= 0 {
				end = i
			} else if n < 4 {
				return bad("expected separator '" + string(seps[n]) + "' after value group " + string("ABCDE"[n]))
			}
		}
		part := rest[:end]
		if len(part) == 0 || len(part) > 3 || !allDigits(part) {
			return bad("value group " + string("ABCDEF"[n]) + " must be 1-3 digits")
		}
		v, _ := strconv.Atoi(part)
		if v > 255 {
			return bad("value group " + string("ABCDEF"[n]) + " exceeds 255")
		}
		g[n] = uint8(v)
		if end == len(rest) {
			break
		}
		rest = rest[end+1:]
	}
	if n < 4 {
		return bad("value groups missing")
	}
	o := ObisCode{a: g[0], b: g[1], c: g[2], d: g[3], e: g[4], set: true}
	if n == 5 && g[5] != 255 {
		o.f, o.hasF = g[5], true
	}
	return o, nil
}

// String returns A-B:C.D.E, with *F only for F other than 255; no zero padding.
func (o ObisCode) String() string {
	if !o.set {
		return ""
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(int(o.a)))
	b.WriteByte('-')
	b.WriteString(strconv.Itoa(int(o.b)))
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(int(o.c)))
	b.WriteByte('.')
	b.WriteString(strconv.Itoa(int(o.d)))
	b.WriteByte('.')
	b.WriteString(strconv.Itoa(int(o.e)))
	if o.hasF {
		b.WriteByte('*')
		b.WriteString(strconv.Itoa(int(o.f)))
	}
	return b.String()
}

// IsZero reports whether o was never parsed.
func (o ObisCode) IsZero() bool { return !o.set }

// MarshalText writes the canonical form.
func (o ObisCode) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText parses with ParseObis.
func (o *ObisCode) UnmarshalText(b []byte) error {
	v, err := ParseObis(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}

// Medium is value group A (1 electricity, 7 gas, 6 heat, 8/9 water, …).
func (o ObisCode) Medium() int { return int(o.a) }

// Channel is value group B (0 = unspecified, 1-64 device channels, 128+ abstract).
func (o ObisCode) Channel() int { return int(o.b) }

// C is value group C: the measurand (for electricity also the direction).
func (o ObisCode) C() int { return int(o.c) }

// D is value group D: the measurement type (8 Zählerstand, 29 Lastgang, …).
func (o ObisCode) D() int { return int(o.d) }

// E is value group E: 0 total, 1-62 tariff register, 63 Fehlerregister.
func (o ObisCode) E() int { return int(o.e) }

// StorageGroup returns F when it was given and not 255.
func (o ObisCode) StorageGroup() (int, bool) { return int(o.f), o.hasF }

// OBIS media (value group A) with a Sparte of their own.
const (
	obisElectricity = 1
	obisGas         = 7
)

// Direction is the energy-flow side of an electricity register.
type Direction uint8

// Directions. DirectionNone is a register without a direction (reactive
// quadrants excluded: see Direction), a gas volume, a Zustandszahl.
const (
	DirectionNone Direction = iota
	DirectionImport
	DirectionExport
)

// String returns "IMPORT", "EXPORT" or "" — the SQL function's spelling.
func (d Direction) String() string {
	switch d {
	case DirectionImport:
		return "IMPORT"
	case DirectionExport:
		return "EXPORT"
	}
	return ""
}

// Direction derives the side from value group C, for electricity (A = 1)
// only: for gas and the other media C is a measurand, not a direction.
// C ∈ {1, 21, 41, 61} (+A total and per phase) and the import-side reactive
// codes {3, 5, 8} are IMPORT; {2, 22, 42, 62} and {4, 6, 7} are EXPORT
// (domain-rules.md §5; the reactive quadrant mapping is IEC convention,
// secondary).
func (o ObisCode) Direction() Direction {
	if !o.set || o.a != obisElectricity {
		return DirectionNone
	}
	switch o.c {
	case 1, 21, 41, 61, 3, 5, 8:
		return DirectionImport
	case 2, 22, 42, 62, 4, 6, 7:
		return DirectionExport
	}
	return DirectionNone
}

// IsImport reports Direction() == DirectionImport. False does not mean export.
func (o ObisCode) IsImport() bool { return o.Direction() == DirectionImport }

// IsExport reports Direction() == DirectionExport. False does not mean import.
func (o ObisCode) IsExport() bool { return o.Direction() == DirectionExport }

// IsReactive reports Blindarbeit/-leistung (electricity C = 3…8): kvarh is not kWh.
func (o ObisCode) IsReactive() bool { return o.set && o.a == obisElectricity && o.c >= 3 && o.c <= 8 }

// IsLastgang reports D = 29, a load-profile interval value.
func (o ObisCode) IsLastgang() bool { return o.set && o.d == 29 }

// IsZaehlerstand reports D = 8, a cumulative register (time integral 1).
func (o ObisCode) IsZaehlerstand() bool { return o.set && o.d == 8 }

// IsVorschub reports D = 9, energy advance over a period (time integral 2).
func (o ObisCode) IsVorschub() bool { return o.set && o.d == 9 }

// IsMaximum reports D = 6, a demand peak in kW — never summed with energy.
func (o ObisCode) IsMaximum() bool { return o.set && o.d == 6 }

// IsFehlerregister reports E = 63, a fault counter. The value 63 is
// unverified against the EDI@Energy code list (domain-rules.md §5).
func (o ObisCode) IsFehlerregister() bool { return o.set && o.e == 63 }

// IsTotal reports E = 0, the total over all tariffs.
func (o ObisCode) IsTotal() bool { return o.set && o.e == 0 }

// TariffRegister returns E for a tariff register (1…62); false for the
// total and for the fault counter, which are not tariffs.
func (o ObisCode) TariffRegister() (int, bool) {
	if o.set && o.e >= 1 && o.e <= 62 {
		return int(o.e), true
	}
	return 0, false
}
