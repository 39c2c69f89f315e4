package store

import (
	"context"
	"fmt"
	"time"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/metering"
)

// MeasurementSeries is one channel of one reading as a domain value: resolved
// (latest version per reading), tier-split and ordered by interval start. It
// asserts a source — the newest contributing delivery's — which is why an empty
// range yields no series rather than an empty one.
type MeasurementSeries struct {
	MaloID metering.MaloID
	// MeloID is the Messlokation when every interval names the same one, else zero.
	MeloID metering.MeloID
	Obis   metering.ObisCode
	Unit   metering.Unit
	// Resolution and Source are those of the newest contributing delivery
	// (latest recorded_at); Resolution is zero when it declared none.
	Resolution metering.Resolution
	Source     metering.Source
	Intervals  []metering.Interval
}

// ResolvedSeries is a series plus the commodity and the declared
// attribute/identity columns, folded from the newest contributing delivery:
// the read counterpart to StoredSeries.Extra.
type ResolvedSeries struct {
	Sparte metering.Sparte
	Extra  map[string]string // declared columns; a null is absent
	Series MeasurementSeries
}

// SeriesQuery is a typed read of one MaLo's Lastgang, built with the narrowing
// methods and run by a terminal (Collect, Intervals, Latest, …). Inputs are
// parsed where they are given; the first refusal is returned by the terminal.
// Every terminal runs parameterised SQL over the resolved relation through the
// engine, so the rows are version-resolved and tier-split against one boundary.
// A SeriesQuery may be reused; the narrowing methods modify it in place.
type SeriesQuery struct{ q query }

// Series starts a typed read of malo through the store's current view (check
// digit verified; a wrong one is the terminal's error, never an empty
// series). View.SeriesIn reads the table through a derived view.
func (t *Table) Series(malo string) *SeriesQuery { return t.st.series(t, malo) }

// Obis narrows to one channel; the code is canonicalised ("1-0:1.8.0*255" and
// "1-0:1.8.0" are the same channel).
func (s *SeriesQuery) Obis(code string) *SeriesQuery { s.q.setObis(code); return s }

// Melo narrows to one Messlokation; the ID is parsed (33 characters, held
// uppercase), which .ColumnEq("melo_id", …) does not do.
func (s *SeriesQuery) Melo(melo string) *SeriesQuery { s.q.setMelo(melo); return s }

// ColumnEq narrows by a merge-key column (a declared identity column, or
// melo_id on a table identifying by MeLo). Any other column is refused with
// ErrNotMergeKey: filtering it before resolution would return superseded values.
func (s *SeriesQuery) ColumnEq(column, value string) *SeriesQuery {
	s.q.setColumnEq(column, value)
	return s
}

// Range narrows to intervals starting in [from, to); a zero bound is open.
func (s *SeriesQuery) Range(from, to time.Time) *SeriesQuery { s.q.setRange(from, to); return s }

// QualityIn keeps intervals whose current (resolved) value has one of qs.
// Which qualities count (billable, say) is the caller's domain rule.
func (s *SeriesQuery) QualityIn(qs ...metering.Quality) *SeriesQuery { s.q.setQuality(qs); return s }

func (s *SeriesQuery) rows(ctx context.Context) ([]decoded, *engine.Provenance, error) {
	return s.q.selectRows(ctx, resolvedRows, seriesOrder, 0)
}

// Collect returns the series, or nil when the range holds no interval (absence
// is not an empty series). It refuses a range spanning two channels or two
// readings (ErrAmbiguousSeries, naming .Obis, .Melo or .ColumnEq) and two
// current values for one reading (ErrInvariantViolated).
func (s *SeriesQuery) Collect(ctx context.Context) (*MeasurementSeries, error) {
	r, _, err := s.CollectWithProvenance(ctx)
	return r, err
}

// CollectWithProvenance is Collect plus the boundary the rows were read against.
func (s *SeriesQuery) CollectWithProvenance(ctx context.Context) (*MeasurementSeries, *engine.Provenance, error) {
	rs, prov, err := s.collectResolved(ctx)
	if rs == nil {
		return nil, prov, err
	}
	return &rs.Series, prov, err
}

// CollectWithSparte is Collect plus the commodity.
func (s *SeriesQuery) CollectWithSparte(ctx context.Context) (*MeasurementSeries, metering.Sparte, error) {
	rs, _, err := s.collectResolved(ctx)
	if rs == nil {
		return nil, 0, err
	}
	return &rs.Series, rs.Sparte, err
}

// CollectResolved is Collect plus the commodity and the declared columns of the
// newest contributing delivery.
func (s *SeriesQuery) CollectResolved(ctx context.Context) (*ResolvedSeries, error) {
	rs, _, err := s.collectResolved(ctx)
	return rs, err
}

