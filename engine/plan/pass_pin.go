package plan

import (
	"context"
	"fmt"
	"time"
)

// tablePin is what a statement pinned for one table.
type tablePin struct {
	snapshot  int64
	watermark time.Time
	detached  map[string]bool // partitions detached at or above the watermark; nil until the hot tier is planned
}

// pinSnapshots reads each referenced table's snapshot and watermark, once per
// statement, so every reference to a table splits at the same W: for an AsOf
// read the snapshot current at the instant or the one named, for any other
// the current one.
func pinSnapshots(ctx context.Context, pl *planning) error {
	for _, ref := range pl.refs {
		pin, err := pl.pin(ctx, ref.rel.table)
		if err != nil {
			return err
		}
		ref.pin = pin
	}
	for t, pin := range pl.pins {
		pl.out.Provenance.Watermarks[t.Config.ResolvedName()] = pin.watermark
	}
	return nil
}

func (pl *planning) pin(ctx context.Context, t *Table) (*tablePin, error) {
	if pin, ok := pl.pins[t]; ok {
		return pin, nil
	}
	v := pl.in.View
	want := v.Snapshot
	if v.Mode == AsOfMode {
		if v.AsOfTime != nil {
			id, err := t.Cold.SnapshotAt(ctx, *v.AsOfTime)
			if err != nil {
				return nil, fmt.Errorf("as of %s, table %s: %w", v.AsOfTime.Format(time.RFC3339Nano), t.Config.Name(), err)
			}
			want = id
		}
		if want == 0 {
			return nil, fmt.Errorf("as-of read of %s without a snapshot: %w", t.Config.Name(), ErrNoSnapshot)
		}
	}
	snap, w, err := t.Cold.Watermark(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("read watermark of %s: %w", t.Config.Name(), err)
	}
	pin := &tablePin{snapshot: snap, watermark: w}
	pl.pins[t] = pin
	return pin, nil
}
