package catalog

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// PlanRequest selects the files a read needs.
type PlanRequest struct {
	SnapshotID *int64            // nil = current snapshot
	From, To   time.Time         // half-open range on "from"; zero = unbounded
	Eq         map[string]string // equality on partition / merge-key (text) columns
}

// DataFile is one Parquet file to read, with the statistics elision needs.
type DataFile struct {
	Path       string // local filesystem path (file:// stripped) readable by read_parquet
	Records    int64
	Partition  map[string]any // partition field name → value (from_month: months since 1970-01)
	FromMin    *time.Time     // nil = statistic missing
	FromMax    *time.Time
	VersionMin *uint64
	VersionMax *uint64
	SizeBytes  int64
}

// planCacheMax bounds the snapshots whose file lists are kept.
const planCacheMax = 16

func (t *Table) rowFilter(from, to time.Time, eq map[string]string) (iceberg.BooleanExpression, error) {
	var preds []iceberg.BooleanExpression
	if !from.IsZero() {
		preds = append(preds, iceberg.GreaterThanEqual(iceberg.Reference("from"), iceberg.Timestamp(from.UnixMicro())))
	}
	if !to.IsZero() {
		preds = append(preds, iceberg.LessThan(iceberg.Reference("from"), iceberg.Timestamp(to.UnixMicro())))
	}
	for _, k := range slices.Sorted(maps.Keys(eq)) {
		if k == "from" || k == "to" {
			return nil, fmt.Errorf("plan: equality on %q is not supported; use the From/To range", k)
		}
		if _, ok := t.Iceberg().Schema().FindFieldByName(k); !ok {
			return nil, fmt.Errorf("plan: table %s has no column %q", t.cfg.Name(), k)
		}
		preds = append(preds, iceberg.EqualTo(iceberg.Reference(k), eq[k]))
	}
	switch len(preds) {
	case 0:
		return iceberg.AlwaysTrue{}, nil
	case 1:
		return preds[0], nil
	}
	return iceberg.NewAnd(preds[0], preds[1], preds[2:]...), nil
}

// PlanFiles returns the data files a read of req must scan, with decoded bounds
// of "from" and "version", and the snapshot planned (0 for an empty table).
//
// A snapshot never changes, so its whole file list — every file with its
// partition values and column bounds, read once through iceberg-go's manifests
// — is cached per snapshot id, and each request is pruned from it in memory:
// by the "from" range, by identity-partition values, and by the lower/upper
// bounds of text columns where they are exact (shorter than the 16-character
// truncation of Iceberg's default metrics). A file whose statistic is missing
// or truncated is kept: pruning only ever removes what provably cannot match.
// Reading ~one manifest per archived window on every statement was the fixed
// cost of a point query.
func (t *Table) PlanFiles(ctx context.Context, req PlanRequest) ([]DataFile, int64, error) {
	tbl := t.Iceberg()
	var snap *table.Snapshot
	if req.SnapshotID != nil {
		snap = tbl.SnapshotByID(*req.SnapshotID)
		if snap == nil {
			return nil, 0, fmt.Errorf("cold table %s: snapshot %d: %w", t.cfg.Name(), *req.SnapshotID, ErrNoSnapshot)
		}
	} else {
		snap = tbl.CurrentSnapshot()
	}
	if snap == nil {
		return nil, 0, nil
	}
	for k := range req.Eq {
		if k == "from" || k == "to" {
			return nil, 0, fmt.Errorf("plan: equality on %q is not supported; use the From/To range", k)
		}
		if _, ok := tbl.Schema().FindFieldByName(k); !ok {
			return nil, 0, fmt.Errorf("plan: table %s has no column %q", t.cfg.Name(), k)
		}
	}
	all, err := t.snapshotFiles(ctx, tbl, snap.SnapshotID)
	if err != nil {
		return nil, 0, err
	}
	var out []DataFile
	for _, f := range all {
		if f.mayHold(req) {
			out = append(out, f.DataFile)
		}
	}
	return out, snap.SnapshotID, nil
}

// plannedFile is a DataFile with the exact text-column bounds pruning uses.
type plannedFile struct {
	DataFile
	textLo, textHi map[string]string // only columns whose bounds are exact
}

// mayHold reports whether the file can hold a row of req.
func (f plannedFile) mayHold(req PlanRequest) bool {
	if f.FromMin != nil && f.FromMax != nil {
		if !req.From.IsZero() && f.FromMax.Before(req.From) {
			return false
		}
		if !req.To.IsZero() && !f.FromMin.Before(req.To) {
			return false
		}
	}
	for col, v := range req.Eq {
		if pv, ok := f.Partition[col]; ok {
			if s, isStr := pv.(string); isStr && s != v {
				return false
			}
			continue
		}
		lo, okLo := f.textLo[col]
		hi, okHi := f.textHi[col]
		if okLo && okHi && (v < lo || v > hi) {
			return false
		}
	}
	return true
}

