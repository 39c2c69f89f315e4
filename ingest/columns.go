package ingest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
)

// Operator is the input column naming the network operator's Marktpartner-ID
// (13 digits, BDEW or GS1 check digit): with the interval's start and the
// Sparte it makes version_scope, which a file may give instead.
const Operator = "operator"

// derived are physical columns the store computes; a file may carry them,
// and each value must equal the derived one.
var derived = []string{"balancing_day", "source_kind"}

// ownColumns are the columns each row holds for itself — its interval and
// its quantity; Options.Set, one value for every row, refuses them.
var ownColumns = []string{"from", "to", "value"}

// Column is one column of the tabular layout.
type Column struct {
	Name string
	// Required: every row needs a value, from the file or from Options.Set.
	Required bool
	// Derived: the store computes it; a value in the file must agree.
	Derived bool
	// Note says what the column holds and when it may be left out.
	Note string
}

// Columns is the tabular layout of a table: its physical columns, plus
// operator. version_scope is required unless operator is given; melo_id is
// required where the table identifies readings by MeLo; to is absent on a
// point table; declared columns are required unless nullable.
func Columns(cfg meterstore.TableConfig) []Column {
	notes := map[string]string{
		"malo_id":       "11 digits, BDEW check digit",
		"melo_id":       "33 characters (DE…); required where the table identifies readings by MeLo",
		"obis_code":     "A-B:C.D.E[*F], e.g. 1-0:1.29.0",
		"sparte":        "STROM, GAS, WAERME or WASSER",
		"from":          "the interval's start (a register reading's instant), with an offset: 2026-03-01T00:00:00+01:00",
		"to":            "the interval's end, with an offset",
		"value":         "exact decimal, at most 6 decimals and 12 integer digits; never a float",
		"unit":          "KWH or M3",
		"quality":       "MEASURED, SUBSTITUTED, ESTIMATED, PRELIMINARY, FAULTY, CALCULATED, CORRECTED or UNKNOWN",
		"resolution":    "PT15M, PT1H, P1D, …; optional",
		"source_kind":   "derived from source_detail",
		"source_detail": `the source as stored JSON, e.g. {"IMPORT":{"system":"sap"}}; optional: IMPORT with the file's name (Options.System)`,
		"provenance":    "the audit trail as stored JSON; optional",
		"version":       "decimal integer: the MSCONS label CCYYMMDDHHMMSS or the exporting system's version",
		"version_scope": "<operator>:<YYYY-MM>; derived from operator and the balancing month when left out",
		"recorded_at":   "when the value was recorded, with an offset; optional: the import's start",
		"balancing_day": "derived from from and sparte",
	}
	var out []Column
	for _, def := range cfg.Columns() {
		c := Column{Name: def.Name, Note: notes[def.Name]}
		switch {
		case def.Extra != nil:
			c.Required = !def.Nullable
			c.Note = "declared column"
		case slices.Contains(derived, def.Name):
			c.Derived = true
		case def.Name == "version_scope":
			c.Derived = true
		case def.Name == "to":
			if cfg.TimeModel() == meterstore.Point {
				continue
			}
			c.Required = true
		case def.Name == "melo_id":
			c.Required = cfg.IdentifyByMelo()
		default:
			c.Required = !def.Nullable && def.Name != "recorded_at"
		}
		out = append(out, c)
		if def.Name == "version_scope" {
			out = append(out, Column{Name: Operator, Note: "the network operator's 13-digit Marktpartner-ID; required unless version_scope is given"})
		}
	}
	return out
}

// inputColumns names every column a file or --set may fill.
func inputColumns(cfg meterstore.TableConfig) []string {
	var out []string
	for _, c := range Columns(cfg) {
		out = append(out, c.Name)
	}
	return out
}

func settable(cfg meterstore.TableConfig, col string) bool {
	return slices.Contains(inputColumns(cfg), col)
}

// fieldError is a value that breaks a rule, in the column it came from.
type fieldError struct {
	col string
	err error
}

