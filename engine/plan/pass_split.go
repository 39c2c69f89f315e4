package plan

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// coldHalf is a reference's read of Iceberg: [lo, min(hi, W)), the files
// iceberg-go planned for it, and how elide or resolve reads them.
type coldHalf struct {
	rng timeRange
	// filter is the half's filter (coldFilter) with "from" restricted to a
	// range: rng for a scan of the snapshot, less for a read of planned
	// files whose statistics prove the rest (filesWhere).
	filter func(timeRange) string
	plan   ColdPlan
	path   ColdPath
	read   coldRead
	// pathNote says why the half reads through path rather than the
	// engine's cold path ("" when it does not).
	pathNote string
}

// hotHalf is a reference's read of PostgreSQL: [max(lo, W), hi), from the
// parent and from each partition detached for archival but not yet covered by
// the watermark. It is always resolved.
type hotHalf struct {
	rng   timeRange
	scans []HotScan
	path  HotPath
	// partials: PostgreSQL computes the half's partial aggregates (hot
	// partials); nil reads its rows.
	partials *hotPartialsRead
}

// splitTiers decides, per reference, which tiers hold rows of its range: cold
// below the pinned watermark (never in operational mode), hot at or above it
// (never in historical or as-of mode), each with the scope's equalities and the
// handle's ceilings — and plans the cold files.
func splitTiers(ctx context.Context, pl *planning) error {
	for _, ref := range pl.refs {
		ref.eq = scoped(ref.eq, pl.in.View.Scope)
		if err := pl.splitCold(ctx, ref); err != nil {
			return err
		}
		if err := pl.splitHot(ctx, ref); err != nil {
			return err
		}
	}
	return nil
}

// scoped is the statement's equalities with the handle's scope over them: a
// statement asking for another scope's rows gets none of them.
func scoped(eq, scope map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range eq {
		out[k] = v
	}
	for k, v := range scope {
		out[k] = v
	}
	return out
}

func (pl *planning) splitCold(ctx context.Context, ref *reference) error {
	v, w := pl.in.View, ref.pin.watermark
	rng := ref.rng
	rng.lowerHi(w)
	if v.Mode == Operational || w.IsZero() || rng.empty() {
		return nil
	}
	var lo, hi time.Time
	if rng.lo != nil {
		lo = *rng.lo
	}
	if rng.hi != nil {
		hi = *rng.hi
	}
	t := ref.rel.table
	cp, err := t.Cold.Plan(ctx, ref.pin.snapshot, lo, hi, ref.eq)
	if err != nil {
		return fmt.Errorf("plan cold files of %s: %w", t.Config.Name(), err)
	}
	prov := &pl.out.Provenance
	prov.Tiers |= Cold
	prov.ColdFiles += len(cp.Files)
	prov.SnapshotIDs = appendUnique(prov.SnapshotIDs, cp.SnapshotID)
	eq := ref.eq
	ref.cold = &coldHalf{rng: rng, filter: func(r timeRange) string { return coldFilter(r, eq, v) },
		plan: cp, path: pl.coldPathFor(ctx, ref, cp.Files)}
	return nil
}

// where is the filter every read of the snapshot carries (iceberg_scan,
// which scans pruned files as well): the half's whole range.
func (c *coldHalf) where() string { return c.filter(c.rng) }

// filesWhere is the filter of a read of files, some of the planned files
// only (read_parquet, meter_cold_scan): where without the "from" bounds
// their statistics prove.
func (c *coldHalf) filesWhere(files []ColdFile) string {
	return c.filter(unprovenBounds(c.rng, files))
}

// splitWithin splits files into those whose "from" statistics lie within
// rng, read with no "from" filter, and the others, read with the bounds
// they do not prove: the non-empty sets, in that order.
func splitWithin(rng timeRange, files []ColdFile) [][]ColdFile {
	var within, others []ColdFile
	for _, f := range files {
		if unprovenBounds(rng, []ColdFile{f}) == (timeRange{}) {
			within = append(within, f)
		} else {
			others = append(others, f)
		}
	}
	var out [][]ColdFile
	for _, set := range [][]ColdFile{within, others} {
		if len(set) > 0 {
			out = append(out, set)
		}
	}
	return out
}

// unprovenBounds is rng without each bound that every file's "from"
// statistics lie within. DuckDB evaluates a "from" filter pushed into a
// read_parquet of several files on every row, even in row groups whose
// statistics prove it true, and a top-N over "from" (one meter's latest
// reading) then cannot skip row groups by its own dynamic filter; the
// watermark bound every cold read carries is nearly always such a bound. A
// file's bounds are Iceberg's lower and upper bounds of its "from" column —
// at most and at least each of its values — and "from" is a required
// column, so no row of a file within a bound fails it. A file without them
// keeps both bounds.
func unprovenBounds(rng timeRange, files []ColdFile) timeRange {
	var out timeRange
	for _, f := range files {
		if f.FromMin == nil || f.FromMax == nil {
			return rng
		}
		if rng.lo != nil && f.FromMin.Before(*rng.lo) {
			out.lo = rng.lo
		}
		if rng.hi != nil && !f.FromMax.Before(*rng.hi) {
			out.hi = rng.hi
		}
	}
	return out
}

func (pl *planning) splitHot(ctx context.Context, ref *reference) error {
	v, w, pin := pl.in.View, ref.pin.watermark, ref.pin
	rng := ref.rng
	if !w.IsZero() {
		rng.raiseLo(w)
	}
	if v.Mode == Historical || v.Mode == AsOfMode || rng.empty() {
		return nil
	}
	t := ref.rel.table
	scan := HotScan{Table: t.Config.Name(), Eq: ref.eq, RecordedAtMax: v.KnownAt, MaxVersion: v.MaxVersion}
	if rng.lo != nil {
		scan.From = *rng.lo
	}
	if rng.hi != nil {
		scan.To = *rng.hi
	}
	if pin.detached == nil {
		det, err := detachedAtOrAbove(ctx, t, w)
		if err != nil {
			return err
		}
		pin.detached = det
	}
	scans := []HotScan{scan}
	var names []string
	for name := range pin.detached {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := scan
		s.Table = name
		scans = append(scans, s)
	}
	pl.out.hotTables[t] = *pin
	pl.out.Provenance.Tiers |= Hot
	ref.hot = &hotHalf{rng: rng, scans: scans, path: pl.hotPathFor()}
	return nil
}
