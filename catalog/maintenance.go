package catalog

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"meterstore"
	"meterstore/internal/pglock"
)

// Snapshot-expiry defaults: retention is a compliance decision.
const (
	DefaultRetention       = 10 * 365 * 24 * time.Hour
	MinRetention           = DefaultRetention
	DefaultMinSnapshots    = 20
	DefaultOrphanSafetyAge = 3 * 24 * time.Hour
)

// ExpireSnapshots removes snapshots older than retention, keeping at least
// minKeep. A retention under ten years is refused unless allowShortRetention.
// Returns the number of snapshots removed.
func (t *Table) ExpireSnapshots(ctx context.Context, retention time.Duration, minKeep int, allowShortRetention bool) (int, error) {
	if retention < MinRetention && !allowShortRetention {
		return 0, fmt.Errorf("cold table %s: retention %s is shorter than %s: %w", t.cfg.Name(), retention, MinRetention, ErrRetentionTooShort)
	}
	if minKeep < 1 {
		minKeep = 1
	}
	if err := t.Refresh(ctx); err != nil {
		return 0, err
	}
	tbl := t.Iceberg()
	before := len(tbl.Metadata().Snapshots())
	tx := tbl.NewTransaction()
	if err := tx.ExpireSnapshots(table.WithRetainLast(minKeep), table.WithOlderThan(retention)); err != nil {
		return 0, fmt.Errorf("cold table %s: expire snapshots: %w", t.cfg.Name(), err)
	}
	nt, err := t.commitTx(ctx, tx, "expire snapshots")
	if err != nil {
		return 0, err
	}
	return before - len(nt.Metadata().Snapshots()), nil
}

// DeleteOrphanFiles deletes (or, with dryRun, lists) files under the table
// location that no snapshot references and that are older than olderThan —
// the safety age that spares files of commits in flight.
func (t *Table) DeleteOrphanFiles(ctx context.Context, olderThan time.Duration, dryRun bool) ([]string, error) {
	if err := t.Refresh(ctx); err != nil {
		return nil, err
	}
	res, err := t.Iceberg().DeleteOrphanFiles(ctx, table.WithFilesOlderThan(olderThan), table.WithDryRun(dryRun))
	if err != nil {
		return nil, fmt.Errorf("cold table %s: orphan cleanup: %w", t.cfg.Name(), err)
	}
	out := make([]string, len(res.OrphanFileLocations))
	for i, l := range res.OrphanFileLocations {
		out[i] = LocalPath(l)
	}
	sort.Strings(out)
	return out, nil
}

// CompactOptions tunes Compact.
type CompactOptions struct {
	// SmallFileBytes: files below this size are compaction candidates (default 64 MiB).
	SmallFileBytes int64
	// MinFiles: a partition is compacted when it has at least this many candidates (default 2).
	MinFiles int
}

// CompactResult describes a compaction.
type CompactResult struct {
	SnapshotID   int64
	Partitions   int
	FilesRemoved int
	FilesAdded   int
	Rows         int64
}

// Compact rewrites small files into sorted files, in ONE commit that carries
// the current watermark unchanged and every file property of the table. The
// rows are identical before and after. It holds the cold-append lease, so it
// never races a correction.
//
// Files are grouped by partition AND version: small files holding one
// version (statistics min = max) are merged only with files of that same
// version, so compaction never turns version-homogeneous files into a
// multi-version one — that would end elision for every run the new file
// overlaps (see MaxVersionFilesPerPartition). Files holding several versions
// (or lacking the statistic) — written before files were split by version,
// or a window's overflow file — are rewritten together with the partition's
// small single-version files whose version they may hold, and split by
// version on the way (bounded like a window: MaxVersionFilesPerPartition).
func (t *Table) Compact(ctx context.Context, opt CompactOptions) (CompactResult, error) {
	if opt.SmallFileBytes <= 0 {
		opt.SmallFileBytes = 64 << 20
	}
	if opt.MinFiles < 2 {
		opt.MinFiles = 2
	}
	if t.c.opt.Pool != nil {
		lease, err := pglock.Acquire(ctx, t.c.opt.Pool, LeaseName(t.cfg.Name()), ColdAppendLeaseWait)
		if err != nil {
			return CompactResult{}, fmt.Errorf("cold table %s: compact: %w", t.cfg.Name(), err)
		}
		defer lease.Release()
	}
	if err := t.Refresh(ctx); err != nil {
		return CompactResult{}, err
	}
	tbl := t.Iceberg()
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return CompactResult{}, nil
	}
	wm, err := t.watermarkFrom(ctx, tbl, snap)
	if err != nil {
		return CompactResult{}, err
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return CompactResult{}, fmt.Errorf("cold table %s: compact: plan: %w", t.cfg.Name(), err)
	}
	groups, err := compactionGroups(tbl, tasks, opt)
	if err != nil {
		return CompactResult{}, fmt.Errorf("cold table %s: compact: %w", t.cfg.Name(), err)
	}
	var res CompactResult
	var remove, add []iceberg.DataFile
	partitions := map[string]bool{}
	for _, g := range groups {
		rows, err := t.readTasks(ctx, tbl, g.tasks)
		if err != nil {
			return CompactResult{}, err
		}
		sortRowsKeyset(rows)
		var count int64
		for _, task := range g.tasks {
			count += task.File.Count()
			remove = append(remove, task.File)
		}
		if int64(len(rows)) != count {
			return CompactResult{}, fmt.Errorf("cold table %s: compact: read %d rows from files holding %d", t.cfg.Name(), len(rows), count)
		}
		files, err := t.writeFiles(ctx, tbl, rowPages(rows, 50_000), defaultBounds)
		if err != nil {
			return CompactResult{}, err
		}
		add = append(add, files...)
		partitions[g.partition] = true
		res.Rows += count
	}
	res.Partitions = len(partitions)
	if len(remove) == 0 {
		return res, nil
	}
	props := iceberg.Properties{}
	if !wm.IsZero() {
		props[WatermarkProperty] = formatWatermark(wm)
	}
	tx := tbl.NewTransaction()
	if err := tx.ReplaceDataFilesWithDataFiles(ctx, remove, add, props); err != nil {
		return CompactResult{}, fmt.Errorf("cold table %s: compact: stage: %w", t.cfg.Name(), err)
	}
	nt, err := t.commitTx(ctx, tx, "compact")
	if err != nil {
		return CompactResult{}, err
	}
	res.FilesRemoved, res.FilesAdded = len(remove), len(add)
	res.SnapshotID = nt.CurrentSnapshot().SnapshotID
	return res, nil
}