func (e *fieldError) Error() string { return e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// ErrNaiveTimestamp: a timestamp without an offset and no Options.TimeZone.
var ErrNaiveTimestamp = fmt.Errorf("%w: timestamp without an offset", metering.ErrInvalid)

// ErrFloat: a quantity or version column stored as a binary float.
var ErrFloat = fmt.Errorf("%w: binary float column", metering.ErrInvalid)

var (
	// offsetLayouts start with DuckDB's text of a TIMESTAMPTZ (what CSV and
	// Parquet columns are read as), so an instant is parsed at the first try.
	offsetLayouts = []string{
		"2006-01-02 15:04:05Z07",
		"2006-01-02T15:04:05Z07:00", "2006-01-02 15:04:05Z07:00",
		"2006-01-02T15:04:05Z0700", "2006-01-02 15:04:05Z0700",
		"2006-01-02T15:04:05Z07",
		"2006-01-02T15:04Z07:00", "2006-01-02 15:04Z07:00",
	}
	naiveLayouts = []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04"}
)

// parseInstant reads a timestamp with an offset; without one, as wall-clock
// time in tz, refusing a wall clock tz skips or repeats; with tz nil,
// ErrNaiveTimestamp.
func parseInstant(s string, tz *time.Location) (time.Time, error) {
	for _, l := range offsetLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	for _, l := range naiveLayouts {
		w, err := time.Parse(l, s)
		if err != nil {
			continue
		}
		if tz == nil {
			return time.Time{}, fmt.Errorf("%w: %q; write the offset (%s+01:00) or name the zone it is in with --time-zone Europe/Berlin",
				ErrNaiveTimestamp, s, w.Format("2006-01-02T15:04:05"))
		}
		return inZone(w, s, tz)
	}
	return time.Time{}, fmt.Errorf("%w: %q is not a timestamp; write RFC 3339 with an offset, e.g. 2026-03-01T00:00:00+01:00", metering.ErrInvalid, s)
}

// inZone is the instant the wall clock w (parsed as UTC) shows in tz.
func inZone(w time.Time, s string, tz *time.Location) (time.Time, error) {
	t, err := metering.InZone(w, tz)
	var we *metering.WallClockError
	switch {
	case !errors.As(err, &we):
		return t, err
	case we.First.IsZero():
		return time.Time{}, fmt.Errorf("%w: %q does not exist in %s (the clocks skip it); write the offset", metering.ErrInvalid, s, tz)
	}
	return time.Time{}, fmt.Errorf("%w: %q occurs twice in %s (the clocks go back); write the offset: %s (the first) or %s (the second)",
		metering.ErrInvalid, s, tz, we.First.In(tz).Format(time.RFC3339), we.Second.In(tz).Format(time.RFC3339))
}

// parseValue reads an exact decimal: digits, an optional sign and decimal
// point; no exponent, no thousands separator, no decimal comma.
func parseValue(s string) (decimal.Decimal, error) {
	if !isPlainDecimal(s) {
		return decimal.Decimal{}, fmt.Errorf("%w: value %q is not a plain decimal; write digits with a decimal point, e.g. 1234.567", metering.ErrInvalid, s)
	}
	return decimal.NewFromString(s)
}

// faultColumn names the column a refusal of NewInterval (interval) or
// NewReading is about: an instant finer than the microseconds storage
// holds, an interval's end not after its start, else the value (the quality
// was parsed before).
func faultColumn(from, to time.Time, interval bool) string {
	subMicro := func(t time.Time) bool { return t.Nanosecond()%int(time.Microsecond) != 0 }
	switch {
	case subMicro(from):
		return "from"
	case interval && (subMicro(to) || !from.Before(to)):
		return "to"
	}
	return "value"
}

// record is one row of a tabular file, as text by column; absent is null.
type record map[string]string

func (r record) get(col string) (string, bool) {
	v, ok := r[col]
	return v, ok
}

// parsed is one row turned into the parts of a delivery.
type parsed struct {
	delivery metering.Delivery // one interval or reading; identification and version set
	extra    map[string]string
	key      string // the delivery it belongs to: everything but the interval
}

// defaultSource is the source of rows without source_detail — an IMPORT
// source naming the system — and its JSON, built once per file.
type defaultSource struct {
	source metering.Source
	json   string
	err    error
}

func newDefaultSource(system string) *defaultSource {
	src, err := metering.SourceImport(system)
	if err != nil {
		return &defaultSource{err: err}
	}
	b, _ := src.MarshalJSON()
	return &defaultSource{source: src, json: string(b)}
}

// stamping is what a row's recorded_at is filled and checked with.
type stamping struct {
	at time.Time // recorded_at of a row that carries none
	// A row's own recorded_at may lie at most skew beyond clock (the
	// store's, at the import's start); clock zero: unchecked.
	clock time.Time
	skew  time.Duration
}

// parseRecord turns a row of text into a delivery of one interval or
// reading. stamps fills and checks recorded_at; def is the source of a row
// without source_detail.
func parseRecord(cfg meterstore.TableConfig, r record, tz *time.Location, stamps stamping, def *defaultSource) (parsed, error) {
	return parseRow(cfg, r, &native{}, tz, stamps, def)
}

// parseRow is parseRecord of a row whose text is r and whose values in
// their own types are nv.
func parseRow(cfg meterstore.TableConfig, r record, nv *native, tz *time.Location, stamps stamping, def *defaultSource) (parsed, error) {
	var p parsed
	var d metering.Delivery
	fail := func(col string, err error) (parsed, error) { return parsed{}, &fieldError{col: col, err: err} }
	need := func(col string) (string, error) {
		v, ok := r.get(col)
		if !ok || v == "" {
			return "", &fieldError{col: col, err: fmt.Errorf("%w: %s is empty", metering.ErrInvalid, col)}
		}
		return v, nil
	}
	instant := func(col string, v time.Time, ok bool) (time.Time, error) {
		if ok {
			return v, nil
		}
		s, err := need(col)
		if err != nil {
			return time.Time{}, err
		}
		t, err := parseInstant(s, tz)
		if err != nil {
			return time.Time{}, &fieldError{col: col, err: err}
		}
		return t, nil
	}
	var err error
	s, err := need("malo_id")
	if err != nil {
		return parsed{}, err
	}
	if d.MaloID, err = metering.ParseMaloID(s); err != nil {
		return fail("malo_id", err)
	}
	if s, ok := r.get("melo_id"); ok && s != "" {
		if d.MeloID, err = metering.ParseMeloID(s); err != nil {
			return fail("melo_id", err)
		}
	}
	if s, err = need("obis_code"); err != nil {
		return parsed{}, err
	}
	if d.Obis, err = metering.ParseObis(s); err != nil {
		return fail("obis_code", err)
	}
	if s, err = need("sparte"); err != nil {
		return parsed{}, err
	}
	if d.Sparte, err = metering.ParseSparte(s); err != nil {
		return fail("sparte", err)
	}
	if err = d.Sparte.AllowsObis(d.Obis); err != nil {
		return fail("sparte", err)
	}
	if s, err = need("unit"); err != nil {
		return parsed{}, err
	}
	if d.Unit, err = metering.ParseUnit(s); err != nil {
		return fail("unit", err)
	}
	if s, ok := r.get("resolution"); ok && s != "" {
		if d.Resolution, err = metering.ParseResolution(s); err != nil {
			return fail("resolution", err)
		}
	}
	from, err := instant("from", nv.from, nv.hasFrom)
	if err != nil {
		return parsed{}, err
	}
	value := nv.value
	if !nv.hasValue {
		if s, err = need("value"); err != nil {
			return parsed{}, err
		}
		if value, err = parseValue(s); err != nil {
			return fail("value", err)
		}
	}
	if s, err = need("quality"); err != nil {
		return parsed{}, err
	}
	q, err := metering.ParseQuality(s)
	if err != nil {
		return fail("quality", err)
	}
	if cfg.TimeModel() == meterstore.Point {
		if s, ok := r.get("to"); ok && s != "" || nv.hasTo {
			return fail("to", fmt.Errorf("%w: table %s holds register readings, which have no end; leave to empty", metering.ErrInvalid, cfg.Name()))
		}
		rd, err := metering.NewReading(from, value, q)
		if err != nil {
			return fail(faultColumn(from, time.Time{}, false), err)
		}
		d.Readings = []metering.Reading{rd}
	} else {
		to, err := instant("to", nv.to, nv.hasTo)
		if err != nil {
			return parsed{}, err
		}
		iv, err := metering.NewInterval(from, to, value, q)
		if err != nil {
			return fail(faultColumn(from, to, true), err)
		}
		d.Intervals = []metering.Interval{iv}
	}
	version := nv.version
	if !nv.hasVersion {
		if version, err = need("version"); err != nil {
			return parsed{}, err
		}
	}
	if d.Version, err = metering.ParseVersion(version); err != nil {
		return fail("version", err)
	}
	scope, scopeGiven := r.get("version_scope")
	op, opGiven := r.get(Operator)
	switch {
	case opGiven && op != "":
		bc, err := metering.ParseBdewCode(op)
		if err != nil {
			return fail(Operator, err)
		}
		d.Scope = metering.ScopeFor(bc, from, d.Sparte)
		if scopeGiven && scope != "" && scope != d.Scope.String() {
			return fail("version_scope", fmt.Errorf("%w: version_scope %s, but operator %s and the %s balancing month of %s make %s",
				metering.ErrScopeMismatch, scope, op, d.Sparte, from.Format(time.RFC3339), d.Scope))
		}
	case scopeGiven && scope != "":
		if d.Scope, err = metering.ParseVersionScope(scope); err != nil {
			return fail("version_scope", err)
		}
	default:
		return fail(Operator, fmt.Errorf("%w: neither operator nor version_scope is given; add an operator column or --set operator=<13-digit Marktpartner-ID>", metering.ErrInvalid))
	}
	d.RecordedAt = stamps.at
	if s, ok := r.get("recorded_at"); ok && s != "" || nv.hasRecordedAt {
		if d.RecordedAt, err = instant("recorded_at", nv.recordedAt, nv.hasRecordedAt); err != nil {
			return parsed{}, err
		}
		if !stamps.clock.IsZero() && d.RecordedAt.After(stamps.clock.Add(stamps.skew)) {
			return fail("recorded_at", fmt.Errorf("%w: recorded_at %s is %s ahead of the store's clock (%s at the import's start), more than the allowed skew of %s; recorded_at is when the store learned the value — leave the column out for the store to stamp it, or fix the exporting host's clock",
				store.ErrRecordedAtFuture, d.RecordedAt.Format(time.RFC3339Nano), d.RecordedAt.Sub(stamps.clock), stamps.clock.UTC().Format(time.RFC3339Nano), stamps.skew))
		}
	}
	detail := def.json
	if s, ok := r.get("source_detail"); ok && s != "" {
		if err := d.Source.UnmarshalJSON([]byte(s)); err != nil {
			return fail("source_detail", err)
		}
		b, _ := d.Source.MarshalJSON()
		detail = string(b)
	} else if def.err != nil {
		return fail("source_detail", def.err)
	} else {
		d.Source = def.source
	}
	if s, ok := r.get("source_kind"); ok && s != "" && s != d.Source.Kind() {
		return fail("source_kind", fmt.Errorf("%w: source_kind %s, but the source is %s; leave source_kind out, it is derived from source_detail",
			metering.ErrInvalid, s, d.Source.Kind()))
	}
	if s, ok := r.get("provenance"); ok && s != "" {
		if err := d.Provenance.UnmarshalJSON([]byte(s)); err != nil {
			return fail("provenance", err)
		}
	}
	if s, ok := r.get("balancing_day"); ok && s != "" {
		if want := metering.BalancingDay(from, d.Sparte).String(); s != want {
			return fail("balancing_day", fmt.Errorf("%w: balancing_day %s, but a %s interval from %s belongs to %s; leave balancing_day out, it is derived",
				metering.ErrInvalid, s, d.Sparte, from.Format(time.RFC3339), want))
		}
	}
	p.extra = map[string]string{}
	var key strings.Builder
	for _, c := range cfg.ExtraColumns() {
		if v, ok := r.get(c.Name); ok && v != "" {
			p.extra[c.Name] = v
		}
		key.WriteString(strconv.Quote(p.extra[c.Name]))
		key.WriteByte('|')
	}
	prov := ""
	if d.Provenance != nil {
		b, _ := d.Provenance.MarshalJSON()
		prov = string(b)
	}
	for _, part := range []string{d.MaloID.String(), d.MeloID.String(), d.Obis.String(), d.Sparte.String(), d.Unit.String(),
		d.Resolution.String(), d.Scope.String(), d.Version.String(), detail, prov} {
		key.WriteString(part)
		key.WriteByte('|')
	}
	key.WriteString(d.RecordedAt.Format(time.RFC3339Nano))
	p.key = key.String()
	p.delivery = d
	return p, nil
}
