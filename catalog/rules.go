package catalog

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/meterstore/meterstore"
)

// offered is a row the interval rules look at, and whether the write being
// checked adds it (fresh) or finds it stored.
type offered struct {
	row   *meterstore.Row
	fresh bool
}

// seen is what an error names of an earlier interval: a copy, as the rows
// the sweep is fed may live in reused buffers.
type seen struct {
	from, end time.Time
	scope     string
}

func seenOf(r *meterstore.Row) seen {
	return seen{from: r.From, end: rowEnd(r), scope: r.VersionScope}
}

// ends is the latest end of a set of intervals seen so far, over all of them
// and over the fresh ones, with the interval holding each.
type ends struct {
	all, fresh seen
}

func (e *ends) add(o offered) {
	end := rowEnd(o.row)
	if end.After(e.all.end) {
		e.all = seenOf(o.row)
	}
	if o.fresh && end.After(e.fresh.end) {
		e.fresh = seenOf(o.row)
	}
}

// against is an interval among those seen before o (all starting earlier)
// that overlaps o's, of a pair at least one of which is fresh; ok is false
// when there is none. A stored pair that overlaps is not this write's doing.
func (e *ends) against(o offered) (seen, bool) {
	switch {
	case o.fresh && e.all.end.After(o.row.From):
		return e.all, true
	case !o.fresh && e.fresh.end.After(o.row.From):
		return e.fresh, true
	}
	return seen{}, false
}

// intervalRules enforces on the cold tier what PostgreSQL's exclusion
// constraints enforce on the hot tier, over rows met in (malo_id, obis_code,
// from) order, a group of rows sharing all three at a time:
//
//   - no_overlap: two intervals of one reading (the merge key without "from")
//     at one version do not overlap — else a sum counts the overlap twice.
//     Two rows with the same "from" are one reading at that version: a
//     duplicate or a restatement, which the caller decides.
//   - one_operator: one network operator per reading. PostgreSQL compares
//     rows with the same "from"; the cold tier refuses any overlapping
//     interval of another operator, which includes them.
//
// Only a pair of which at least one row is fresh is refused, so a write is
// never blamed for what was stored before it. State is kept per (malo_id,
// obis_code) and dropped when the sweep moves on, so memory is bounded by one
// MaLo's channels, not by the rows checked.
type intervalRules struct {
	t          *Table
	malo, obis string
	versions   map[string]*ends            // channel + version
	operators  map[string]map[string]*ends // channel → operator
	carried    map[string][]meterstore.Row // malo_id + obis_code → stored rows starting before any row met
}

func (t *Table) newIntervalRules() *intervalRules {
	return &intervalRules{t: t, versions: map[string]*ends{}, operators: map[string]map[string]*ends{}}
}

// group checks rows that share (malo_id, obis_code, from), met after every
// group of the same MaLo and channel with an earlier "from".
func (s *intervalRules) group(g []offered) error {
	if len(g) == 0 {
		return nil
	}
	if first := g[0].row; first.MaloID != s.malo || first.ObisCode != s.obis {
		s.malo, s.obis = first.MaloID, first.ObisCode
		clear(s.versions)
		clear(s.operators)
		carried := s.carried[channelOf(first)]
		for i := range carried {
			s.add(offered{&carried[i], false})
		}
	}
	for i, o := range g {
		ch := s.t.channelKey(o.row)
		if e := s.versions[versionKey(ch, o.row.Version)]; e != nil {
			if other, ok := e.against(o); ok {
				return s.t.overlapError(o, other)
			}
		}
		op := o.row.Operator()
		for other, e := range s.operators[ch] {
			if other == op {
				continue
			}
			if other, ok := e.against(o); ok {
				return s.t.operatorError(o, other)
			}
		}
		// Rows starting at the same instant overlap whatever their ends.
		for _, p := range g[:i] {
			if (o.fresh || p.fresh) && p.row.Operator() != op && s.t.channelKey(p.row) == ch {
				return s.t.operatorError(o, seenOf(p.row))
			}
		}
	}
	for _, o := range g {
		s.add(o)
	}
	return nil
}