// compactGroup is a set of files rewritten together.
type compactGroup struct {
	partition string
	tasks     []table.FileScanTask
}

// compactionGroups picks the small files to rewrite, grouped by partition and
// version (see Compact), in a deterministic order.
func compactionGroups(tbl *table.Table, tasks []table.FileScanTask, opt CompactOptions) ([]compactGroup, error) {
	verF, ok := tbl.Schema().FindFieldByName("version")
	if !ok {
		return nil, fmt.Errorf("no version column")
	}
	type mixedFile struct {
		task   table.FileScanTask
		lo, hi *uint64 // nil = unknown: may hold any version
	}
	type partCands struct {
		single map[uint64][]table.FileScanTask
		mixed  []mixedFile
	}
	parts := map[string]*partCands{}
	for _, task := range tasks {
		if task.File.FileSizeBytes() >= opt.SmallFileBytes || len(task.DeleteFiles) > 0 {
			continue
		}
		key := partitionKey(task.File)
		p := parts[key]
		if p == nil {
			p = &partCands{single: map[uint64][]table.FileScanTask{}}
			parts[key] = p
		}
		lo, err := boundVersion(verF.Type, task.File.LowerBoundValues()[verF.ID])
		if err != nil {
			return nil, err
		}
		hi, err := boundVersion(verF.Type, task.File.UpperBoundValues()[verF.ID])
		if err != nil {
			return nil, err
		}
		if lo != nil && hi != nil && *lo == *hi {
			p.single[*lo] = append(p.single[*lo], task)
			continue
		}
		if lo == nil || hi == nil {
			lo, hi = nil, nil
		}
		p.mixed = append(p.mixed, mixedFile{task: task, lo: lo, hi: hi})
	}
	var out []compactGroup
	for _, key := range sortedKeys(parts) {
		p := parts[key]
		versions := slices.Sorted(maps.Keys(p.single))
		if len(p.mixed) > 0 {
			// The multi-version files, with the single-version files whose
			// version they may hold: rewritten together, split by version.
			g := compactGroup{partition: key}
			for _, m := range p.mixed {
				g.tasks = append(g.tasks, m.task)
			}
			rest := versions[:0:0]
			for _, v := range versions {
				absorbed := false
				for _, m := range p.mixed {
					if m.lo == nil || (*m.lo <= v && v <= *m.hi) {
						absorbed = true
						break
					}
				}
				if absorbed {
					g.tasks = append(g.tasks, p.single[v]...)
				} else {
					rest = append(rest, v)
				}
			}
			versions = rest
			if len(g.tasks) >= opt.MinFiles {
				out = append(out, g)
			}
		}
		for _, v := range versions {
			if len(p.single[v]) >= opt.MinFiles {
				out = append(out, compactGroup{partition: key, tasks: p.single[v]})
			}
		}
	}
	return out, nil
}

