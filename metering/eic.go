package metering

import (
	"strings"
)

const eicAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-"

// eicCheck computes the check character of the first 15 characters (ENTSO-E
// EIC Reference Manual, as implemented by python-stdnum eu/eic.py): values
// 0-9, A-Z = 10-35, '-' = 36, weights 16…2, check = 36 − ((s − 1) mod 37).
// The caller has verified the alphabet.
func eicCheck(body string) byte {
	s := 0
	for i := 0; i < 15; i++ {
		s += strings.IndexByte(eicAlphabet, body[i]) * (16 - i)
	}
	return eicAlphabet[36-((s-1)%37)]
}

// EIC is an ENTSO-E Energy Identification Code: 16 characters of 0-9, A-Z
// and '-'; positions 1-2 the issuing office (LIO), 3 the object type letter,
// 16 a check character that is never '-'. Bilanzkreise (X, and since 2018
// also Y) and Bilanzierungsgebiete (Y) share the alphabet, so the object type
// is a query, not part of validity.
type EIC struct{ s string }

// ParseEIC trims surrounding space and uppercases ASCII letters, then checks
// the alphabet, the length, the object-type letter and the check character.
// An object-type letter outside ENTSO-E's list is tolerated (ObjectType
// reports false): the list is ENTSO-E's to extend, and a decade of retention
// must not refuse a code issued after this build.
func ParseEIC(s string) (EIC, error) {
	const kind = "eic"
	t := asciiUpper(strings.TrimSpace(s))
	for i := 0; i < len(t); i++ {
		if strings.IndexByte(eicAlphabet, t[i]) < 0 {
			return EIC{}, idErr(kind, s, "may hold only 0-9, A-Z and '-'", "remove spaces and other characters inside the code")
		}
	}
	if len(t) != 16 {
		return EIC{}, idErr(kind, s, "must be 16 characters", "an EIC is 2 issuer + 1 type + 12 code + 1 check character, e.g. 10YDE-RWENET---I")
	}
	if t[2] < 'A' || t[2] > 'Z' {
		return EIC{}, idErr(kind, s, "position 3 must be the object-type letter", "check that the code was not shifted by a missing character")
	}
	want := eicCheck(t)
	if want == '-' {
		return EIC{}, idErr(kind, s, "no check character exists for these 15 characters (it would be '-')", "this code cannot have been issued; take it from the EIC register")
	}
	if t[15] != want {
		return EIC{}, idErr(kind, s, "check character is "+string(want)+", not "+string(t[15]),
			"example codes from message guides are often not valid EICs; take the code from the EIC register")
	}
	return EIC{s: t}, nil
}

// String returns the trimmed uppercase form.
func (e EIC) String() string { return e.s }

// IsZero reports whether e was never parsed.
func (e EIC) IsZero() bool { return e.s == "" }

// MarshalText writes the canonical form.
func (e EIC) MarshalText() ([]byte, error) { return []byte(e.s), nil }

// UnmarshalText parses with ParseEIC.
func (e *EIC) UnmarshalText(b []byte) error {
	v, err := ParseEIC(string(b))
	if err != nil {
		return err
	}
	*e = v
	return nil
}

// Issuer returns the two-character issuing office (e.g. "10" ENTSO-E, "11" BDEW).
func (e EIC) Issuer() string {
	if e.s == "" {
		return ""
	}
	return e.s[:2]
}

// ObjectType returns the ENTSO-E object type letter, or false when the letter
// is not on this build's list (tolerated, see ParseEIC) or e is zero.
func (e EIC) ObjectType() (EICObjectType, bool) {
	if e.s == "" {
		return 0, false
	}
	t := EICObjectType(e.s[2])
	return t, t.valid()
}

// Regelzone returns the control area of a German Bilanzierungsgebiet: LIO
// "11", object type Y, position 4 the Regelzone letter.
//
// Only R = Amprion is confirmed (Amprion: "Der Nummernkreis für Amprion GmbH
// beginnt mit 11YR"). N = TenneT, V = 50Hertz and W = TransnetBW are
// secondary: they come from third-party code citing BDEW AWH "Energy
// Identification Codes" v1.0 §2.2.2, which was not available to check.
// Since 2018 a Bilanzkreis may also carry an 11Y code, so a result here is a
// hint about an area code, not proof that the code is a Bilanzierungsgebiet.
func (e EIC) Regelzone() (Regelzone, bool) {
	if e.s == "" || e.s[:2] != "11" || e.s[2] != 'Y' {
		return "", false
	}
	switch e.s[3] {
	case 'R':
		return RegelzoneAmprion, true
	case 'N':
		return RegelzoneTenneT, true
	case 'V':
		return RegelzoneFiftyHertz, true
	case 'W':
		return RegelzoneTransnetBW, true
	}
	return "", false
}

// EICObjectType is the object-type letter at position 3 of an EIC (ENTSO-E
// EIC Reference Manual §4.2).
type EICObjectType byte

// The ENTSO-E object types.
const (
	EICParty            EICObjectType = 'X' // market participant; German Bilanzkreise
	EICArea             EICObjectType = 'Y' // area / domain; since 2018 also further Bilanzkreise
	EICMeasurementPoint EICObjectType = 'Z'
	EICResource         EICObjectType = 'W'
	EICTieLine          EICObjectType = 'T'
	EICLocation         EICObjectType = 'V'
	EICSubstation       EICObjectType = 'A'
)

var eicObjectTypes = []EICObjectType{EICParty, EICArea, EICMeasurementPoint, EICResource, EICTieLine, EICLocation, EICSubstation}

func (t EICObjectType) valid() bool {
	for _, v := range eicObjectTypes {
		if t == v {
			return true
		}
	}
	return false
}

// String returns the letter, or "" for the zero value.
func (t EICObjectType) String() string {
	if t == 0 {
		return ""
	}
	return string(rune(t))
}

// ParseEICObjectType parses a single listed letter, as used by column
// declarations such as EIC:X. Unlike ParseEIC it refuses an unlisted letter:
// a declaration naming one could never match what the author meant.
func ParseEICObjectType(s string) (EICObjectType, error) {
	if len(s) == 1 && EICObjectType(s[0]).valid() {
		return EICObjectType(s[0]), nil
	}
	allowed := make([]string, len(eicObjectTypes))
	for i, v := range eicObjectTypes {
		allowed[i] = v.String()
	}
	if len(s) == 1 {
		if u := EICObjectType(asciiUpper(s)[0]); u.valid() {
			return 0, &CodeError{Kind: "eic object type", Value: s, Allowed: allowed, Canonical: u.String()}
		}
	}
	return 0, &CodeError{Kind: "eic object type", Value: s, Allowed: allowed}
}

// Regelzone is a German control area, spelled as the SQL functions return it.
type Regelzone string

// The four German control areas.
const (
	RegelzoneTenneT     Regelzone = "TENNET"
	RegelzoneAmprion    Regelzone = "AMPRION"
	RegelzoneFiftyHertz Regelzone = "FIFTY_HERTZ"
	RegelzoneTransnetBW Regelzone = "TRANSNET_BW"
)
