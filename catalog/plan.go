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
	"golang.org/x/sync/errgroup"

	"github.com/meterstore/meterstore"
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
	// TextBounds are the exact minimum and maximum of the text columns whose
	// bounds are shorter than Iceberg's 16-character truncation (a truncated
	// upper bound is not the column's maximum); other columns are absent.
	TextBounds map[string][2]string
	// KeysUnique: the file's footer proves that no resolution key (merge key
	// + version_scope) occurs twice in it (MarkKeys), whatever its versions.
	KeysUnique bool
	// Superseded: the file's footer proves that every row of it has a row of
	// the same resolution key at a higher version in files all held by the
	// planned snapshot (MarkSupersededBy).
	Superseded bool
	// FieldIDs: every column of the file carries its Iceberg field id, so it
	// is read by id (a column renamed since is still found); a file without
	// them (added from outside, e.g. a migration's add_files) is read by name.
	// Read from the file's own footer, whoever committed it.
	FieldIDs bool
	// NamesAsIDs: read by column name, the file reads as by field id through
	// the table's configured columns — each of them once under its field id,
	// name and type, and no other column (this store's files, until a column
	// is renamed or added) — so it needs no field-id schema to be read.
	NamesAsIDs bool
	// BalancingDay: every row of the file holds the stored balancing_day
	// column and this store's encoder derived it (its footer proves both);
	// false for a file another writer added, with or without the column,
	// whose balancing day is then computed from "from".
	BalancingDay bool
	// UnderivedBalancingDay: the file holds a balancing_day column its footer
	// does not say this store's encoder derived (no MarkBalancingDay):
	// another writer's, read as computed, or a compaction's written before
	// the encoder derived the column. Their stored days are what
	// store.Table.BalancingDayMismatches reads of the cold tier.
	UnderivedBalancingDay bool
	// UncheckedUnitPairs: the file's footer does not prove every row's
	// (sparte, unit) pair allowed (no MarkUnitPairs): another writer's file,
	// an older encoder's, or one the encoder wrote holding a wrong pair. Their
	// pairs are what store.Table.UnitPairViolations reads of the cold tier.
	UncheckedUnitPairs bool
}

// storedField is the table's field of the configured column name, found by
// its field id — another engine may have renamed it; a column the
// configuration does not declare is found by its stored name.
func storedField(cfg meterstore.TableConfig, sc *iceberg.Schema, name string) (iceberg.NestedField, bool) {
	if i := cfg.ColumnIndex(name); i >= 0 {
		return sc.FindFieldByID(cfg.Columns()[i].FieldID)
	}
	return sc.FindFieldByName(name)
}

// storedName is the table's current name of the configured column name
// (itself where the table does not hold it).
func (t *Table) storedName(name string) string {
	if f, ok := storedField(t.cfg, t.Iceberg().Schema(), name); ok {
		return f.Name
	}
	return name
}

// configuredNames maps every field id of sc to the name the configuration
// gives it, or the stored name for a field it does not declare.
func configuredNames(cfg meterstore.TableConfig, sc *iceberg.Schema) map[int]string {
	out := map[int]string{}
	for _, f := range sc.Fields() {
		out[f.ID] = f.Name
	}
	for _, c := range cfg.Columns() {
		if _, ok := out[c.FieldID]; ok {
			out[c.FieldID] = c.Name
		}
	}
	return out
}

// planCacheMax bounds the snapshots whose file lists are kept.
const planCacheMax = 16

