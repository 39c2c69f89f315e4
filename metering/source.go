package metering

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Source is where a delivery came from: a tagged variant. Its JSON is a
// stored format (the source_detail column), externally tagged with a frozen
// SCREAMING_SNAKE_CASE tag:
//
//	{"MSCONS":{"sender":"9910125000002","message_ref":"M1"}}
//
// Renaming a tag or a field is a stored-data break; the golden files under
// testdata/stored-form/ fail the build before a reader does.
type Source struct {
	p sourcePayload
}

type sourcePayload interface {
	tag() string
	validate() error
}

// Source tags, frozen.
const (
	SourceKindMSCONS         = "MSCONS"
	SourceKindSMGW           = "SMGW"
	SourceKindManual         = "MANUAL"
	SourceKindAutoSubstitute = "AUTO_SUBSTITUTE"
	SourceKindVirtualMeter   = "VIRTUAL_METER"
	SourceKindImport         = "IMPORT"
)

type msconsPayload struct {
	Sender     BdewCode `json:"sender"`
	MessageRef string   `json:"message_ref"`
}

func (msconsPayload) tag() string { return SourceKindMSCONS }
func (p msconsPayload) validate() error {
	if p.Sender.IsZero() {
		return fmt.Errorf("%w: MSCONS source needs the sender's Marktpartner-ID", ErrInvalid)
	}
	return nonEmpty("MSCONS message_ref", p.MessageRef)
}

type smgwPayload struct {
	GatewayID string `json:"gateway_id"`
}

func (smgwPayload) tag() string       { return SourceKindSMGW }
func (p smgwPayload) validate() error { return nonEmpty("SMGW gateway_id", p.GatewayID) }

type manualPayload struct {
	Author string `json:"author"`
}

func (manualPayload) tag() string       { return SourceKindManual }
func (p manualPayload) validate() error { return nonEmpty("MANUAL author", p.Author) }

type autoSubstitutePayload struct {
	Method SubstitutionMethod `json:"method"`
	Reason string             `json:"reason"`
}

func (autoSubstitutePayload) tag() string { return SourceKindAutoSubstitute }
func (p autoSubstitutePayload) validate() error {
	if p.Method.IsZero() {
		return fmt.Errorf("%w: AUTO_SUBSTITUTE source needs a method", ErrInvalid)
	}
	return nonEmpty("AUTO_SUBSTITUTE reason", p.Reason)
}

type virtualMeterPayload struct {
	Kind VirtualMeterKind `json:"kind"`
}

func (virtualMeterPayload) tag() string { return SourceKindVirtualMeter }
func (p virtualMeterPayload) validate() error {
	if p.Kind.IsZero() {
		return fmt.Errorf("%w: VIRTUAL_METER source needs a kind", ErrInvalid)
	}
	return nil
}

type importPayload struct {
	System string `json:"system"`
}

func (importPayload) tag() string       { return SourceKindImport }
func (p importPayload) validate() error { return nonEmpty("IMPORT system", p.System) }

func nonEmpty(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("%w: %s is empty; name it", ErrInvalid, field)
	}
	return nil
}

func newSource(p sourcePayload) (Source, error) {
	if err := p.validate(); err != nil {
		return Source{}, err
	}
	return Source{p: p}, nil
}

// SourceMscons is an MSCONS message from sender, referenced by its message
// reference (UNH/BGM).
func SourceMscons(sender BdewCode, messageRef string) (Source, error) {
	return newSource(msconsPayload{Sender: sender, MessageRef: messageRef})
}

// SourceSMGW is a push from a Smart-Meter-Gateway.
func SourceSMGW(gatewayID string) (Source, error) {
	return newSource(smgwPayload{GatewayID: gatewayID})
}

// SourceManual is a value entered by a person.
func SourceManual(author string) (Source, error) { return newSource(manualPayload{Author: author}) }

// SourceAutoSubstitute is an Ersatzwert this system formed by method, for reason.
func SourceAutoSubstitute(method SubstitutionMethod, reason string) (Source, error) {
	return newSource(autoSubstitutePayload{Method: method, Reason: reason})
}