func partitionKey(f iceberg.DataFile) string {
	p := f.Partition()
	ids := make([]int, 0, len(p))
	for id := range p {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var b strings.Builder
	fmt.Fprintf(&b, "spec=%d", f.SpecID())
	for _, id := range ids {
		fmt.Fprintf(&b, "/%d=%v", id, p[id])
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SchemaChange is one difference between the configured and the stored schema.
type SchemaChange struct {
	Column string
	Kind   string // "add column", "drop column", "retype", "required added", "required relaxed", "rename", "new identity column", "identity column dropped"
	Detail string
	Safe   bool
}

func (c SchemaChange) String() string {
	s := "unsafe"
	if c.Safe {
		s = "safe"
	}
	return fmt.Sprintf("%s %s (%s): %s", s, c.Kind, c.Column, c.Detail)
}

// SchemaCheck compares the configured schema with the cold table's.
type SchemaCheck struct {
	Changes []SchemaChange
}

// Safe reports whether archival may proceed (no narrowing change).
func (s SchemaCheck) Safe() bool { return len(s.Unsafe()) == 0 }

// Unsafe lists the narrowing changes.
func (s SchemaCheck) Unsafe() []SchemaChange {
	var out []SchemaChange
	for _, c := range s.Changes {
		if !c.Safe {
			out = append(out, c)
		}
	}
	return out
}

// Err is nil when safe, else an error wrapping ErrUnsafeSchema listing each unsafe change.
func (s SchemaCheck) Err() error {
	u := s.Unsafe()
	if len(u) == 0 {
		return nil
	}
	parts := make([]string, len(u))
	for i, c := range u {
		parts[i] = c.String()
	}
	return fmt.Errorf("%w: %s", ErrUnsafeSchema, strings.Join(parts, "; "))
}

// CheckSchema compares cfg with the table's current schema and partition spec
// (as of the handle's state). Additive drift (a new nullable column, a relaxed
// NOT NULL, a widened decimal precision) is safe; a retype Iceberg cannot
// promote, a decimal scale change, a NOT NULL addition, a new or dropped
// identity column is not. The archiver quarantines the table on unsafe changes.
func (t *Table) CheckSchema(cfg meterstore.TableConfig) (SchemaCheck, error) {
	tbl := t.Iceberg()
	sc := tbl.Schema()
	var out SchemaCheck
	seen := map[int]bool{}
	for _, c := range cfg.Columns() {
		seen[c.FieldID] = true
		want := IcebergType(c.Type)
		f, ok := sc.FindFieldByID(c.FieldID)
		if !ok {
			out.Changes = append(out.Changes, SchemaChange{Column: c.Name, Kind: "add column", Safe: c.Nullable,
				Detail: fmt.Sprintf("%s, field id %d, %s", want, c.FieldID, nullability(c.Nullable))})
			if !c.Nullable {
				out.Changes[len(out.Changes)-1].Kind = "required added"
				out.Changes[len(out.Changes)-1].Detail += ": historical files hold no value for it"
			}
			continue
		}
		if f.Name != c.Name {
			out.Changes = append(out.Changes, SchemaChange{Column: c.Name, Kind: "rename", Safe: false,
				Detail: fmt.Sprintf("field id %d is %q in the table", c.FieldID, f.Name)})
		}
		if !f.Type.Equals(want) {
			safe, why := promotable(f.Type, want)
			out.Changes = append(out.Changes, SchemaChange{Column: c.Name, Kind: "retype", Safe: safe, Detail: fmt.Sprintf("%s → %s%s", f.Type, want, why)})
		}
		switch {
		case !f.Required && !c.Nullable:
			out.Changes = append(out.Changes, SchemaChange{Column: c.Name, Kind: "required added", Safe: false, Detail: "NOT NULL on a column historical rows may hold null in"})
		case f.Required && c.Nullable:
			out.Changes = append(out.Changes, SchemaChange{Column: c.Name, Kind: "required relaxed", Safe: true, Detail: "now nullable"})
		}
	}
	for _, f := range sc.Fields() {
		if !seen[f.ID] {
			out.Changes = append(out.Changes, SchemaChange{Column: f.Name, Kind: "drop column", Safe: !f.Required,
				Detail: fmt.Sprintf("field id %d is in the table but not configured (%s)", f.ID, nullability(!f.Required))})
		}
	}
	// Identity columns are the partition's identity fields.
	stored := map[string]bool{}
	spec := tbl.Spec()
	for _, pf := range spec.Fields() {
		if _, ok := pf.Transform.(iceberg.IdentityTransform); ok {
			if name, ok := sc.FindColumnName(pf.SourceID()); ok {
				stored[name] = true
			}
		}
	}
	want := map[string]bool{}
	for _, c := range cfg.IdentityColumns() {
		want[c.Name] = true
		if !stored[c.Name] {
			out.Changes = append(out.Changes, SchemaChange{Column: c.Name, Kind: "new identity column", Safe: false,
				Detail: "it changes what the same reading means for every stored row"})
		}
	}
	for name := range stored {
		if !want[name] {
			out.Changes = append(out.Changes, SchemaChange{Column: name, Kind: "identity column dropped", Safe: false,
				Detail: "readings of different " + name + " values would merge"})
		}
	}
	return out, nil
}

func nullability(nullable bool) string {
	if nullable {
		return "nullable"
	}
	return "NOT NULL"
}

// promotable follows Iceberg's promotion rules for the types we store.
func promotable(from, to iceberg.Type) (bool, string) {
	fd, ok1 := from.(iceberg.DecimalType)
	td, ok2 := to.(iceberg.DecimalType)
	if ok1 && ok2 {
		if fd.Scale() != td.Scale() {
			return false, ": decimal scale change"
		}
		if td.Precision() < fd.Precision() {
			return false, ": decimal precision narrowed"
		}
		return true, ""
	}
	return false, ": Iceberg cannot promote this type"
}
