package plan

import (
	"context"
	"fmt"
	"strings"
)

// ReadsHot reports whether the plan reads any table's hot tier.
func (p *Plan) ReadsHot() bool { return len(p.hotTables) > 0 }

// CheckBoundary re-reads, for each table whose hot tier was read, the detached
// partitions and then the watermark. If either changed, a window may have moved
// from hot to cold after this statement pinned its snapshot: rows of it were
// then in neither place the statement looked (ErrBoundaryMoved).
//
// The order matters. An archival detaches a window's partition, then commits
// the watermark past it, then drops the partition, and the two reads are not
// one snapshot: read the other way round, a watermark read before the commit
// and a list made after the drop both look unchanged although the window left
// the parent while the statement read it. Listed first, the partition is
// either still there (detached: caught) or already dropped, and then the
// watermark read after it has moved.
func (p *Plan) CheckBoundary(ctx context.Context) error {
	for t, pin := range p.hotTables {
		det, err := t.Hot.Detached(ctx)
		if err != nil {
			return fmt.Errorf("re-list detached partitions of %s: %w", t.Config.Name(), err)
		}
		for _, d := range det {
			if !d.From.Before(pin.watermark) && !pin.detached[d.Name] {
				return fmt.Errorf("%s: partition %s detached during the statement: %w", t.Config.Name(), d.Name, ErrBoundaryMoved)
			}
		}
		_, w, err := t.Cold.Watermark(ctx, 0)
		if err != nil {
			return fmt.Errorf("re-read watermark of %s: %w", t.Config.Name(), err)
		}
		if !w.Equal(pin.watermark) {
			return fmt.Errorf("%s: watermark %s → %s: %w", t.Config.Name(), pin.watermark, w, ErrBoundaryMoved)
		}
	}
	return nil
}

// ExplainText is EXPLAIN's account of the plan, up to DuckDB's own plan of
// the rewritten statement: a title, the session's lines (its confinement),
// each reference's lines, the provenance and the rewritten SQL.
func (p *Plan) ExplainText(session ...string) string {
	var b strings.Builder
	b.WriteString("MeterStore plan\n")
	for _, l := range append(session, p.Explain...) {
		b.WriteString(l + "\n")
	}
	if p.Provenance.Reused {
		b.WriteString("plan: reused — made for an earlier run of this statement; its snapshots, watermarks and detached partitions re-read unchanged\n")
	}
	fmt.Fprintf(&b, "provenance: %s\n\nrewritten SQL:\n%s\n\n", p.Provenance.String(), p.SQL)
	return b.String()
}
