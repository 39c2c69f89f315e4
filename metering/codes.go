package metering

import (
	"fmt"
	"strings"
)

// codeList is the shared machinery of the closed code lists: canonical
// spellings indexed by the code's value (index 0 is the zero value and has
// none), plus ingest aliases. Strict parsing accepts a canonical spelling
// only; lenient parsing trims, folds case and resolves aliases.
type codeList struct {
	kind      string
	canonical []string         // index = code value; [0] = ""
	aliases   map[string]uint8 // upper-cased alias -> code value
}

func (l *codeList) allowed() []string { return append([]string(nil), l.canonical[1:]...) }

func (l *codeList) lenient(s string) (uint8, error) {
	key := strings.ToUpper(strings.TrimSpace(s))
	for i := 1; i < len(l.canonical); i++ {
		if key == l.canonical[i] {
			return uint8(i), nil
		}
	}
	if v, ok := l.aliases[key]; ok {
		return v, nil
	}
	return 0, &CodeError{Kind: l.kind, Value: s, Allowed: l.allowed()}
}

func (l *codeList) strict(s string) (uint8, error) {
	for i := 1; i < len(l.canonical); i++ {
		if s == l.canonical[i] {
			return uint8(i), nil
		}
	}
	if v, err := l.lenient(s); err == nil {
		return 0, &CodeError{Kind: l.kind, Value: s, Allowed: l.allowed(), Canonical: l.canonical[v]}
	}
	return 0, &CodeError{Kind: l.kind, Value: s, Allowed: l.allowed()}
}

func (l *codeList) name(v uint8) string {
	if int(v) < len(l.canonical) {
		return l.canonical[v]
	}
	return ""
}

// Sparte is the commodity. Its zero value is "unset", never electricity, so a
// forgotten field cannot silently become STROM.
type Sparte uint8

// The four Sparten.
const (
	SparteStrom Sparte = iota + 1
	SparteGas
	SparteWaerme
	SparteWasser
)

var sparteList = codeList{
	kind:      "sparte",
	canonical: []string{"", "STROM", "GAS", "WAERME", "WASSER"},
	aliases: map[string]uint8{
		"ELECTRICITY": uint8(SparteStrom), "POWER": uint8(SparteStrom), "ELEKTRIZITÄT": uint8(SparteStrom),
		"ERDGAS": uint8(SparteGas), "NATURAL_GAS": uint8(SparteGas),
		"WÄRME": uint8(SparteWaerme), "HEAT": uint8(SparteWaerme), "FERNWÄRME": uint8(SparteWaerme), "FERNWAERME": uint8(SparteWaerme),
		"WATER": uint8(SparteWasser),
	},
}

// ParseSparte accepts the canonical spelling only (stored forms).
func ParseSparte(s string) (Sparte, error) { v, err := sparteList.strict(s); return Sparte(v), err }

// ParseSparteLenient trims, folds case and accepts aliases such as "Wärme" (ingest).
func ParseSparteLenient(s string) (Sparte, error) {
	v, err := sparteList.lenient(s)
	return Sparte(v), err
}

// Sparten lists every Sparte in canonical order.
func Sparten() []Sparte { return []Sparte{SparteStrom, SparteGas, SparteWaerme, SparteWasser} }

// String returns the canonical spelling, "" for the zero value.
func (s Sparte) String() string { return sparteList.name(uint8(s)) }

// IsZero reports an unset Sparte.
func (s Sparte) IsZero() bool { return s == 0 }

// MarshalText writes the canonical spelling.
func (s Sparte) MarshalText() ([]byte, error) { return marshalCode(&sparteList, uint8(s)) }

// UnmarshalText parses strictly: text is a stored form.
func (s *Sparte) UnmarshalText(b []byte) error {
	v, err := ParseSparte(string(b))
	if err == nil {
		*s = v
	}
	return err
}

// MeasuredUnit is the unit the commodity is metered in: gas and water meters
// count volume (m³), electricity and heat meters count energy (kWh).
func (s Sparte) MeasuredUnit() Unit {
	switch s {
	case SparteStrom, SparteWaerme:
		return UnitKWh
	case SparteGas, SparteWasser:
		return UnitM3
	}
	return 0
}

