package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/meterstore/meterstore/internal/pglock"
)

// WatermarkCommitProperty marks a snapshot that set the tiering watermark — an
// archival window, a history load, a restore — naming the operation and the
// archiver lease's token. Commits that carry the watermark unchanged (cold
// appends, compaction) do not have it, so a fence tells a window committed by
// someone else from the commits that may land beside an archival.
const WatermarkCommitProperty = "meterstore.watermark_commit"

// Fence is what a commit that moves the watermark rests on: the watermark and
// the snapshot it was read from at the start of the archiver's run, and the
// archiver's lease. The commit lands only if no snapshot since set the
// watermark — an equal watermark committed by someone else is a conflict, not
// a pass: it is the same window committed twice — and the lease is still held.
type Fence struct {
	Watermark time.Time
	Snapshot  int64         // the current snapshot when the fence was read; 0: the table had none
	Lease     *pglock.Lease // the archiver's; nil: no lease to check (a table without a PostgreSQL pool, tests)
}

// Fence reads the fence for a run holding lease from the handle as it is now:
// refresh it first.
func (t *Table) Fence(ctx context.Context, lease *pglock.Lease) (Fence, error) {
	tbl := t.Iceberg()
	snap := tbl.CurrentSnapshot()
	w, err := t.watermarkFrom(ctx, tbl, snap)
	if err != nil {
		return Fence{}, err
	}
	f := Fence{Watermark: w, Lease: lease}
	if snap != nil {
		f.Snapshot = snap.SnapshotID
	}
	return f, nil
}

// After is the fence for the run's next commit, once res was committed under f.
func (f Fence) After(res CommitResult) Fence {
	return Fence{Watermark: res.Watermark, Snapshot: res.SnapshotID, Lease: f.Lease}
}

// commitMark is the WatermarkCommitProperty value of a commit of op under f.
func (f Fence) commitMark(op string) string {
	if f.Lease == nil {
		return op
	}
	return fmt.Sprintf("%s, lease %s token %d", op, f.Lease.Name(), f.Lease.Token())
}

// checkFence returns ErrFenced unless a commit on tbl may land under f: f's
// snapshot is an ancestor of tbl's current one with no snapshot between that
// set the watermark, the watermark is still f's, and f's lease is still held.
// It runs under the cold-append lease right before the commit, whose
// compare-and-swap on the current snapshot closes the rest of the gap.
func (t *Table) checkFence(ctx context.Context, tbl *table.Table, f Fence) error {
	cur := tbl.CurrentSnapshot()
	s := cur
	for s != nil && s.SnapshotID != f.Snapshot {
		if mark, ok := summaryProperty(s, WatermarkCommitProperty); ok {
			w, _, _ := snapshotWatermark(s)
			return fmt.Errorf("cold table %s: snapshot %d (%s) set the watermark to %s after snapshot %d this commit rests on: %w; "+
				"another archiver committed meanwhile, and this run's rows are that commit's or the next run's",
				t.cfg.Name(), s.SnapshotID, mark, formatWatermark(w), f.Snapshot, ErrFenced)
		}
		if s.ParentSnapshotID == nil {
			s = nil
			break
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
	}
	if s == nil && f.Snapshot != 0 {
		return fmt.Errorf("cold table %s: snapshot %d this commit rests on is no longer an ancestor of the current snapshot: %w",
			t.cfg.Name(), f.Snapshot, ErrFenced)
	}
	w, err := t.watermarkFrom(ctx, tbl, cur)
	if err != nil {
		return err
	}
	if !w.Equal(f.Watermark) {
		return fmt.Errorf("cold table %s: the watermark is %s, not the %s read at the start: %w",
			t.cfg.Name(), describeWatermark(w), describeWatermark(f.Watermark), ErrFenced)
	}
	if f.Lease != nil {
		if err := f.Lease.Check(ctx); err != nil {
			return fmt.Errorf("cold table %s: %w: %w", t.cfg.Name(), ErrFenced, err)
		}
	}
	return nil
}

// summaryProperty is a snapshot summary's property.
func summaryProperty(s *table.Snapshot, key string) (string, bool) {
	if s.Summary == nil {
		return "", false
	}
	v, ok := s.Summary.Properties[key]
	return v, ok
}