// SourceVirtualMeter is a value computed from other series.
func SourceVirtualMeter(kind VirtualMeterKind) (Source, error) {
	return newSource(virtualMeterPayload{Kind: kind})
}

// SourceImport is a bulk import from another system.
func SourceImport(system string) (Source, error) { return newSource(importPayload{System: system}) }

// IsZero reports an unset source.
func (s Source) IsZero() bool { return s.p == nil }

// Kind returns the tag, read off the serialised form so the source_kind
// column and the payload cannot disagree; "" for the zero value.
func (s Source) Kind() string {
	b, err := s.MarshalJSON()
	if err != nil || len(b) < 4 || b[1] != '"' {
		return ""
	}
	end := bytes.IndexByte(b[2:], '"')
	if end < 0 {
		return ""
	}
	return string(b[2 : 2+end])
}

// Mscons returns the MSCONS payload.
func (s Source) Mscons() (sender BdewCode, messageRef string, ok bool) {
	p, ok := s.p.(msconsPayload)
	return p.Sender, p.MessageRef, ok
}

// SMGW returns the gateway ID of an SMGW source.
func (s Source) SMGW() (gatewayID string, ok bool) {
	p, ok := s.p.(smgwPayload)
	return p.GatewayID, ok
}

// Manual returns the author of a MANUAL source.
func (s Source) Manual() (author string, ok bool) {
	p, ok := s.p.(manualPayload)
	return p.Author, ok
}

// AutoSubstitute returns the method and reason of an AUTO_SUBSTITUTE source.
func (s Source) AutoSubstitute() (method SubstitutionMethod, reason string, ok bool) {
	p, ok := s.p.(autoSubstitutePayload)
	return p.Method, p.Reason, ok
}

// VirtualMeter returns the kind of a VIRTUAL_METER source.
func (s Source) VirtualMeter() (kind VirtualMeterKind, ok bool) {
	p, ok := s.p.(virtualMeterPayload)
	return p.Kind, ok
}

// Import returns the system of an IMPORT source.
func (s Source) Import() (system string, ok bool) {
	p, ok := s.p.(importPayload)
	return p.System, ok
}

// marshalCompact encodes like json.Marshal, HTML escaping included ("<" is
// written as \u003c): json.Marshal applies that escaping to a Marshaler's
// output anyway, so writing it here keeps MarshalJSON and json.Marshal
// byte-identical — the stored form must not depend on the call path.
func marshalCompact(v any) ([]byte, error) { return json.Marshal(v) }

// MarshalJSON writes {"<TAG>":{…}}.
func (s Source) MarshalJSON() ([]byte, error) {
	if s.p == nil {
		return nil, fmt.Errorf("%w: source is unset; build one with SourceMscons and friends", ErrInvalid)
	}
	tag, err := marshalCompact(s.p.tag())
	if err != nil {
		return nil, err
	}
	body, err := marshalCompact(s.p)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(tag)+len(body)+3)
	out = append(out, '{')
	out = append(out, tag...)
	out = append(out, ':')
	out = append(out, body...)
	return append(out, '}'), nil
}

// UnmarshalJSON is strict: exactly one known tag, no unknown or missing
// fields, every field valid. A payload that does not decode is an error, not
// a guess.
func (s *Source) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("%w: source JSON must be an object with one tag, e.g. {\"MSCONS\":{…}}", ErrInvalid)
	}
	t, err := dec.Token()
	tag, ok := t.(string)
	if err != nil || !ok {
		return fmt.Errorf("%w: source JSON must hold exactly one tag", ErrInvalid)
	}
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("%w: source %s payload: %v", ErrInvalid, tag, err)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return fmt.Errorf("%w: source JSON must hold exactly one tag", ErrInvalid)
	}
	var p sourcePayload
	switch tag {
	case SourceKindMSCONS:
		var v msconsPayload
		err = decodeStrict(raw, &v, "sender", "message_ref")
		p = v
	case SourceKindSMGW:
		var v smgwPayload
		err = decodeStrict(raw, &v, "gateway_id")
		p = v
	case SourceKindManual:
		var v manualPayload
		err = decodeStrict(raw, &v, "author")
		p = v
	case SourceKindAutoSubstitute:
		var v autoSubstitutePayload
		err = decodeStrict(raw, &v, "method", "reason")
		p = v
	case SourceKindVirtualMeter:
		var v virtualMeterPayload
		err = decodeStrict(raw, &v, "kind")
		p = v
	case SourceKindImport:
		var v importPayload
		err = decodeStrict(raw, &v, "system")
		p = v
	default:
		return &CodeError{Kind: "source kind", Value: tag, Allowed: []string{
			SourceKindMSCONS, SourceKindSMGW, SourceKindManual, SourceKindAutoSubstitute, SourceKindVirtualMeter, SourceKindImport}}
	}
	if err != nil {
		return fmt.Errorf("source %s: %w", tag, err)
	}
	if err := p.validate(); err != nil {
		return err
	}
	s.p = p
	return nil
}

