package store

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
)

// RegisterSeries is one register of one meter as a domain value: resolved,
// tier-split and ordered by instant, with the source of the newest
// contributing delivery.
type RegisterSeries struct {
	MaloID   metering.MaloID
	MeloID   metering.MeloID
	Obis     metering.ObisCode
	Sparte   metering.Sparte
	Unit     metering.Unit
	Source   metering.Source
	Extra    map[string]string // declared columns of the newest contributing delivery
	Readings []metering.Reading
}

// ReadingsQuery is a typed read of one MaLo's registers on a point table
// (Zählerstandsgänge); see SeriesQuery for the shared rules. A point table
// identifies a reading by its Messlokation, so a MaLo with two meters carries
// two registers at every instant and an unnarrowed Collect is refused rather
// than interleaving two cumulative sequences.
type ReadingsQuery struct{ q query }

// Readings starts a typed read of malo's registers through the store's
// current view; View.ReadingsIn reads the table through a derived view.
func (t *Table) Readings(malo string) *ReadingsQuery { return t.st.readings(t, malo) }

// Melo narrows to one meter (parsed: 33 characters, uppercase).
func (r *ReadingsQuery) Melo(melo string) *ReadingsQuery { r.q.setMelo(melo); return r }

// Obis narrows to one register (canonicalised).
func (r *ReadingsQuery) Obis(code string) *ReadingsQuery { r.q.setObis(code); return r }

// ColumnEq narrows by a merge-key column (see SeriesQuery.ColumnEq).
func (r *ReadingsQuery) ColumnEq(column, value string) *ReadingsQuery {
	r.q.setColumnEq(column, value)
	return r
}

// Range narrows to readings at instants in [from, to); a zero bound is open.
func (r *ReadingsQuery) Range(from, to time.Time) *ReadingsQuery { r.q.setRange(from, to); return r }

// QualityIn keeps readings whose current value has one of qs.
func (r *ReadingsQuery) QualityIn(qs ...metering.Quality) *ReadingsQuery {
	r.q.setQuality(qs)
	return r
}

func buildRegister(rows []decoded) (*RegisterSeries, error) {
	n := newest(rows)
	rs := &RegisterSeries{MaloID: n.malo, MeloID: rows[0].melo, Obis: n.obis, Sparte: n.sparte, Unit: n.unit,
		Source: n.source, Extra: extraOf(n), Readings: make([]metering.Reading, 0, len(rows))}
	for _, d := range rows {
		if d.to != nil {
			return nil, fmt.Errorf("malo %s %s at %s: register row with \"to\" set: %w", d.malo, d.obis, d.from.Format(time.RFC3339), ErrInvariantViolated)
		}
		if d.melo != rs.MeloID {
			rs.MeloID = metering.MeloID{}
		}
		rs.Readings = append(rs.Readings, metering.Reading{At: d.from, Value: d.value, Quality: d.quality})
	}
	return rs, nil
}

// Collect returns the register series, nil when the range holds none. Two
// meters or two registers are refused (ErrAmbiguousSeries naming .Melo/.Obis),
// two current values for one reading raise ErrInvariantViolated.
func (r *ReadingsQuery) Collect(ctx context.Context) (*RegisterSeries, error) {
	rows, _, err := r.q.selectRows(ctx, resolvedRows, seriesOrder, 0)
	if err != nil {
		return nil, err
	}
	if err := r.q.checkOneReading(rows, "register series"); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return buildRegister(rows)
}

// CollectByChannel returns every register in the range from one scan; two
// meters carrying one register are still refused (narrow with .Melo).
func (r *ReadingsQuery) CollectByChannel(ctx context.Context) (map[metering.ObisCode]RegisterSeries, error) {
	rows, _, err := r.q.selectRows(ctx, resolvedRows, seriesOrder, 0)
	if err != nil {
		return nil, err
	}
	by := map[metering.ObisCode][]decoded{}
	for _, d := range rows {
		by[d.obis] = append(by[d.obis], d)
	}
	out := make(map[metering.ObisCode]RegisterSeries, len(by))
	for o, rs := range by {
		if err := r.q.checkOneReading(rs, "register "+o.String()); err != nil {
			return nil, err
		}
		x, err := buildRegister(rs)
		if err != nil {
			return nil, err
		}
		out[o] = *x
	}
	return out, nil
}

// Channels lists the registers the narrowed range holds (SELECT DISTINCT).
func (r *ReadingsQuery) Channels(ctx context.Context) ([]metering.ObisCode, error) {
	return r.q.channels(ctx)
}

// Latest returns the newest reading — ORDER BY "from" DESC LIMIT in the
// engine — or nil. Two meters at the newest instant are refused (narrow with .Melo).
func (r *ReadingsQuery) Latest(ctx context.Context) (*metering.Reading, error) {
	rows, _, err := r.q.selectRows(ctx, resolvedRows, latestOrder, 2)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	top := rows[:1]
	if len(rows) == 2 && rows[1].from.Equal(rows[0].from) {
		top = rows
	}
	if err := r.q.checkOneReading(top, "latest reading"); err != nil {
		return nil, err
	}
	return &metering.Reading{At: rows[0].from, Value: rows[0].value, Quality: rows[0].quality}, nil
}

// Deliveries returns the unfolded audit shape: every stored version, one
// Delivery per meter, per register and per delivery (version, scope, recording
// time and source), read from the unresolved relation. Ordered by meter,
// register, recording time and version; empty (not nil) when none.
func (r *ReadingsQuery) Deliveries(ctx context.Context) ([]meterstore.StoredSeries, error) {
	rows, _, err := r.q.selectRows(ctx, storedVersions, `melo_id, obis_code, recorded_at, version, "from"`, 0)
	if err != nil {
		return nil, err
	}
	type key struct {
		melo, obis, scope, source string
		version                   uint64
		recorded                  int64
		reading                   string
	}
	idx := map[key]int{}
	out := []meterstore.StoredSeries{}
	for _, d := range rows {
		src, _ := d.source.MarshalJSON()
		k := key{d.melo.String(), d.obis.String(), d.scope.String(), string(src), d.version.Uint64(), d.recordedAt.UnixMicro(), r.q.readingOf(d)}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, meterstore.StoredSeries{Delivery: metering.Delivery{
				MaloID: d.malo, MeloID: d.melo, Obis: d.obis, Sparte: d.sparte, Unit: d.unit, Resolution: d.resolution,
				Source: d.source, Provenance: d.provenance, Scope: d.scope, Version: d.version, RecordedAt: d.recordedAt,
			}, Extra: extraOf(d)})
		}
		out[i].Readings = append(out[i].Readings, metering.Reading{At: d.from, Value: d.value, Quality: d.quality})
	}
	for i := range out {
		sort.Slice(out[i].Readings, func(a, b int) bool { return out[i].Readings[a].At.Before(out[i].Readings[b].At) })
	}
	return out, nil
}
