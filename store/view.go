package store

import (
	"context"
	"fmt"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine"
)

// View is a read handle on the store: statements (Query) and the typed reads
// (Series, Readings) through one engine handle. A Store is its own current,
// unconfined view; AsOf, AsOfTime, AsKnownAt and Scoped derive views whose
// pin, ceilings and scope every read through them carries — the typed reads
// too, with the same refusals as on the store (two channels, two readings,
// two winners). A view derived from a scoped or ceilinged one keeps the scope
// and the ceilings, as the engine's handles do. Views are safe for concurrent
// use and cost nothing to derive.
type View struct {
	st  *Store
	eng *engine.Engine
}

func (v *View) derive(e *engine.Engine) *View { return &View{st: v.st, eng: e} }

// Engine is the view's SQL session.
func (v *View) Engine() *engine.Engine { return v.eng }

// Query runs a SELECT through the view.
func (v *View) Query(ctx context.Context, q string, args ...any) (*engine.Result, error) {
	return v.query(ctx, q, args...)
}

// AsOf reads the cold tier pinned to an Iceberg snapshot, with an optional
// version ceiling (engine.Engine.AsOf): reproducible, and blind to the hot
// window by construction.
func (v *View) AsOf(snapshotID int64, maxVersion *uint64) *View {
	return v.derive(v.eng.AsOf(snapshotID, maxVersion))
}

// AsOfTime is AsOf pinned to each table's snapshot current at t
// (engine.Engine.AsOfTime).
func (v *View) AsOfTime(t time.Time, maxVersion *uint64) *View {
	return v.derive(v.eng.AsOfTime(t, maxVersion))
}

// AsKnownAt reads both tiers as they were known at t: only versions recorded
// at or before t enter resolution (engine.Engine.AsKnownAt). What it can
// promise rests on recorded_at. A delivery the store stamped (the caller left
// recorded_at zero; Stamp.Clock is StoreClock) is placed when the store
// learned it, so an answer for an instant already past does not change. A
// recorded_at the caller gave is the caller's word: one set in the past — a
// backdated write — changes the answers for every instant after it, already
// given or not, and nothing in the store can tell it from a true one; one
// ahead of the store's clock by more than Config.RecordedAtSkew is refused
// (RecordedAtError), because it would hide its rows from AsKnownAt(now).
func (v *View) AsKnownAt(t time.Time) *View { return v.derive(v.eng.AsKnownAt(t)) }

// Scoped confines every read to rows with column = value, a merge-key column
// of every table (engine.Engine.Scoped, whose refusals it returns).
func (v *View) Scoped(column, value string) (*View, error) {
	e, err := v.eng.Scoped(column, value)
	if err != nil {
		return nil, err
	}
	return v.derive(e), nil
}

// Series starts a typed read of one MaLo on the store's single interval table
// (see Table.Series), through the view.
func (v *View) Series(malo string) *SeriesQuery {
	t, err := v.st.onlyOf(meterstore.Interval, "Readings")
	if err != nil {
		return &SeriesQuery{q: query{err: err}}
	}
	return v.series(t, malo)
}

// SeriesIn is Series on the table named table (physical or resolved name),
// for a store of several.
func (v *View) SeriesIn(table, malo string) *SeriesQuery {
	t, err := v.st.named(table)
	if err != nil {
		return &SeriesQuery{q: query{err: err}}
	}
	return v.series(t, malo)
}

// Readings starts a typed read of one MaLo's registers on the store's single
// point table (see Table.Readings), through the view.
func (v *View) Readings(malo string) *ReadingsQuery {
	t, err := v.st.onlyOf(meterstore.Point, "Series")
	if err != nil {
		return &ReadingsQuery{q: query{err: err}}
	}
	return v.readings(t, malo)
}

// ReadingsIn is Readings on the table named table, for a store of several.
func (v *View) ReadingsIn(table, malo string) *ReadingsQuery {
	t, err := v.st.named(table)
	if err != nil {
		return &ReadingsQuery{q: query{err: err}}
	}
	return v.readings(t, malo)
}

func (v *View) series(t *Table, malo string) *SeriesQuery {
	q := newQuery(v, t, malo)
	if q.err == nil && t.cfg.TimeModel() != meterstore.Interval {
		q.err = fmt.Errorf("read %s: %w: it holds register readings; use Readings", t.cfg.ResolvedName(), ErrWrongTimeModel)
	}
	return &SeriesQuery{q: q}
}

func (v *View) readings(t *Table, malo string) *ReadingsQuery {
	q := newQuery(v, t, malo)
	if q.err == nil && t.cfg.TimeModel() != meterstore.Point {
		q.err = fmt.Errorf("read %s: %w: it holds intervals; use Series", t.cfg.ResolvedName(), ErrWrongTimeModel)
	}
	return &ReadingsQuery{q: q}
}