// decodeStrict decodes a JSON object into v, refusing unknown fields, a
// missing required field and trailing data.
func decodeStrict(raw []byte, v any, required ...string) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil || keys == nil {
		return fmt.Errorf("%w: payload must be a JSON object", ErrInvalid)
	}
	for _, k := range required {
		if _, ok := keys[k]; !ok {
			return fmt.Errorf("%w: field %q is missing", ErrInvalid, k)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, ErrInvalid) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}

// SubstitutionMethod is how an automatic Ersatzwert was formed. The values
// follow the MSCONS STS+Z32 procedures (Z92 Interpolation, Z93 Haltewert,
// Z95 historische Messwerte, ZJ2 statistische Methode; secondary,
// domain-rules.md §6) but are stored as words, not as the market codes.
type SubstitutionMethod uint8

// Substitution methods.
const (
	SubstitutionInterpolation SubstitutionMethod = iota + 1
	SubstitutionHoldValue
	SubstitutionHistorical
	SubstitutionStatistical
)

var substitutionList = codeList{
	kind:      "substitution method",
	canonical: []string{"", "INTERPOLATION", "HOLD_VALUE", "HISTORICAL_VALUES", "STATISTICAL"},
	aliases: map[string]uint8{
		"Z92": uint8(SubstitutionInterpolation), "Z93": uint8(SubstitutionHoldValue),
		"Z95": uint8(SubstitutionHistorical), "ZJ2": uint8(SubstitutionStatistical),
	},
}

// ParseSubstitutionMethod accepts the canonical spelling only.
func ParseSubstitutionMethod(s string) (SubstitutionMethod, error) {
	v, err := substitutionList.strict(s)
	return SubstitutionMethod(v), err
}

// String returns the canonical spelling.
func (m SubstitutionMethod) String() string { return substitutionList.name(uint8(m)) }

// IsZero reports an unset method.
func (m SubstitutionMethod) IsZero() bool { return m == 0 }

// MarketCode returns the MSCONS STS+Z32 code.
func (m SubstitutionMethod) MarketCode() (string, bool) {
	for code, v := range substitutionList.aliases {
		if v == uint8(m) && m != 0 {
			return code, true
		}
	}
	return "", false
}

// MarshalText writes the canonical spelling.
func (m SubstitutionMethod) MarshalText() ([]byte, error) {
	return marshalCode(&substitutionList, uint8(m))
}

// UnmarshalText parses strictly.
func (m *SubstitutionMethod) UnmarshalText(b []byte) error {
	v, err := ParseSubstitutionMethod(string(b))
	if err == nil {
		*m = v
	}
	return err
}

// VirtualMeterKind is what a virtual meter computes. This list is project
// vocabulary, not a market code list.
type VirtualMeterKind uint8

// Virtual meter kinds.
const (
	VirtualMeterPVSelfConsumption VirtualMeterKind = iota + 1 // PV generation minus feed-in
	VirtualMeterSum                                           // sum of several series
	VirtualMeterDifference                                    // one series minus others
)

var virtualMeterList = codeList{
	kind:      "virtual meter kind",
	canonical: []string{"", "PV_SELF_CONSUMPTION", "SUM", "DIFFERENCE"},
}

