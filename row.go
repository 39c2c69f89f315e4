package meterstore

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore/metering"
)

// Row is one stored row in its physical, canonical form: exactly what both tiers
// hold. It is produced by Encode (the one writer of balancing_day) and compared
// field by field on redelivery.
type Row struct {
	MaloID       string
	MeloID       *string
	ObisCode     string
	Sparte       string
	From         time.Time  // UTC, µs
	To           *time.Time // nil on a point table
	Value        decimal.Decimal
	Unit         string
	Quality      string
	Resolution   *string
	SourceKind   string
	SourceDetail *string
	Provenance   *string
	Version      uint64
	VersionScope string
	RecordedAt   time.Time // UTC, µs
	BalancingDay time.Time // midnight UTC of the civil date
	// Extra holds the declared columns in TableConfig.ExtraColumns order.
	Extra []*string
}

// StoredSeries is a delivery plus the values of the table's declared columns.
type StoredSeries struct {
	metering.Delivery
	// Extra maps a declared column to its value; a missing key is null.
	Extra map[string]string
}

// Encode validates a delivery against the table and returns its rows. It is the
// only place balancing_day is set (from metering's calendar, never from the
// caller), the version scope is checked to cover every interval for the Sparte,
// and declared columns are stored in canonical spelling.
func (c TableConfig) Encode(s StoredSeries) ([]Row, error) {
	d := s.Delivery
	if err := d.Validate(); err != nil {
		return nil, err
	}
	switch {
	case c.spec.TimeModel == Interval && len(d.Readings) > 0:
		return nil, fmt.Errorf("table %s holds intervals (a Lastgang): register readings go to a point table with AppendReadings", c.Name())
	case c.spec.TimeModel == Point && len(d.Intervals) > 0:
		return nil, fmt.Errorf("table %s holds register readings (a Zählerstandsgang): intervals go to an interval table with Append", c.Name())
	}
	var melo *string
	if !d.MeloID.IsZero() {
		m := d.MeloID.String()
		melo = &m
	} else if c.identifyByMelo {
		return nil, fmt.Errorf("malo %s: table %s identifies a reading by its Messlokation (identify_by_melo), so every delivery must name a melo_id",
			d.MaloID, c.Name())
	}
	for name := range s.Extra {
		if _, ok := c.Column(name); !ok {
			return nil, fmt.Errorf("%w: column %q is not declared on table %s; declare it in extra_columns", metering.ErrInvalid, name, c.Name())
		}
	}
	extra := make([]*string, len(c.spec.Columns))
	for i, col := range c.spec.Columns {
		var v *string
		if x, ok := s.Extra[col.Name]; ok {
			v = &x
		}
		cv, err := col.Canonical(v)
		if err != nil {
			return nil, err
		}
		extra[i] = cv
	}
	var resolution *string
	if !d.Resolution.IsZero() {
		r := d.Resolution.String()
		resolution = &r
	}
	detail, err := d.Source.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode source: %w", err)
	}
	detailS := string(detail)
	var prov *string
	if d.Provenance != nil {
		p, err := d.Provenance.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encode provenance: %w", err)
		}
		ps := string(p)
		prov = &ps
	}
	sp := d.Sparte
	base := Row{
		MaloID: d.MaloID.String(), MeloID: melo, ObisCode: d.Obis.String(), Sparte: sp.String(),
		Unit: d.Unit.String(), Resolution: resolution, SourceKind: d.Source.Kind(),
		SourceDetail: &detailS, Provenance: prov, Version: d.Version.Uint64(),
		VersionScope: d.Scope.String(), RecordedAt: d.RecordedAt.UTC().Truncate(time.Microsecond), Extra: extra,
	}
	rows := make([]Row, 0, len(d.Intervals)+len(d.Readings))
	for _, iv := range d.Intervals {
		r := base
		r.From = iv.From.UTC().Truncate(time.Microsecond)
		to := iv.To.UTC().Truncate(time.Microsecond)
		r.To = &to
		r.Value = iv.Value
		r.Quality = iv.Quality.String()
		r.BalancingDay = metering.BalancingDay(r.From, sp).Time()
		rows = append(rows, r)
	}
	for _, rd := range d.Readings {
		r := base
		r.From = rd.At.UTC().Truncate(time.Microsecond)
		r.Value = rd.Value
		r.Quality = rd.Quality.String()
		r.BalancingDay = metering.BalancingDay(r.From, sp).Time()
		rows = append(rows, r)
	}
	return rows, nil
}

// SameAssertion reports whether two rows at one (merge key, version) say the same
// thing: value, quality, unit, melo and scope. Redelivery of the same assertion is
// a no-op; a different one under an existing version is refused.
func SameAssertion(a, b Row) bool {
	return a.Value.Equal(b.Value) && a.Quality == b.Quality && a.Unit == b.Unit &&
		ptrEq(a.MeloID, b.MeloID) && a.VersionScope == b.VersionScope && timePtrEq(a.To, b.To)
}

func ptrEq(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func timePtrEq(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// Operator is the network operator half of the version scope.
func (r Row) Operator() string {
	if len(r.VersionScope) >= 13 {
		return r.VersionScope[:13]
	}
	return r.VersionScope
}
