package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/table"
)

// WatermarkProperty is the snapshot-summary key of the tiering watermark.
const WatermarkProperty = "meterstore.tiering_watermark"

func formatWatermark(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// snapshotWatermark reads the snapshot's own watermark property.
func snapshotWatermark(s *table.Snapshot) (time.Time, bool, error) {
	if s == nil || s.Summary == nil {
		return time.Time{}, false, nil
	}
	v, ok := s.Summary.Properties[WatermarkProperty]
	if !ok {
		return time.Time{}, false, nil
	}
	w, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("snapshot %d: %s = %q: %w", s.SnapshotID, WatermarkProperty, v, err)
	}
	return w.UTC(), true, nil
}

// watermarkFrom walks from snap along the parent chain to the newest snapshot
// carrying the property; zero time when none does.
func watermarkFrom(tbl *table.Table, snap *table.Snapshot) (time.Time, error) {
	for s := snap; s != nil; {
		w, ok, err := snapshotWatermark(s)
		if err != nil {
			return time.Time{}, err
		}
		if ok {
			return w, nil
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
	}
	return time.Time{}, nil
}

// Watermark is the tiering watermark of the current snapshot (walking past
// snapshots without it); the zero time when nothing has been archived.
func (t *Table) Watermark(ctx context.Context) (time.Time, error) {
	tbl := t.Iceberg()
	return watermarkFrom(tbl, tbl.CurrentSnapshot())
}

// WatermarkAt is the watermark as of the given snapshot.
func (t *Table) WatermarkAt(ctx context.Context, snapshotID int64) (time.Time, error) {
	tbl := t.Iceberg()
	s := tbl.SnapshotByID(snapshotID)
	if s == nil {
		return time.Time{}, fmt.Errorf("cold table %s: snapshot %d: %w", t.cfg.Name(), snapshotID, ErrNoSnapshot)
	}
	return watermarkFrom(tbl, s)
}