// ParseVirtualMeterKind accepts the canonical spelling only.
func ParseVirtualMeterKind(s string) (VirtualMeterKind, error) {
	v, err := virtualMeterList.strict(s)
	return VirtualMeterKind(v), err
}

// String returns the canonical spelling.
func (k VirtualMeterKind) String() string { return virtualMeterList.name(uint8(k)) }

// IsZero reports an unset kind.
func (k VirtualMeterKind) IsZero() bool { return k == 0 }

// MarshalText writes the canonical spelling.
func (k VirtualMeterKind) MarshalText() ([]byte, error) {
	return marshalCode(&virtualMeterList, uint8(k))
}

// UnmarshalText parses strictly.
func (k *VirtualMeterKind) UnmarshalText(b []byte) error {
	v, err := ParseVirtualMeterKind(string(b))
	if err == nil {
		*k = v
	}
	return err
}

// ProvenanceEvent is one entry of a delivery's audit trail.
type ProvenanceEvent struct {
	OccurredAt time.Time
	EventType  string  // e.g. "INGESTED"
	Actor      string  // who or what acted, e.g. "MSCONS"
	Note       *string // nil = no note (JSON null)
}

// Provenance is the audit trail, stored as a JSON array:
//
//	[{"occurred_at":"2026-03-01T00:00:00Z","event_type":"INGESTED","actor":"MSCONS","note":null}]
type Provenance []ProvenanceEvent

type provenanceWire struct {
	OccurredAt string  `json:"occurred_at"`
	EventType  string  `json:"event_type"`
	Actor      string  `json:"actor"`
	Note       *string `json:"note"`
}

// formatInstant writes RFC 3339 in UTC with a "Z" and only as many fraction
// digits as needed. It is formatted here, not by time.Time's MarshalJSON, so
// the stored shape cannot change with the standard library.
func formatInstant(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.999999999Z")
}

func (e ProvenanceEvent) validate() error {
	if e.OccurredAt.IsZero() {
		return fmt.Errorf("%w: provenance event %q has no occurred_at", ErrInvalid, e.EventType)
	}
	if y := e.OccurredAt.UTC().Year(); y < 1 || y > 9999 {
		return fmt.Errorf("%w: provenance occurred_at year %d is outside RFC 3339", ErrInvalid, y)
	}
	if err := nonEmpty("provenance event_type", e.EventType); err != nil {
		return err
	}
	return nonEmpty("provenance actor", e.Actor)
}

// MarshalJSON writes the stored form; nil writes [].
func (p Provenance) MarshalJSON() ([]byte, error) {
	w := make([]provenanceWire, len(p))
	for i, e := range p {
		if err := e.validate(); err != nil {
			return nil, err
		}
		w[i] = provenanceWire{OccurredAt: formatInstant(e.OccurredAt), EventType: e.EventType, Actor: e.Actor, Note: e.Note}
	}
	return marshalCompact(w)
}

// UnmarshalJSON reads the stored form strictly: an array (not null), no
// unknown fields, RFC 3339 timestamps (held in UTC). A missing note is null.
func (p *Provenance) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return fmt.Errorf("%w: provenance must be a JSON array, not null; write []", ErrInvalid)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return fmt.Errorf("%w: provenance must be a JSON array: %v", ErrInvalid, err)
	}
	out := make(Provenance, 0, len(raws))
	for i, r := range raws {
		var w provenanceWire
		if err := decodeStrict(r, &w, "occurred_at", "event_type", "actor"); err != nil {
			return fmt.Errorf("provenance[%d]: %w", i, err)
		}
		t, err := time.Parse(time.RFC3339Nano, w.OccurredAt)
		if err != nil {
			return fmt.Errorf("%w: provenance[%d] occurred_at %q is not RFC 3339", ErrInvalid, i, w.OccurredAt)
		}
		e := ProvenanceEvent{OccurredAt: t.UTC(), EventType: w.EventType, Actor: w.Actor, Note: w.Note}
		if err := e.validate(); err != nil {
			return fmt.Errorf("provenance[%d]: %w", i, err)
		}
		out = append(out, e)
	}
	*p = out
	return nil
}
