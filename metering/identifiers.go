package metering

import (
	"strings"
)

// lokWaggonCheck computes the BDEW "Lok- und Waggon" check digit over digits:
// the sum of the odd positions (1-based) plus twice the sum of the even ones,
// then (10 − c mod 10) mod 10. The even sum is doubled as a whole, the
// products are not reduced to digit sums, so this is deliberately NOT Luhn
// (Luhn gives 8 for 4137355924, the AWH example's check digit is 1).
// Source: BDEW Anwendungshilfe MaLo-ID v1.0 (28.04.2017), domain-rules.md §1.
func lokWaggonCheck(digits string) byte {
	var odd, even int
	for i := 0; i < len(digits); i++ {
		d := int(digits[i] - '0')
		if i%2 == 0 {
			odd += d
		} else {
			even += d
		}
	}
	c := odd + 2*even
	return byte('0' + (10-c%10)%10)
}

// gs1Check computes the GS1 (GLN/EAN-13) check digit: weights 1,3,1,3,… from
// the left over the first twelve digits. Source: GS1 General Specifications,
// domain-rules.md §4.
func gs1Check(digits string) byte {
	s := 0
	for i := 0; i < len(digits); i++ {
		d := int(digits[i] - '0')
		if i%2 == 1 {
			d *= 3
		}
		s += d
	}
	return byte('0' + (10-s%10)%10)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// asciiUpper uppercases a-z only. strings.ToUpper would map e.g. 'ſ' to 'S'
// and so accept an identifier nobody typed.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// MaloID is a Marktlokations-ID: 11 digits, the first 1–9, the last a BDEW
// Lok/Waggon check digit. It identifies the market location a reading is
// settled on; a wrong digit is a different location, so it is parsed on every
// boundary. The ID does not encode the Sparte.
type MaloID struct{ s string }

// ParseMaloID trims surrounding space and validates format and check digit.
func ParseMaloID(s string) (MaloID, error) {
	const kind = "malo-id"
	t := strings.TrimSpace(s)
	if len(t) != 11 || !allDigits(t) {
		return MaloID{}, idErr(kind, s, "must be exactly 11 digits", "copy the Marktlokations-ID without separators, e.g. 41373559241")
	}
	if t[0] == '0' {
		return MaloID{}, idErr(kind, s, "must not start with 0", "the first digit is 1-9; a leading 0 usually means a truncated or padded value")
	}
	if want := lokWaggonCheck(t[:10]); t[10] != want {
		return MaloID{}, idErr(kind, s, "check digit (BDEW Lok/Waggon procedure) is "+string(want)+", not "+string(t[10]),
			"a digit was changed or transposed; take the ID from the master data, not from a retyped copy")
	}
	return MaloID{s: t}, nil
}

// String returns the 11-digit canonical form.
func (m MaloID) String() string { return m.s }

// IsZero reports whether m was never parsed.
func (m MaloID) IsZero() bool { return m.s == "" }

// MarshalText writes the canonical form.
func (m MaloID) MarshalText() ([]byte, error) { return []byte(m.s), nil }

// UnmarshalText parses with ParseMaloID.
func (m *MaloID) UnmarshalText(b []byte) error {
	v, err := ParseMaloID(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// MeloID is a Messlokations-ID (Zählpunktbezeichnung): 33 characters —
// country (2 letters), Netzbetreibernummer (6 digits), Postleitzahl (5 digits),
// Zählpunktnummer (20 alphanumerics). It has no check digit, so only the
// structure is checked (MeteringCode 2006; the bo4e regex, domain-rules.md §2).
// Gas MeLos (DVGW G 2000) use the same scheme.
type MeloID struct{ s string }

// ParseMeloID trims, uppercases ASCII letters (a project decision: the
// standard shows uppercase only, lowercase input is common in CSV exports) and
// checks ^[A-Z]{2}[0-9]{6}[0-9]{5}[A-Z0-9]{20}$.
func ParseMeloID(s string) (MeloID, error) {
	const kind = "melo-id"
	t := asciiUpper(strings.TrimSpace(s))
	if len(t) != 33 {
		return MeloID{}, idErr(kind, s, "must be 33 characters", "write the Zählpunktbezeichnung without spaces, e.g. DE00056266802AO6G56M11SN51G21M24S")
	}
	for i := 0; i < 33; i++ {
		c := t[i]
		isL := c >= 'A' && c <= 'Z'
		isD := c >= '0' && c <= '9'
		switch {
		case i < 2 && !isL:
			return MeloID{}, idErr(kind, s, "positions 1-2 must be the country code letters", "start with the ISO 3166 country code, e.g. DE")
		case i >= 2 && i < 13 && !isD:
			return MeloID{}, idErr(kind, s, "positions 3-13 must be digits (Netzbetreibernummer and Postleitzahl)", "check for a letter O typed for a zero")
		case i >= 13 && !isL && !isD:
			return MeloID{}, idErr(kind, s, "positions 14-33 must be letters or digits", "remove separators and special characters")
		}
	}
	return MeloID{s: t}, nil
}

// String returns the 33-character uppercase form.
func (m MeloID) String() string { return m.s }

// IsZero reports whether m was never parsed (a delivery naming no MeLo).
func (m MeloID) IsZero() bool { return m.s == "" }

// MarshalText writes the canonical form.
func (m MeloID) MarshalText() ([]byte, error) { return []byte(m.s), nil }

// UnmarshalText parses with ParseMeloID.
func (m *MeloID) UnmarshalText(b []byte) error {
	v, err := ParseMeloID(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// BdewCode is a 13-digit Marktpartner-ID: a BDEW/DVGW Codenummer (prefix 99
// or 98, Lok/Waggon check digit) or a GS1 GLN (GS1 check digit). It names the
// network operator of a version scope, so a plausible-but-wrong code would
// open a scope no correction ever supersedes; it is refused unless one of the
// two procedures holds (domain-rules.md §4).
type BdewCode struct {
	s         string
	bdew, gs1 bool
}

// ParseBdewCode trims surrounding space and accepts 13 digits that pass the
// BDEW procedure or the GS1 one.
func ParseBdewCode(s string) (BdewCode, error) {
	const kind = "marktpartner-id"
	t := strings.TrimSpace(s)
	if len(t) != 13 || !allDigits(t) {
		return BdewCode{}, idErr(kind, s, "must be exactly 13 digits", "use the BDEW/DVGW Codenummer or GLN as published, e.g. 9910125000002")
	}
	if strings.Trim(t, "0") == "" {
		return BdewCode{}, idErr(kind, s, "all zeros is a placeholder, not an assigned code", "use the operator's real Marktpartner-ID")
	}
	c := BdewCode{s: t, bdew: lokWaggonCheck(t[:12]) == t[12], gs1: gs1Check(t[:12]) == t[12]}
	if !c.bdew && !c.gs1 {
		return BdewCode{}, idErr(kind, s,
			"check digit fails both the BDEW procedure (wants "+string(lokWaggonCheck(t[:12]))+") and the GS1 one (wants "+string(gs1Check(t[:12]))+")",
			"example codes from message guides often fail both; take the code from the BDEW/DVGW code list")
	}
	return c, nil
}

// String returns the 13 digits.
func (c BdewCode) String() string { return c.s }

// IsZero reports whether c was never parsed.
func (c BdewCode) IsZero() bool { return c.s == "" }

// PassesBDEW reports whether the BDEW (Lok/Waggon) check digit holds. A 99…
// or 98… code is expected to.
func (c BdewCode) PassesBDEW() bool { return c.bdew }

// PassesGS1 reports whether the GS1 (GLN) check digit holds. Both may hold.
func (c BdewCode) PassesGS1() bool { return c.gs1 }

// MarshalText writes the canonical form.
func (c BdewCode) MarshalText() ([]byte, error) { return []byte(c.s), nil }

// UnmarshalText parses with ParseBdewCode.
func (c *BdewCode) UnmarshalText(b []byte) error {
	v, err := ParseBdewCode(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}
