package meterstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/meterstore/meterstore/metering"
)

// Field returns a pointer to the field of r that holds column i of the physical
// layout (TableConfig.Columns), for a tier to read or write it in its own
// format. Its Go type follows the column's type, and is a pointer to a pointer
// where the Row can hold NULL:
//
//	TypeText         *string, or **string (melo_id, resolution, source_detail, provenance, declared columns)
//	TypeTimestamp    *time.Time, or **time.Time ("to")
//	TypeDate         *time.Time
//	TypeDecimal18_6  *decimal.Decimal
//	TypeDecimal20_0  *uint64
//
// A declared column's pointer is into r.Extra, which must be long enough: nil
// otherwise.
func (r *Row) Field(i int) any {
	switch i {
	case ColMaloID:
		return &r.MaloID
	case ColMeloID:
		return &r.MeloID
	case ColObisCode:
		return &r.ObisCode
	case ColSparte:
		return &r.Sparte
	case ColFrom:
		return &r.From
	case ColTo:
		return &r.To
	case ColValue:
		return &r.Value
	case ColUnit:
		return &r.Unit
	case ColQuality:
		return &r.Quality
	case ColResolution:
		return &r.Resolution
	case ColSourceKind:
		return &r.SourceKind
	case ColSourceDetail:
		return &r.SourceDetail
	case ColProvenance:
		return &r.Provenance
	case ColVersion:
		return &r.Version
	case ColVersionScope:
		return &r.VersionScope
	case ColRecordedAt:
		return &r.RecordedAt
	case ColBalancingDay:
		return &r.BalancingDay
	}
	if k := i - CoreColumnCount; k >= 0 && k < len(r.Extra) {
		return &r.Extra[k]
	}
	return nil
}

// Text is text column i of r; ok is false for NULL (and for a column that is
// not text).
func (r *Row) Text(i int) (s string, ok bool) {
	switch p := r.Field(i).(type) {
	case *string:
		return *p, true
	case **string:
		if *p != nil {
			return **p, true
		}
	}
	return "", false
}

// ErrInvalidRow is wrapped by every row a write path refuses before it stores
// anything (RowError).
var ErrInvalidRow = errors.New("invalid row")

// RowError is a row that breaks a storage rule, naming the row and the rule.
type RowError struct {
	Table    string
	MaloID   string
	ObisCode string
	From     time.Time
	Err      error
}

func (e *RowError) Error() string {
	return fmt.Sprintf("table %s: row malo %s obis %s from %s: %v", e.Table, e.MaloID, e.ObisCode,
		e.From.UTC().Format(time.RFC3339), e.Err)
}

func (e *RowError) Unwrap() []error { return []error{ErrInvalidRow, e.Err} }

// RowValidator checks rows for one table on their way into either tier, and
// normalises them in place: UTC µs instants, canonical declared columns, and
// balancing_day from the calendar — never from the caller. Both write paths
// run every row through it; Encode's rows pass unchanged.
//
// It remembers the last accepted value of each field it checks without regard
// to the instant. A batch repeats them row after row (one delivery is one MaLo,
// channel, unit and scope), so parsing each only when it changes takes most of
// the cost out of a batch; every row is still checked against exactly the same
// rules. It also holds the slab the normalised "to"s are taken from: one
// allocation per 1 024 rows, not per row. It is not safe for concurrent use.
type RowValidator struct {
	cfg                                                        TableConfig
	malo, obis, sparte, unit, quality, resolution, melo, scope string
	sp                                                         metering.Sparte
	vs                                                         metering.VersionScope
	ok                                                         uint16 // bit per field: the remembered value is valid
	times                                                      []time.Time
}

const (
	okMalo uint16 = 1 << iota
	okObis
	okSparteUnit
	okQuality
	okResolution
	okMelo
	okScope
)

// NewRowValidator returns a validator for rows of c.
func (c TableConfig) NewRowValidator() *RowValidator { return &RowValidator{cfg: c} }

// ValidateRow checks r with metering — identifiers, canonical codes,
// sparte↔unit, the version scope covering "from" for the Sparte, "to" per time
// model, declared columns — and normalises it in place. The error is a
// *RowError.
func (v *RowValidator) ValidateRow(r *Row) error {
	if err := v.validate(r); err != nil {
		return &RowError{Table: v.cfg.Name(), MaloID: r.MaloID, ObisCode: r.ObisCode, From: r.From, Err: err}
	}
	return nil
}

func (v *RowValidator) validate(r *Row) error {
	if err := v.identity(r); err != nil {
		return err
	}
	if r.From.IsZero() {
		return errors.New("from is unset")
	}
	r.From = r.From.UTC().Truncate(time.Microsecond)
	if v.ok&okScope == 0 || r.VersionScope != v.scope {
		v.ok &^= okScope
		scope, err := metering.ParseVersionScope(r.VersionScope)
		if err != nil {
			return err
		}
		v.scope, v.vs, v.ok = r.VersionScope, scope, v.ok|okScope
	}
	if !v.vs.Covers(r.From, v.sp) {
		return fmt.Errorf("%w: version_scope %s does not cover %s (its %s Bilanzierungsmonat is %s)", metering.ErrScopeMismatch,
			r.VersionScope, r.From.Format(time.RFC3339), v.sp, metering.BalancingMonth(r.From, v.sp).String()[:7])
	}
	if r.Version == 0 {
		return errors.New("version is unset; use the MSCONS label or metering.VersionArrival")
	}
	if err := v.to(r); err != nil {
		return err
	}
	if r.RecordedAt.IsZero() {
		return errors.New("recorded_at is unset")
	}
	r.RecordedAt = r.RecordedAt.UTC().Truncate(time.Microsecond)
	if r.SourceKind == "" {
		return errors.New("source_kind is unset")
	}
	r.BalancingDay = metering.BalancingDay(r.From, v.sp).Time()
	return v.declared(r)
}

