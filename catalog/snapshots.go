package catalog

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go/table"
)

// Snapshot is one Iceberg snapshot of a cold table.
type Snapshot struct {
	ID          int64
	CommittedAt time.Time
	Watermark   *time.Time // the snapshot's own property; nil when it carries none
	Operation   string
	ParentID    *int64
}

func toSnapshot(s *table.Snapshot) (Snapshot, error) {
	out := Snapshot{ID: s.SnapshotID, CommittedAt: time.UnixMilli(s.TimestampMs).UTC(), ParentID: s.ParentSnapshotID}
	if s.Summary != nil {
		out.Operation = string(s.Summary.Operation)
	}
	w, ok, err := snapshotWatermark(s)
	if err != nil {
		return Snapshot{}, err
	}
	if ok {
		out.Watermark = &w
	}
	return out, nil
}

// Snapshots lists the table's snapshots, oldest first.
func (t *Table) Snapshots(ctx context.Context) ([]Snapshot, error) {
	snaps := t.Iceberg().Metadata().Snapshots()
	out := make([]Snapshot, 0, len(snaps))
	for i := range snaps {
		s, err := toSnapshot(&snaps[i])
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b Snapshot) int { return a.CommittedAt.Compare(b.CommittedAt) })
	return out, nil
}

// SnapshotAt is the newest snapshot on the main branch's history committed at or
// before at; ErrNoSnapshot when at is before the table's first snapshot.
func (t *Table) SnapshotAt(ctx context.Context, at time.Time) (Snapshot, error) {
	tbl := t.Iceberg()
	// Follow the current ancestry, so a snapshot of an abandoned branch is never chosen.
	for s := tbl.CurrentSnapshot(); s != nil; {
		if !time.UnixMilli(s.TimestampMs).After(at) {
			return toSnapshot(s)
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
	}
	return Snapshot{}, fmt.Errorf("cold table %s: no snapshot at or before %s: %w", t.cfg.Name(), at.UTC().Format(time.RFC3339Nano), ErrNoSnapshot)
}

// SnapshotByID resolves a snapshot id; ErrNoSnapshot when unknown.
func (t *Table) SnapshotByID(ctx context.Context, id int64) (Snapshot, error) {
	s := t.Iceberg().SnapshotByID(id)
	if s == nil {
		return Snapshot{}, fmt.Errorf("cold table %s: snapshot %d: %w", t.cfg.Name(), id, ErrNoSnapshot)
	}
	return toSnapshot(s)
}

// CurrentSnapshotID is the current snapshot id, 0 for an empty table.
func (t *Table) CurrentSnapshotID() int64 {
	if s := t.Iceberg().CurrentSnapshot(); s != nil {
		return s.SnapshotID
	}
	return 0
}
