package engine

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
		pl.out.prov.Watermarks[t.cfg.ResolvedName()] = pin.watermark
	}
	return nil
}

func (pl *planning) pin(ctx context.Context, t *tableState) (*tablePin, error) {
	if pin, ok := pl.pins[t]; ok {
		return pin, nil
	}
	v := pl.e.view
	want := v.snapshot
	if v.mode == AsOfMode {
		if v.asOfTime != nil {
			id, err := t.cold.SnapshotAt(ctx, *v.asOfTime)
			if err != nil {
				return nil, fmt.Errorf("as of %s, table %s: %w", v.asOfTime.Format(time.RFC3339Nano), t.cfg.Name(), err)
			}
			want = id
		}
		if want == 0 {
			return nil, fmt.Errorf("as-of read of %s without a snapshot: %w", t.cfg.Name(), ErrNoSnapshot)
		}
	}
	snap, w, err := t.cold.Watermark(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("read watermark of %s: %w", t.cfg.Name(), err)
	}
	pin := &tablePin{snapshot: snap, watermark: w}
	pl.pins[t] = pin
	return pin, nil
}
