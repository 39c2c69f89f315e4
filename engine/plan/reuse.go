package plan

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// Reusable reports whether the plan may serve its statement again (Again)
// for as long as Holds says the tiers are as it pinned them. A plan is a
// function of the statement, its arguments, the session's view, time zone,
// tables and paths (the caller keys on those), and of what it read from the
// tiers while planning: each table's snapshot and watermark and the hot
// partitions detached at or above it (Holds re-reads those). Bounds are
// evaluated only from CONSISTENT expressions (foldable), so the moment of
// planning is not among them. What one run registers — its scans, the cold
// halves a Feeder runs — Again registers anew for the next. Not reusable: a
// plan reading a system table (its rows are the last refresh's, copied into
// the plan).
func (p *Plan) Reusable() bool { return !p.readsSystem }

// Holds re-reads what the plan pinned, in the order planning read it: each
// table's snapshot and watermark as the view pins them now, then, for a table
// whose hot tier the plan reads, the partitions detached at or above that
// watermark. It reports whether all of them are as they were, so that
// planning again would give the same plan: the same snapshot means the same
// cold files and statistics (an Iceberg snapshot never changes), the same
// watermark the same split, the same detached partitions the same hot scans.
func (p *Plan) Holds(ctx context.Context) (bool, error) {
	for t, pin := range p.pins {
		snap, w, err := pinTable(ctx, p.view, t)
		if err != nil {
			return false, err
		}
		if snap != pin.snapshot || !w.Equal(pin.watermark) {
			return false, nil
		}
	}
	for t, pin := range p.hotTables {
		det, err := detachedAtOrAbove(ctx, t, pin.watermark)
		if err != nil {
			return false, err
		}
		if !maps.Equal(det, pin.detached) {
			return false, nil
		}
	}
	return true, nil
}

// Again is the plan made ready for one more run, by ctx: its scans
// registered anew under tokens of their own, with their own row counters,
// and its fed cold halves fed anew — reading those scans — under tokens
// of their own, all named in a copy of the statement in place of the tokens
// the plan was made with. Two runs of one plan share nothing a run changes,
// and a run's tokens live only until it is released. Call it only on a
// Reusable plan, and Release what it returns like any plan.
func (p *Plan) Again(ctx context.Context) *Plan {
	out := *p
	out.Provenance = p.Provenance.clone()
	out.Provenance.Reused = true
	out.Explain = slices.Clone(p.Explain)
	out.tokens, out.Scans, out.fed = nil, nil, nil
	renamed := make([]string, 0, 2*(len(p.Scans)+len(p.fed)))
	for i, s := range p.Scans {
		again := *s
		again.Pager = pagerFor(s.Pager, &again)
		again.Rows = &RowCounter{}
		if s.What == "" { // a hot scan counts into the provenance's hot rows
			again.Rows = out.Provenance.hotRows
		}
		renamed = append(renamed, sqltext.String(p.tokens[i]), sqltext.String(out.register(&again)))
	}
	scans := strings.NewReplacer(renamed...)
	for _, f := range p.fed {
		relations := make([]string, len(f.relations))
		for i, r := range f.relations {
			relations[i] = scans.Replace(r)
		}
		out.feed(ctx, f.cfg, relations)
		renamed = append(renamed, sqltext.String(f.token), sqltext.String(out.fed[len(out.fed)-1].token))
	}
	out.SQL = strings.NewReplacer(renamed...).Replace(p.SQL)
	return &out
}

// Template is a copy of a plan just made, kept to serve Again after the plan
// itself has run and been released: the tokens it names stay only as the
// text Again replaces.
func (p *Plan) Template() *Plan {
	out := *p
	out.Provenance = p.Provenance.clone()
	out.tokens = slices.Clone(p.tokens)
	out.Scans = make([]*Scan, len(p.Scans))
	for i, s := range p.Scans {
		c := *s
		out.Scans[i] = &c
	}
	out.Explain = slices.Clone(p.Explain)
	out.fed = slices.Clone(p.fed)
	return &out
}

func (p Provenance) clone() Provenance {
	p.Watermarks = maps.Clone(p.Watermarks)
	p.Tables = slices.Clone(p.Tables)
	p.SnapshotIDs = slices.Clone(p.SnapshotIDs)
	p.Scope = slices.Clone(p.Scope)
	p.hotRows = &RowCounter{}
	return p
}

// pinTable is the snapshot and watermark a statement of view v reads of t:
// for an AsOf read the snapshot current at the instant or the one named, for
// any other the current one.
func pinTable(ctx context.Context, v View, t *Table) (int64, time.Time, error) {
	want := v.Snapshot
	if v.Mode == AsOfMode {
		if v.AsOfTime != nil {
			id, err := t.Cold.SnapshotAt(ctx, *v.AsOfTime)
			if err != nil {
				return 0, time.Time{}, fmt.Errorf("as of %s, table %s: %w", v.AsOfTime.Format(time.RFC3339Nano), t.Config.Name(), err)
			}
			want = id
		}
		if want == 0 {
			return 0, time.Time{}, fmt.Errorf("as-of read of %s without a snapshot: %w", t.Config.Name(), ErrNoSnapshot)
		}
	}
	snap, w, err := t.Cold.Watermark(ctx, want)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("read watermark of %s: %w", t.Config.Name(), err)
	}
	return snap, w, nil
}

// detachedAtOrAbove is the set of t's partitions detached for archival whose
// window starts at or above w: rows the statement reads from them, not from
// the parent.
func detachedAtOrAbove(ctx context.Context, t *Table, w time.Time) (map[string]bool, error) {
	det, err := t.Hot.Detached(ctx)
	if err != nil {
		return nil, fmt.Errorf("list detached partitions of %s: %w", t.Config.Name(), err)
	}
	out := map[string]bool{}
	for _, d := range det {
		if !d.From.Before(w) {
			out[d.Name] = true
		}
	}
	return out, nil
}