func (s *SeriesQuery) collectResolved(ctx context.Context) (*ResolvedSeries, *engine.Provenance, error) {
	rows, prov, err := s.rows(ctx)
	if err != nil {
		return nil, prov, err
	}
	if err := s.q.checkOneReading(rows, "series"); err != nil {
		return nil, prov, err
	}
	if len(rows) == 0 {
		return nil, prov, nil
	}
	rs, err := buildSeries(rows)
	return rs, prov, err
}

func buildSeries(rows []decoded) (*ResolvedSeries, error) {
	n := newest(rows)
	rs := &ResolvedSeries{Sparte: n.sparte, Extra: extraOf(n), Series: MeasurementSeries{
		MaloID: n.malo, MeloID: rows[0].melo, Obis: n.obis, Unit: n.unit, Resolution: n.resolution, Source: n.source,
		Intervals: make([]metering.Interval, 0, len(rows)),
	}}
	for _, d := range rows {
		if d.melo != rs.Series.MeloID {
			rs.Series.MeloID = metering.MeloID{}
		}
		if d.unit != n.unit {
			return nil, fmt.Errorf("malo %s %s: units %s and %s in one series: %w", n.malo, n.obis, n.unit, d.unit, ErrInvariantViolated)
		}
		if d.to == nil {
			return nil, fmt.Errorf("malo %s %s at %s: interval row without \"to\": %w", d.malo, d.obis, d.from.Format(time.RFC3339), ErrInvariantViolated)
		}
		rs.Series.Intervals = append(rs.Series.Intervals, metering.Interval{From: d.from, To: *d.to, Value: d.value, Quality: d.quality})
	}
	return rs, nil
}

// Intervals returns just the intervals, empty (not nil) when the range holds
// none — for callers for whom an empty range genuinely means zero. The same
// refusals as Collect apply.
func (s *SeriesQuery) Intervals(ctx context.Context) ([]metering.Interval, error) {
	rs, _, err := s.collectResolved(ctx)
	if err != nil {
		return nil, err
	}
	if rs == nil {
		return []metering.Interval{}, nil
	}
	return rs.Series.Intervals, nil
}

// CollectByChannel returns every channel in the range, one scan and one
// boundary (the same single query Collect runs, split by channel). Two readings
// of one channel (a second tenant, a second MeLo where it identifies) are still
// refused: narrow with .ColumnEq or .Melo. An empty range is an empty map.
func (s *SeriesQuery) CollectByChannel(ctx context.Context) (map[metering.ObisCode]ResolvedSeries, error) {
	m, _, err := s.CollectByChannelWithProvenance(ctx)
	return m, err
}

// CollectByChannelWithProvenance is CollectByChannel plus the boundary every
// channel was read against.
func (s *SeriesQuery) CollectByChannelWithProvenance(ctx context.Context) (map[metering.ObisCode]ResolvedSeries, *engine.Provenance, error) {
	rows, prov, err := s.rows(ctx)
	if err != nil {
		return nil, prov, err
	}
	by := map[metering.ObisCode][]decoded{}
	for _, d := range rows {
		by[d.obis] = append(by[d.obis], d)
	}
	out := make(map[metering.ObisCode]ResolvedSeries, len(by))
	for o, rs := range by {
		if err := s.q.checkOneReading(rs, "channel "+o.String()); err != nil {
			return nil, prov, err
		}
		r, err := buildSeries(rs)
		if err != nil {
			return nil, prov, err
		}
		out[o] = *r
	}
	return out, prov, nil
}

// Channels lists the channels the narrowed range holds, as a SELECT DISTINCT
// (no interval is decoded). It is narrowed by everything the builder is,
// including .ColumnEq, and leaves the builder usable.
func (s *SeriesQuery) Channels(ctx context.Context) ([]metering.ObisCode, error) {
	return s.q.channels(ctx)
}

// Latest returns the newest interval — ORDER BY "from" DESC LIMIT in the
// engine, not a fold over the history — or nil when the range holds none. It
// composes with QualityIn (the last good reading) and the narrowings; when the
// newest instant carries two readings it is refused like Collect.
func (s *SeriesQuery) Latest(ctx context.Context) (*metering.Interval, error) {
	rows, _, err := s.q.selectRows(ctx, resolvedRows, latestOrder, 2)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	top := rows[:1]
	if len(rows) == 2 && rows[1].from.Equal(rows[0].from) {
		top = rows
	}
	if err := s.q.checkOneReading(top, "latest interval"); err != nil {
		return nil, err
	}
	d := rows[0]
	if d.to == nil {
		return nil, fmt.Errorf("malo %s %s at %s: interval row without \"to\": %w", d.malo, d.obis, d.from.Format(time.RFC3339), ErrInvariantViolated)
	}
	return &metering.Interval{From: d.from, To: *d.to, Value: d.value, Quality: d.quality}, nil
}