func (t *Table) rowFilter(from, to time.Time, eq map[string]string) (iceberg.BooleanExpression, error) {
	var preds []iceberg.BooleanExpression
	fromRef := iceberg.Reference(t.storedName("from"))
	if !from.IsZero() {
		preds = append(preds, iceberg.GreaterThanEqual(fromRef, iceberg.Timestamp(from.UnixMicro())))
	}
	if !to.IsZero() {
		preds = append(preds, iceberg.LessThan(fromRef, iceberg.Timestamp(to.UnixMicro())))
	}
	sc := t.Iceberg().Schema()
	for _, k := range slices.Sorted(maps.Keys(eq)) {
		if k == "from" || k == "to" {
			return nil, fmt.Errorf("plan: equality on %q is not supported; use the From/To range", k)
		}
		f, ok := storedField(t.cfg, sc, k)
		if !ok {
			return nil, fmt.Errorf("plan: table %s has no column %q", t.cfg.Name(), k)
		}
		preds = append(preds, iceberg.EqualTo(iceberg.Reference(f.Name), eq[k]))
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
func (t *Table) PlanFiles(ctx context.Context, req PlanRequest) (_ []DataFile, _ int64, err error) {
	defer t.explainObjectStore(&err)
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
		if _, ok := storedField(t.cfg, tbl.Schema(), k); !ok {
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

// SnapshotFileCount is the number of data files in a snapshot, the whole a
// plan's files were chosen from (so an EXPLAIN can say how many it pruned).
func (t *Table) SnapshotFileCount(ctx context.Context, snapID int64) (int, error) {
	files, err := t.snapshotFiles(ctx, t.Iceberg(), snapID)
	return len(files), err
}

// plannedFile is a DataFile as the snapshot's file list keeps it.
type plannedFile struct {
	DataFile
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
		if b, ok := f.TextBounds[col]; ok && (v < b[0] || v > b[1]) {
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
	names := configuredNames(t.cfg, sc)
	files := make([]plannedFile, len(described))
	byPath := map[string]table.FileScanTask{}
	for _, task := range tasks {
		byPath[LocalPath(task.File.FilePath())] = task
	}
	for i, df := range described {
		df.TextBounds = map[string][2]string{}
		f := byPath[df.Path].File
		lo, hi := f.LowerBoundValues(), f.UpperBoundValues()
		for _, field := range sc.Fields() {
			if field.Type.String() != iceberg.PrimitiveTypes.String.String() {
				continue
			}
			l, h := lo[field.ID], hi[field.ID]
			if len(l) == 0 || len(h) == 0 || len(l) >= exactBoundLen || len(h) >= exactBoundLen {
				continue
			}
			df.TextBounds[names[field.ID]] = [2]string{string(l), string(h)}
		}
		files[i] = plannedFile{DataFile: df}
	}
	if err := t.readFileMarks(ctx, tbl, files, byPath); err != nil {
		return nil, err
	}
	t.planMu.Lock()
	if len(t.planCache) >= planCacheMax {
		clear(t.planCache)
	}
	t.planCache[snapID] = files
	t.planMu.Unlock()
	return files, nil
}

// readFileMarks sets what each file's footer proves: whether it carries
// field ids and the stored balancing_day, for every file — another engine may
// have added any file, under any snapshot properties — and, for the files
// that may carry them (those a compaction snapshot added and those holding
// several versions, or not saying which), the compactor's marks. A
// superseded file counts as superseded only while every file its mark names
// is in the snapshot. Footers are read once per file (cached by path; the
// files this table writes are known from the footer it wrote), several at a
// time.
func (t *Table) readFileMarks(ctx context.Context, tbl *table.Table, files []plannedFile, tasks map[string]table.FileScanTask) error {
	compactions := map[int64]bool{}
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil {
			compactions[s.SequenceNumber] = s.Summary.Properties[MarkCompaction] != ""
		}
	}
	live := map[string]bool{}
	for _, task := range tasks {
		live[task.File.FilePath()] = true
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("cold table %s: file system: %w", t.cfg.Name(), err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(footerReaders)
	for i := range files {
		f := &files[i].DataFile
		task := tasks[f.Path]
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			m, err := t.marksOf(fsys, task.File.FilePath())
			if err != nil {
				return err
			}
			f.FieldIDs, f.NamesAsIDs, f.BalancingDay, f.UnderivedBalancingDay = m.fieldIDs, m.namesAsIDs, m.balancingDay(), m.underivedBalancingDay()
			f.UncheckedUnitPairs = !m.unitPairsChecked
			seq := task.DataSequenceNumber
			single := f.VersionMin != nil && f.VersionMax != nil && *f.VersionMin == *f.VersionMax
			if single && !(seq != nil && compactions[*seq]) {
				return nil
			}
			f.KeysUnique = m.keysUnique
			f.Superseded = m.supersededBy != nil
			for _, by := range m.supersededBy {
				f.Superseded = f.Superseded && live[by]
			}
			return nil
		})
	}
	return g.Wait()
}

// footerReaders bounds the footers read at once: on object storage each is
// a round trip.
const footerReaders = 8

// LocalPath strips the file:// scheme of a warehouse location.
func LocalPath(loc string) string {
	if p, ok := strings.CutPrefix(loc, "file://"); ok {
		return p
	}
	return loc
}

func (t *Table) describeFiles(tbl *table.Table, tasks []table.FileScanTask) ([]DataFile, error) {
	sc := tbl.Schema()
	fromF, _ := storedField(t.cfg, sc, "from")
	verF, _ := storedField(t.cfg, sc, "version")
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