// BillingUnit is the unit the commodity is settled in: gas is converted with
// Brennwert and Zustandszahl and billed in kWh; water is billed in m³.
func (s Sparte) BillingUnit() Unit {
	switch s {
	case SparteStrom, SparteWaerme, SparteGas:
		return UnitKWh
	case SparteWasser:
		return UnitM3
	}
	return 0
}

// AllowsUnit accepts the measured or the billing unit and refuses anything
// else, naming the right unit: water in kWh is a unit error, not a reading.
func (s Sparte) AllowsUnit(u Unit) error {
	if s.IsZero() || u.IsZero() {
		return &CodeError{Kind: "unit", Value: u.String(), Allowed: unitList.allowed()}
	}
	if u == s.MeasuredUnit() || u == s.BillingUnit() {
		return nil
	}
	want := s.MeasuredUnit().String()
	if s.BillingUnit() != s.MeasuredUnit() {
		want += " or " + s.BillingUnit().String()
	}
	return &unitError{sparte: s, unit: u, want: want}
}

// AllowsObis refuses an OBIS code whose medium (value group A) names
// another Sparte: 1 is electricity, 7 gas (domain-rules.md §5). The Sparte
// decides the balancing day and month, so a gas channel read as STROM would
// put its hours before 06:00 into the wrong gas day and version scope. Other
// media are not checked: 0 is abstract, and heat, cooling and water codes
// do not map one to one onto WAERME and WASSER.
func (s Sparte) AllowsObis(o ObisCode) error {
	var names Sparte
	var medium string
	switch o.Medium() {
	case obisElectricity:
		names, medium = SparteStrom, "electricity"
	case obisGas:
		names, medium = SparteGas, "gas"
	default:
		return nil
	}
	if s == names {
		return nil
	}
	return fmt.Errorf("%w: obis_code %s measures %s (value group A = %d), sparte is %s; write sparte %s, or the channel's own OBIS code",
		ErrInvalid, o, medium, o.Medium(), s, names)
}

type unitError struct {
	sparte Sparte
	unit   Unit
	want   string
}

func (e *unitError) Error() string {
	return "unit " + e.unit.String() + " is not allowed for sparte " + e.sparte.String() + "; use " + e.want
}

func (e *unitError) Unwrap() error { return ErrUnitNotAllowed }

// Unit is the physical unit of a value.
type Unit uint8

// Units.
const (
	UnitKWh Unit = iota + 1
	UnitM3
)

var unitList = codeList{
	kind:      "unit",
	canonical: []string{"", "KWH", "M3"},
	aliases: map[string]uint8{
		// MTQ is the UN/ECE Rec. 20 code MSCONS uses for m³.
		"M³": uint8(UnitM3), "MTQ": uint8(UnitM3), "CBM": uint8(UnitM3),
	},
}

// ParseUnit accepts the canonical spelling only.
func ParseUnit(s string) (Unit, error) { v, err := unitList.strict(s); return Unit(v), err }

// ParseUnitLenient accepts "kWh", "m³", "MTQ" and other case variants.
func ParseUnitLenient(s string) (Unit, error) { v, err := unitList.lenient(s); return Unit(v), err }

// Units lists every unit in canonical order.
func Units() []Unit { return []Unit{UnitKWh, UnitM3} }

// String returns "KWH" or "M3".
func (u Unit) String() string { return unitList.name(uint8(u)) }

// IsZero reports an unset unit.
func (u Unit) IsZero() bool { return u == 0 }

// MarshalText writes the canonical spelling.
func (u Unit) MarshalText() ([]byte, error) { return marshalCode(&unitList, uint8(u)) }

// UnmarshalText parses strictly.
func (u *Unit) UnmarshalText(b []byte) error {
	v, err := ParseUnit(string(b))
	if err == nil {
		*u = v
	}
	return err
}

// Quality is the status of a value (MSCONS QTY qualifier, mapped to words).
type Quality uint8

// Qualities.
const (
	QualityMeasured Quality = iota + 1
	QualitySubstituted
	QualityEstimated
	QualityPreliminary
	QualityFaulty
	QualityCalculated
	QualityCorrected
	QualityUnknown
)

