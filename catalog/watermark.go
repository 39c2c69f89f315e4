package catalog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/meterstore/meterstore/internal/pglock"
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
// carrying the property. The zero time only for a table that holds no data
// file at snap: when data files are there and no ancestor still carries the
// property (an out-of-band commit whose MeterStore ancestors were expired),
// zero would send every query past the cold tier and restart archival at the
// oldest partition, so that is ErrWatermarkMissing.
func (t *Table) watermarkFrom(ctx context.Context, tbl *table.Table, snap *table.Snapshot) (time.Time, error) {
	walked := 0
	for s := snap; s != nil; walked++ {
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
	files, err := dataFilesAt(ctx, tbl, snap)
	if err != nil {
		return time.Time{}, fmt.Errorf("cold table %s: watermark: %w", t.cfg.Name(), err)
	}
	if files == 0 {
		return time.Time{}, nil
	}
	return time.Time{}, fmt.Errorf("cold table %s: %w: snapshot %d holds %d data files, and none of the %d snapshots of its ancestry still in the metadata carries %s — "+
		"a commit by another engine (out-of-band compaction) whose MeterStore ancestors were expired drops it; read as zero it would hide every cold row from queries and restart archival at the oldest partition. "+
		"Restore it with `msql watermark restore --table %s` (store.Table.RestoreWatermark), and expire keeping the last snapshot MeterStore wrote; "+
		"an out-of-band commit may carry %s only as its parent snapshot's value, copied unchanged (the watermark is where the hot tier begins; files it adds are read as their own footers say either way)",
		t.cfg.Name(), ErrWatermarkMissing, snap.SnapshotID, files, walked, WatermarkProperty, t.cfg.Name(), WatermarkProperty)
}

// dataFilesAt counts the data files live at snap: the summary's total where the
// writer recorded one, the manifests' entries otherwise.
func dataFilesAt(ctx context.Context, tbl *table.Table, snap *table.Snapshot) (int64, error) {
	if snap == nil {
		return 0, nil
	}
	if snap.Summary != nil {
		if v, ok := snap.Summary.Properties["total-data-files"]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n, nil
			}
		}
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return 0, err
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return 0, fmt.Errorf("snapshot %d: manifests: %w", snap.SnapshotID, err)
	}
	var n int64
	for _, m := range manifests {
		if m.ManifestContent() == iceberg.ManifestContentData {
			n += int64(m.AddedDataFiles()) + int64(m.ExistingDataFiles())
		}
	}
	return n, nil
}

// Watermark is the tiering watermark of the current snapshot (walking past
// snapshots without it); the zero time when nothing has been archived, and
// ErrWatermarkMissing when data files are there but no snapshot says where
// the cold tier ends.
func (t *Table) Watermark(ctx context.Context) (time.Time, error) {
	tbl := t.Iceberg()
	return t.watermarkFrom(ctx, tbl, tbl.CurrentSnapshot())
}

// WatermarkAt is the watermark as of the given snapshot.
func (t *Table) WatermarkAt(ctx context.Context, snapshotID int64) (time.Time, error) {
	tbl := t.Iceberg()
	s := tbl.SnapshotByID(snapshotID)
	if s == nil {
		return time.Time{}, fmt.Errorf("cold table %s: snapshot %d: %w", t.cfg.Name(), snapshotID, ErrNoSnapshot)
	}
	return t.watermarkFrom(ctx, tbl, s)
}

// RestoreWatermark commits the tiering watermark w again, in an empty snapshot,
// to a table that lost it (ErrWatermarkMissing); a table whose watermark reads
// fine is refused. Every cold row must lie below w: a file whose "from" bounds
// reach w, or lack the statistic, refuses the restore, naming the file. The
// caller (archive.Archiver.RestoreWatermark) checks the hot side: that no row
// below w is still in PostgreSQL. Held under the cold-append lease.
func (t *Table) RestoreWatermark(ctx context.Context, w time.Time) (err error) {
	defer t.explainObjectStore(&err)
	w = w.UTC()
	if t.c.opt.Pool != nil {
		lease, err := pglock.Acquire(ctx, t.c.opt.Pool, LeaseName(t.cfg.Name()), ColdAppendLeaseWait)
		if err != nil {
			return fmt.Errorf("cold table %s: restore watermark: %w", t.cfg.Name(), err)
		}
		defer lease.Release()
	}
	if err := t.Refresh(ctx); err != nil {
		return err
	}
	cur, err := t.Watermark(ctx)
	if err == nil {
		return fmt.Errorf("cold table %s: restore watermark: the table's watermark is %s; there is nothing to restore", t.cfg.Name(), describeWatermark(cur))
	}
	if !errors.Is(err, ErrWatermarkMissing) {
		return err
	}
	hi, err := t.ColdFromMax(ctx)
	if err != nil {
		return fmt.Errorf("cold table %s: restore watermark: %w", t.cfg.Name(), err)
	}
	if !hi.Before(w) {
		return fmt.Errorf("cold table %s: restore watermark %s: the cold tier holds a row at %s; the watermark must lie above every cold row",
			t.cfg.Name(), formatWatermark(w), formatWatermark(hi))
	}
	tbl := t.Iceberg()
	_, err = t.commitFiles(ctx, tbl, "restore watermark", nil,
		iceberg.Properties{WatermarkProperty: formatWatermark(w), WatermarkCommitProperty: "restore watermark"})
	return err
}

// ColdFromMax is the largest "from" the current snapshot's files may hold, from
// their statistics (zero for a table without data); a file without the
// statistic is an error naming it: nothing can then be proven about its rows.
func (t *Table) ColdFromMax(ctx context.Context) (time.Time, error) {
	tbl := t.Iceberg()
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return time.Time{}, nil
	}
	files, err := t.snapshotFiles(ctx, tbl, snap.SnapshotID)
	if err != nil {
		return time.Time{}, err
	}
	var hi time.Time
	for _, f := range files {
		if f.FromMax == nil {
			return time.Time{}, fmt.Errorf("data file %s carries no upper bound of \"from\"; rewrite it with column statistics", f.Path)
		}
		if f.FromMax.After(hi) {
			hi = *f.FromMax
		}
	}
	return hi, nil
}

func describeWatermark(w time.Time) string {
	if w.IsZero() {
		return "unset (nothing archived)"
	}
	return formatWatermark(w)
}