// exactBoundLen: Iceberg's default metrics truncate string bounds to 16
// characters; a shorter bound is the exact minimum or maximum.
const exactBoundLen = 16

// snapshotFiles lists every data file of a snapshot with its statistics, once.
func (t *Table) snapshotFiles(ctx context.Context, tbl *table.Table, snapID int64) ([]plannedFile, error) {
	t.planMu.Lock()
	if files, ok := t.planCache[snapID]; ok {
		t.planMu.Unlock()
		return files, nil
	}
	t.planMu.Unlock()
	tasks, err := t.planTasks(ctx, tbl, snapID)
	if err != nil {
		return nil, err
	}
	described, err := t.describeFiles(tbl, tasks)
	if err != nil {
		return nil, err
	}
	sc := tbl.Schema()
	files := make([]plannedFile, len(described))
	byPath := map[string]iceberg.DataFile{}
	for _, task := range tasks {
		byPath[LocalPath(task.File.FilePath())] = task.File
	}
	for i, df := range described {
		pf := plannedFile{DataFile: df, textLo: map[string]string{}, textHi: map[string]string{}}
		f := byPath[df.Path]
		lo, hi := f.LowerBoundValues(), f.UpperBoundValues()
		for _, field := range sc.Fields() {
			if field.Type.String() != iceberg.PrimitiveTypes.String.String() {
				continue
			}
			l, h := lo[field.ID], hi[field.ID]
			if len(l) == 0 || len(h) == 0 || len(l) >= exactBoundLen || len(h) >= exactBoundLen {
				continue
			}
			pf.textLo[field.Name], pf.textHi[field.Name] = string(l), string(h)
		}
		files[i] = pf
	}
	t.planMu.Lock()
	if len(t.planCache) >= planCacheMax {
		clear(t.planCache)
	}
	t.planCache[snapID] = files
	t.planMu.Unlock()
	return files, nil
}

// LocalPath strips the file:// scheme of a warehouse location.
func LocalPath(loc string) string {
	if p, ok := strings.CutPrefix(loc, "file://"); ok {
		return p
	}
	return loc
}

func (t *Table) describeFiles(tbl *table.Table, tasks []table.FileScanTask) ([]DataFile, error) {
	sc := tbl.Schema()
	fromF, _ := sc.FindFieldByName("from")
	verF, _ := sc.FindFieldByName("version")
	specs := tbl.Metadata().PartitionSpecs()
	seen := map[string]bool{}
	var out []DataFile
	for _, task := range tasks {
		f := task.File
		if seen[f.FilePath()] {
			continue
		}
		seen[f.FilePath()] = true
		df := DataFile{Path: LocalPath(f.FilePath()), Records: f.Count(), SizeBytes: f.FileSizeBytes(), Partition: map[string]any{}}
		pv := f.Partition()
		for _, spec := range specs {
			if spec.ID() != int(f.SpecID()) {
				continue
			}
			for _, pf := range spec.Fields() {
				if v, ok := pv[pf.FieldID]; ok {
					df.Partition[pf.Name] = v
				}
			}
		}
		lo, hi := f.LowerBoundValues(), f.UpperBoundValues()
		var err error
		if df.FromMin, err = boundTime(fromF.Type, lo[fromF.ID]); err != nil {
			return nil, err
		}
		if df.FromMax, err = boundTime(fromF.Type, hi[fromF.ID]); err != nil {
			return nil, err
		}
		if df.VersionMin, err = boundVersion(verF.Type, lo[verF.ID]); err != nil {
			return nil, err
		}
		if df.VersionMax, err = boundVersion(verF.Type, hi[verF.ID]); err != nil {
			return nil, err
		}
		out = append(out, df)
	}
	return out, nil
}

func boundTime(typ iceberg.Type, b []byte) (*time.Time, error) {
	if len(b) == 0 {
		return nil, nil
	}
	lit, err := iceberg.LiteralFromBytes(typ, b)
	if err != nil {
		return nil, fmt.Errorf("decode from bound: %w", err)
	}
	tl, ok := lit.(iceberg.TypedLiteral[iceberg.Timestamp])
	if !ok {
		return nil, fmt.Errorf("decode from bound: literal %T", lit)
	}
	v := tl.Value().ToTime().UTC()
	return &v, nil
}

func boundVersion(typ iceberg.Type, b []byte) (*uint64, error) {
	if len(b) == 0 {
		return nil, nil
	}
	lit, err := iceberg.LiteralFromBytes(typ, b)
	if err != nil {
		return nil, fmt.Errorf("decode version bound: %w", err)
	}
	dl, ok := lit.(iceberg.TypedLiteral[iceberg.Decimal])
	if !ok {
		return nil, fmt.Errorf("decode version bound: literal %T", lit)
	}
	bi := dl.Value().Val.BigInt()
	if bi.Sign() < 0 || !bi.IsUint64() {
		return nil, fmt.Errorf("decode version bound: %s out of range", bi)
	}
	v := bi.Uint64()
	return &v, nil
}