var qualityList = codeList{
	kind:      "quality",
	canonical: []string{"", "MEASURED", "SUBSTITUTED", "ESTIMATED", "PRELIMINARY", "FAULTY", "CALCULATED", "CORRECTED", "UNKNOWN"},
	aliases: map[string]uint8{
		// MSCONS QTY qualifiers (DE 6063), so ingest can take a message's code as is.
		"220": uint8(QualityMeasured), "67": uint8(QualitySubstituted), "187": uint8(QualityEstimated),
		"Z18": uint8(QualityPreliminary), "20": uint8(QualityFaulty),
		"WAHRER_WERT": uint8(QualityMeasured), "ERSATZWERT": uint8(QualitySubstituted),
		"PROGNOSEWERT": uint8(QualityEstimated), "VORLÄUFIGER_WERT": uint8(QualityPreliminary),
	},
}

// ParseQuality accepts the canonical spelling only.
func ParseQuality(s string) (Quality, error) { v, err := qualityList.strict(s); return Quality(v), err }

// ParseQualityLenient trims, folds case and accepts the MSCONS codes (220, 67,
// 187, Z18, 20) and their German names.
func ParseQualityLenient(s string) (Quality, error) {
	v, err := qualityList.lenient(s)
	return Quality(v), err
}

// Qualities lists every quality in canonical order.
func Qualities() []Quality {
	return []Quality{QualityMeasured, QualitySubstituted, QualityEstimated, QualityPreliminary,
		QualityFaulty, QualityCalculated, QualityCorrected, QualityUnknown}
}

// String returns the canonical spelling.
func (q Quality) String() string { return qualityList.name(uint8(q)) }

// IsZero reports an unset quality.
func (q Quality) IsZero() bool { return q == 0 }

// MarshalText writes the canonical spelling.
func (q Quality) MarshalText() ([]byte, error) { return marshalCode(&qualityList, uint8(q)) }

// UnmarshalText parses strictly.
func (q *Quality) UnmarshalText(b []byte) error {
	v, err := ParseQuality(string(b))
	if err == nil {
		*q = v
	}
	return err
}

// IsBillable reports whether a value may be billed.
//
// The rule is § 55 Abs. 2 MsbG, not the often-cited § 60 Abs. 2 (which is
// about where iMSys values are processed): bill the wahrer Wert, and where
// none can be determined in time, an Ersatzwert or a vorläufiger Wert. So
// MEASURED (220), SUBSTITUTED (67) and PRELIMINARY (Z18) are billable;
// ESTIMATED (187, a Prognose), FAULTY (20) and UNKNOWN are not.
//
// CORRECTED is billable: it is a true value established after the fact
// (e.g. a Wandlerfaktor or meter-exchange correction), i.e. a wahrer Wert
// that replaces a wrong one — refusing it would bill the wrong value it
// corrects or nothing at all.
//
// CALCULATED is not billable: a value derived by arithmetic from other series
// (a virtual meter, a difference) is not a Messwert of this location, neither
// a wahrer Wert nor an Ersatzwert formed under § 55 Abs. 2 by the MSB. Bill
// the inputs it was computed from, or have the MSB issue it as an Ersatzwert.
func (q Quality) IsBillable() bool {
	switch q {
	case QualityMeasured, QualitySubstituted, QualityPreliminary, QualityCorrected:
		return true
	}
	return false
}

// IsProvisional reports whether the value is still expected to change:
// PRELIMINARY is by definition replaced by a final value, and ESTIMATED is a
// Prognose that a measured or substituted value will supersede.
func (q Quality) IsProvisional() bool {
	return q == QualityPreliminary || q == QualityEstimated
}

// MarketCode returns the MSCONS QTY qualifier (DE 6063): 220 Wahrer Wert, 67
// Ersatzwert, 187 Prognosewert, Z18 Vorläufiger Wert, 20 Nicht verwendbarer
// Wert. CALCULATED, CORRECTED and UNKNOWN have none: the market expresses
// each another way, so a message writer must resolve exactly these rows.
func (q Quality) MarketCode() (string, bool) {
	switch q {
	case QualityMeasured:
		return "220", true
	case QualitySubstituted:
		return "67", true
	case QualityEstimated:
		return "187", true
	case QualityPreliminary:
		return "Z18", true
	case QualityFaulty:
		return "20", true
	}
	return "", false
}

func marshalCode(l *codeList, v uint8) ([]byte, error) {
	if v == 0 || int(v) >= len(l.canonical) {
		return nil, &CodeError{Kind: l.kind, Value: "", Allowed: l.allowed()}
	}
	return []byte(l.canonical[v]), nil
}
