package plan

import (
	"context"
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
	snap, w, err := pinTable(ctx, pl.in.View, t)
	if err != nil {
		return nil, err
	}
	pin := &tablePin{snapshot: snap, watermark: w}
	pl.pins[t] = pin
	return pin, nil
}