// add makes o one of the intervals seen.
func (s *intervalRules) add(o offered) {
	ch := s.t.channelKey(o.row)
	k := versionKey(ch, o.row.Version)
	if s.versions[k] == nil {
		s.versions[k] = &ends{}
	}
	s.versions[k].add(o)
	if s.operators[ch] == nil {
		s.operators[ch] = map[string]*ends{}
	}
	op := o.row.Operator()
	if s.operators[ch][op] == nil {
		s.operators[ch][op] = &ends{}
	}
	s.operators[ch][op].add(o)
}

// carry makes the sweep meet stored, rows that start before every row it
// will be fed, first in their channel: each channel's rows are checked
// against them (and never they against each other).
func (s *intervalRules) carry(stored []meterstore.Row) {
	s.carried = map[string][]meterstore.Row{}
	for _, r := range stored {
		k := channelOf(&r)
		s.carried[k] = append(s.carried[k], r)
	}
}

// reachingInto reads the stored rows that start before start and end after
// it: the intervals of earlier partitions reaching into the one starting at
// start. Only files whose bounds of "from" and "to" admit one are opened —
// for grids that never cross a month boundary, none.
func (t *Table) reachingInto(ctx context.Context, tbl *table.Table, start time.Time) ([]meterstore.Row, error) {
	at := iceberg.Timestamp(start.UnixMicro())
	return t.readFiltered(ctx, tbl, nil, iceberg.NewAnd(
		iceberg.LessThan(iceberg.Reference("from"), at), iceberg.GreaterThan(iceberg.Reference("to"), at)))
}

func versionKey(channel string, version uint64) string {
	return fmt.Sprintf("%s\x00%d", channel, version)
}

// checkIntervals runs the interval rules over stored and fresh rows in any
// order.
func (t *Table) checkIntervals(stored, fresh []meterstore.Row) error {
	all := make([]offered, 0, len(stored)+len(fresh))
	for i := range stored {
		all = append(all, offered{&stored[i], false})
	}
	for i := range fresh {
		all = append(all, offered{&fresh[i], true})
	}
	slices.SortFunc(all, func(a, b offered) int { return compareSortKey(a.row, b.row) })
	s := t.newIntervalRules()
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && compareSortKey(all[i].row, all[j].row) == 0 {
			j++
		}
		if err := s.group(all[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

func describeRow(o offered) string {
	if o.fresh {
		return "delivered"
	}
	return "stored"
}

func (t *Table) overlapError(o offered, other seen) error {
	r := o.row
	return fmt.Errorf("cold table %s: rule no_overlap: malo %s %s: the %s interval [%s, %s) at version %d overlaps [%s, %s) at the same version, which double-counts every sum; deliver one grid per version, or restate the span at a higher version (a correction): %w",
		t.cfg.Name(), r.MaloID, r.ObisCode, describeRow(o), formatWatermark(r.From), formatWatermark(rowEnd(r)), r.Version,
		formatWatermark(other.from), formatWatermark(other.end), ErrOverlap)
}

func (t *Table) operatorError(o offered, other seen) error {
	r := o.row
	return fmt.Errorf("cold table %s: rule one_operator: malo %s %s at %s: operator %s, but %s already delivered an overlapping reading (version scope %s); the version scope must name the network operator (NAD+MS), not a forwarding party's Marktpartner-ID: %w",
		t.cfg.Name(), r.MaloID, r.ObisCode, formatWatermark(r.From), r.Operator(), meterstore.Row{VersionScope: other.scope}.Operator(), other.scope, ErrSecondOperator)
}

// unitPairs checks the (sparte, unit) pair of each row, each distinct pair
// once (meterstore.CheckUnitPair): the rule the hot tier's unit_of_sparte
// CHECK and the row validator of the cold write paths enforce, held to rows a
// writer that did not check it stored.
type unitPairs map[meterstore.UnitPair]error

func (u unitPairs) check(r *meterstore.Row) error {
	p := meterstore.UnitPair{Sparte: r.Sparte, Unit: r.Unit}
	err, ok := u[p]
	if !ok {
		err = meterstore.CheckUnitPair(p.Sparte, p.Unit)
		u[p] = err
	}
	if err != nil {
		return fmt.Errorf("malo %s %s at %s version %d: %w", r.MaloID, r.ObisCode, formatWatermark(r.From), r.Version, err)
	}
	return nil
}