// identity checks the fields that name the reading and its channel.
func (v *RowValidator) identity(r *Row) error {
	if v.ok&okMalo == 0 || r.MaloID != v.malo {
		v.ok &^= okMalo
		if id, err := metering.ParseMaloID(r.MaloID); err != nil {
			return err
		} else if id.String() != r.MaloID {
			return fmt.Errorf("malo_id %q is not canonical; store %q", r.MaloID, id.String())
		}
		v.malo, v.ok = r.MaloID, v.ok|okMalo
	}
	if v.ok&okObis == 0 || r.ObisCode != v.obis {
		v.ok &^= okObis
		if o, err := metering.ParseObis(r.ObisCode); err != nil {
			return err
		} else if o.String() != r.ObisCode {
			return fmt.Errorf("obis_code %q is not canonical; store %q", r.ObisCode, o.String())
		}
		v.obis, v.ok = r.ObisCode, v.ok|okObis
	}
	if v.ok&okSparteUnit == 0 || r.Sparte != v.sparte || r.Unit != v.unit {
		v.ok &^= okSparteUnit
		sp, err := metering.ParseSparte(r.Sparte)
		if err != nil {
			return err
		}
		u, err := metering.ParseUnit(r.Unit)
		if err != nil {
			return err
		}
		if err := sp.AllowsUnit(u); err != nil {
			return err
		}
		v.sparte, v.unit, v.sp, v.ok = r.Sparte, r.Unit, sp, v.ok|okSparteUnit
	}
	if v.ok&okQuality == 0 || r.Quality != v.quality {
		v.ok &^= okQuality
		if _, err := metering.ParseQuality(r.Quality); err != nil {
			return err
		}
		v.quality, v.ok = r.Quality, v.ok|okQuality
	}
	if r.Resolution != nil && (v.ok&okResolution == 0 || *r.Resolution != v.resolution) {
		v.ok &^= okResolution
		if _, err := metering.ParseResolution(*r.Resolution); err != nil {
			return err
		}
		v.resolution, v.ok = *r.Resolution, v.ok|okResolution
	}
	if r.MeloID == nil {
		if v.cfg.IdentifyByMelo() {
			return errors.New("table identifies a reading by its Messlokation (identify_by_melo), so every row needs a melo_id")
		}
		return nil
	}
	if v.ok&okMelo == 0 || *r.MeloID != v.melo {
		v.ok &^= okMelo
		id, err := metering.ParseMeloID(*r.MeloID)
		if err != nil {
			return err
		}
		if id.String() != *r.MeloID {
			return fmt.Errorf("melo_id %q is not canonical; store %q", *r.MeloID, id.String())
		}
		v.melo, v.ok = *r.MeloID, v.ok|okMelo
	}
	return nil
}

// to checks "to" against the time model and normalises it.
func (v *RowValidator) to(r *Row) error {
	switch v.cfg.TimeModel() {
	case Interval:
		if r.To == nil {
			return errors.New("an interval table needs \"to\" on every row (register readings go to a point table)")
		}
		to := r.To.UTC().Truncate(time.Microsecond)
		if !to.After(r.From) {
			return fmt.Errorf("\"to\" %s is not after \"from\"", to.Format(time.RFC3339))
		}
		if len(v.times) == 0 {
			v.times = make([]time.Time, 1024)
		}
		v.times[0] = to
		r.To, v.times = &v.times[0], v.times[1:]
	case Point:
		if r.To != nil {
			return errors.New("a point table holds register readings at an instant: \"to\" must be null (intervals go to an interval table)")
		}
	}
	return nil
}

// declared canonicalises the declared columns; a row of a table whose declared
// columns are all nullable may leave them out.
func (v *RowValidator) declared(r *Row) error {
	cols := v.cfg.spec.Columns
	if len(r.Extra) != len(cols) && !(r.Extra == nil && allNullable(cols)) {
		return fmt.Errorf("%d extra values for %d declared columns", len(r.Extra), len(cols))
	}
	extra := make([]*string, len(cols))
	for i, col := range cols {
		var x *string
		if i < len(r.Extra) {
			x = r.Extra[i]
		}
		cv, err := col.Canonical(x)
		if err != nil {
			return err
		}
		extra[i] = cv
	}
	r.Extra = extra
	return nil
}

func allNullable(cols []Column) bool {
	for _, c := range cols {
		if !c.Nullable {
			return false
		}
	}
	return true
}

// Time is timestamp or date column i of r; ok is false for NULL (and for a
// column that is neither).
func (r *Row) Time(i int) (t time.Time, ok bool) {
	switch p := r.Field(i).(type) {
	case *time.Time:
		return *p, true
	case **time.Time:
		if *p != nil {
			return **p, true
		}
	}
	return time.Time{}, false
}
