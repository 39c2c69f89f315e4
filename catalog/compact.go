package catalog

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/telemetry"
)

// Compaction rewrites a month's files in a partition — whatever their
// versions — into files sorted like the table, by merging them (each input is
// already sorted). Every version is kept (readings_versions, AsOf and
// AsKnownAt still need them), but not in one file: per resolution key (merge
// key + version_scope) the row of the highest version goes to the partition's
// current files, marked keys-unique, and the rows it supersedes to a
// superseded file, marked as superseded by those current files. The engine
// then reads a compacted month without resolution and, where no version or
// recorded_at ceiling applies, without the superseded file at all.
//
// A closed month (wholly below the watermark) is compacted once its late
// corrections have gone quiet. The open month — the one holding the
// watermark — is compacted as its days settle: archival commits a day only
// past the settlement lag, so its files below the watermark are as settled as
// a closed month's, and a month-long history would otherwise stay a pile of
// daily files (each holding every meter) until the month ends. Each run
// merges the month so far — the previous compaction's files and the days
// archived since — once OpenMonthFiles new files have come, bounding how often
// the month is rewritten; when the month ends it is a closed month like any
// other. The days archived after a compaction lie above the "from" bounds of
// its files (the watermark only moves forward), so they form runs of their own
// and the compacted files keep eliding.
//
// The files of a month are replaced in one commit that carries the watermark
// unchanged; a crash before it leaves the old files in force (the new ones are
// orphans, cleaned by DeleteOrphanFiles past its safety age).

// CompactStep names the points a crash test can stop a compaction at.
type CompactStep string

const (
	CompactDuringWrite CompactStep = "during-write" // the first rows are in the new files, which are still open
	CompactAfterWrite  CompactStep = "after-write"  // the new files are written and closed, the commit not yet made
	CompactAfterCommit CompactStep = "after-commit"
)

// Compaction defaults.
const (
	DefaultCompactTargetBytes = 128 << 20
	// compactRowGroupRows: a compacted file's row group ends at the first
	// malo_id boundary after this many rows — about five meter-months of two
	// quarter-hour channels. A read of one meter (malo_id = …) then decodes
	// the row group or two holding it, and the reader skips the others by
	// their malo_id bounds (the file is sorted by malo_id), where a row group
	// of RowGroupRows held some 44 meters' months and was decoded whole.
	// Smaller row groups, down to one meter-month each, do not read a meter
	// faster: DuckDB's reader skips row groups by their bounds (not pages by
	// the page index; for a meter the file holds, the malo_id bloom filter
	// rejects only row groups the bounds reject too), and its cost per row
	// group outweighs the rows it no longer decodes, while each row group
	// adds its statistics, page index and a bloom filter of at least 2 KiB
	// to the file.
	compactRowGroupRows = 32_768
	// compactRowGroups bounds a compacted file's row groups, and so its footer
	// state while it is written (see maxRowGroupsPerFile): about half a million
	// rows. A read of one meter keeps only the files whose malo_id bounds hold
	// it, and DuckDB visits every row group of those to skip it by its
	// bounds: in files of 64 row groups one meter's year of a 460-meter store
	// visited some 830 row groups to decode 14, in files of 16 some 210.
	// Files of 8 read one meter no faster and every file slower.
	compactRowGroups    = 16
	compactProgressRows = 100_000
	// DefaultOpenMonthFiles: the open month is compacted again once it holds
	// this many files its latest compaction did not write — about a week of
	// daily windows at two or three version files a day.
	DefaultOpenMonthFiles = 16
)

// ErrCompactionRaced: the files a compaction read were replaced meanwhile (by
// another compaction); its own files were removed and nothing was committed.
var ErrCompactionRaced = errors.New("the files being compacted were replaced by another compaction")

// CompactOptions tunes Compact. The zero value compacts every closed month
// that is not one compaction's output already, and the open month once it
// holds DefaultOpenMonthFiles files no compaction wrote.
type CompactOptions struct {
	// Month restricts compaction to the partitions of the month holding this
	// instant (UTC); zero means every month due.
	Month time.Time
	// TargetFileBytes: a compacted file is closed at the first malo_id boundary
	// after it holds this many bytes (≤ 0: DefaultCompactTargetBytes). Files
	// are also closed after compactRowGroups row groups.
	TargetFileBytes int64
	// QuietFor: a closed month is compacted only when its newest file that
	// no compaction wrote was committed at least this long ago (≤ 0: whatever
	// its age). The scheduler waits for late corrections to go quiet. It
	// does not apply to the open month, which archival adds a file to every
	// window: OpenMonthFiles bounds how often that one is rewritten.
	QuietFor time.Duration
	// OpenMonthFiles: the open month (the one holding the watermark) is
	// compacted once it holds this many files its latest compaction did not
	// write (0: DefaultOpenMonthFiles; < 0: the open month is left alone).
	OpenMonthFiles int
	// Now is the clock QuietFor is measured on (nil: time.Now).
	Now func() time.Time
	// Force rewrites months that are one compaction's output already.
	Force bool
	// DryRun only plans: the result lists the partitions that would be
	// compacted, and nothing is written.
	DryRun bool
	// Progress, when set, is called about every compactProgressRows merged
	// rows and when each partition is done.
	Progress func(CompactProgress)
	// Hook, for crash tests, is called at each CompactStep; an error stops the
	// compaction there, as a crash would (files already written stay, as
	// orphans).
	Hook func(CompactStep) error
}

// CompactProgress reports a compaction under way.
type CompactProgress struct {
	Partition string
	Index, Of int   // the partition's position among those compacted (1-based)
	Rows      int64 // merged so far
	Total     int64 // the partition's rows
	Done      bool
}

// CompactedPartition is what compaction did (or, dry, would do) to one partition.
type CompactedPartition struct {
	Partition    string
	Month        time.Time
	SnapshotID   int64 // 0 for a dry run
	FilesRemoved int
	FilesAdded   int
	Rows         int64
	Superseded   int64 // rows written to superseded files
	BytesBefore  int64
	BytesAfter   int64
}

// CompactResult describes a compaction run.
type CompactResult struct {
	Partitions []CompactedPartition
	Skipped    int // partitions left alone: compacted already, not quiet yet, the open month with too few new files, or no month below the watermark
}

// FilesRemoved is the total over the partitions.
func (r CompactResult) FilesRemoved() int {
	n := 0
	for _, p := range r.Partitions {
		n += p.FilesRemoved
	}
	return n
}

// FilesAdded is the total over the partitions.
func (r CompactResult) FilesAdded() int {
	n := 0
	for _, p := range r.Partitions {
		n += p.FilesAdded
	}
	return n
}

// Partition is one partition of the current snapshot, as maintenance sees it.
type Partition struct {
	Name  string    // e.g. "tenant=T1/from_month=2025-01"
	Month time.Time // first instant of the month (UTC); zero when the spec has no month field
	Files int
	Rows  int64
	Bytes int64
	// Closed: the month lies entirely below the watermark, so archival adds
	// nothing to it any more (only late corrections do).
	Closed bool
	// Open: the month holds the watermark — archival still adds its days.
	Open bool
	// Compacted: every file is the output of one compaction.
	Compacted bool
	// LastCompaction is the commit of the newest compaction output among the
	// files (nil when none).
	LastCompaction *time.Time
	// NewestUncompacted is the commit of the newest file no compaction wrote
	// (zero when every file is a compaction's output).
	NewestUncompacted time.Time

	tasks       []table.FileScanTask
	uncompacted int // files the latest compaction did not write
}

// Partitions lists the partitions of the current snapshot with their files,
// bytes and compaction state, oldest month first. It reads each file's footer
// marks once (cached by path).
func (t *Table) Partitions(ctx context.Context) (_ []Partition, err error) {
	defer t.explainObjectStore(&err)
	tbl := t.Iceberg()
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil, nil
	}
	// A table without a watermark has no closed month (its queries and
	// archival report ErrWatermarkMissing; its partitions are still listed).
	wm, err := t.watermarkFrom(ctx, tbl, snap)
	if err != nil && !errors.Is(err, ErrWatermarkMissing) {
		return nil, err
	}
	tasks, err := t.planTasks(ctx, tbl, snap.SnapshotID)
	if err != nil {
		return nil, err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("cold table %s: file system: %w", t.cfg.Name(), err)
	}
	committed := commitTimes(tbl)
	specs := map[int]iceberg.PartitionSpec{}
	for _, s := range tbl.Metadata().PartitionSpecs() {
		specs[s.ID()] = s
	}
	byName := map[string]*Partition{}
	type compaction struct {
		id string
		at time.Time
	}
	latest := map[string]compaction{} // per partition: the newest compaction among its files
	fileComp := make([]string, len(tasks))
	for i, task := range tasks {
		f := task.File
		name, month := partitionName(specs[int(f.SpecID())], f.Partition())
		p := byName[name]
		if p == nil {
			p = &Partition{Name: name, Month: month}
			p.Closed = !month.IsZero() && !wm.IsZero() && !month.AddDate(0, 1, 0).After(wm)
			p.Open = !month.IsZero() && !wm.IsZero() && !p.Closed && month.Before(wm)
			byName[name] = p
		}
		p.Files++
		p.Rows += f.Count()
		p.Bytes += f.FileSizeBytes()
		p.tasks = append(p.tasks, task)
		m, err := t.marksOf(fsys, f.FilePath())
		if err != nil {
			return nil, err
		}
		fileComp[i] = m.compaction
		at := committedAt(committed, task)
		if m.compaction != "" && (latest[name].id == "" || at.After(latest[name].at)) {
			latest[name] = compaction{m.compaction, at}
		}
	}
	for i, task := range tasks {
		name, _ := partitionName(specs[int(task.File.SpecID())], task.File.Partition())
		p := byName[name]
		if fileComp[i] != "" && fileComp[i] == latest[name].id {
			continue
		}
		p.uncompacted++
		if at := committedAt(committed, task); at.After(p.NewestUncompacted) {
			p.NewestUncompacted = at
		}
	}
	out := make([]Partition, 0, len(byName))
	for name, p := range byName {
		if c, ok := latest[name]; ok {
			at := c.at
			p.LastCompaction = &at
			p.Compacted = p.uncompacted == 0
		}
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Partition) int { return cmp.Or(a.Month.Compare(b.Month), cmp.Compare(a.Name, b.Name)) })
	return out, nil
}

// commitTimes maps each snapshot's sequence number to its commit time.
func commitTimes(tbl *table.Table) map[int64]time.Time {
	out := map[int64]time.Time{}
	for _, s := range tbl.Metadata().Snapshots() {
		out[s.SequenceNumber] = time.UnixMilli(s.TimestampMs).UTC()
	}
	return out
}

// committedAt is when the task's file was committed: the time of the snapshot
// of its data sequence number; the zero time when that snapshot is expired
// (and so older than any retention).
func committedAt(committed map[int64]time.Time, task table.FileScanTask) time.Time {
	if task.DataSequenceNumber == nil {
		return time.Time{}
	}
	return committed[*task.DataSequenceNumber]
}

// partitionName renders a partition as its path (field=value/…) and returns
// the first instant of its month, if the spec partitions by month.
func partitionName(spec iceberg.PartitionSpec, values map[int]any) (string, time.Time) {
	var parts []string
	var month time.Time
	for _, f := range spec.Fields() {
		v, ok := values[f.FieldID]
		human := "null"
		switch {
		case !ok || v == nil:
		case isMonth(f):
			if m, ok := v.(int32); ok {
				month = time.Date(1970+int(m)/12, time.Month(m%12+1), 1, 0, 0, 0, 0, time.UTC)
				human = month.Format("2006-01")
			} else {
				human = fmt.Sprint(v)
			}
		default:
			human = fmt.Sprint(v)
		}
		parts = append(parts, url.QueryEscape(f.Name)+"="+url.QueryEscape(human))
	}
	return strings.Join(parts, "/"), month
}

func isMonth(f iceberg.PartitionField) bool {
	_, ok := f.Transform.(iceberg.MonthTransform)
	return ok
}

// due reports whether compaction takes p.
func (p Partition) due(opt CompactOptions, now time.Time) bool {
	switch {
	case !p.Closed && !p.Open:
		return false
	case !opt.Month.IsZero() && !p.Month.Equal(monthOf(opt.Month)):
		return false
	case p.Compacted && !opt.Force:
		return false
	case p.Open:
		return opt.OpenMonthFiles >= 0 && (opt.Force || p.uncompacted >= cmp.Or(opt.OpenMonthFiles, DefaultOpenMonthFiles))
	case opt.QuietFor > 0 && now.Sub(p.NewestUncompacted) < opt.QuietFor:
		return false
	}
	return true
}

func monthOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// Compact compacts every due partition (see CompactOptions), oldest month
// first, each in its own commit. It is idempotent: a month that is one
// compaction's output is left alone, and a compaction interrupted before its
// commit changed nothing. Answers never change: the same rows, in files that
// prove more.
//
// Memory is bounded whatever the month holds: the inputs are read in batches
// (mergeBatchRows) and merged, and the output is written by the same bounded
// writer archival uses, with two files open per partition.
func (t *Table) Compact(ctx context.Context, opt CompactOptions) (compacted CompactResult, err error) {
	defer t.explainObjectStore(&err)
	if !opt.DryRun {
		defer t.recordRun(ctx, time.Now(), telemetry.Compaction, func(r *telemetry.Run) {
			r.FilesRemoved, r.FilesAdded = int64(compacted.FilesRemoved()), int64(compacted.FilesAdded())
			for _, p := range compacted.Partitions {
				r.Rows += p.Rows
			}
		}, &err)
	}
	if opt.TargetFileBytes <= 0 {
		opt.TargetFileBytes = DefaultCompactTargetBytes
	}
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	if err := t.Refresh(ctx); err != nil {
		return CompactResult{}, err
	}
	parts, err := t.Partitions(ctx)
	if err != nil {
		return CompactResult{}, err
	}
	var due []Partition
	var res CompactResult
	for _, p := range parts {
		if p.due(opt, now()) {
			due = append(due, p)
		} else {
			res.Skipped++
		}
	}
	for i, p := range due {
		if opt.DryRun {
			res.Partitions = append(res.Partitions, CompactedPartition{Partition: p.Name, Month: p.Month, FilesRemoved: p.Files, Rows: p.Rows, BytesBefore: p.Bytes})
			continue
		}
		done, err := t.compactPartition(ctx, p, opt, i+1, len(due))
		if err != nil {
			return res, fmt.Errorf("cold table %s: compact %s: %w", t.cfg.Name(), p.Name, err)
		}
		res.Partitions = append(res.Partitions, done)
	}
	if len(res.Partitions) > 0 && !opt.DryRun {
		if err := t.mergeManifests(ctx); err != nil {
			return res, err
		}
	}
	return res, nil
}

// mergeManifests merges the current snapshot's manifests when there are more
// than ManifestsToMerge: a rewrite does not merge them as an append does, and
// each compacted partition's commit adds its own, so a compaction of many
// months would leave planning to read one manifest per month until the next
// archival. The merge is an empty append carrying the unchanged watermark.
func (t *Table) mergeManifests(ctx context.Context) error {
	tbl := t.Iceberg()
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("cold table %s: file system: %w", t.cfg.Name(), err)
	}
	ms, err := snap.Manifests(fsys)
	if err != nil {
		return fmt.Errorf("cold table %s: manifests: %w", t.cfg.Name(), err)
	}
	if len(ms) <= ManifestsToMerge {
		return nil
	}
	_, err = t.commitUnderLease(ctx, "merge manifests", func(tbl *table.Table) (*table.Transaction, error) {
		wm, err := t.watermarkFrom(ctx, tbl, tbl.CurrentSnapshot())
		if err != nil {
			return nil, err
		}
		props := iceberg.Properties{}
		if !wm.IsZero() {
			props[WatermarkProperty] = formatWatermark(wm)
		}
		return t.stageFiles(ctx, tbl, "merge manifests", nil, props)
	})
	return err
}

func (o CompactOptions) hook(s CompactStep) error {
	if o.Hook == nil {
		return nil
	}
	if err := o.Hook(s); err != nil {
		return fmt.Errorf("stopped %s: %w", s, err)
	}
	return nil
}

// Compaction's file slots (fanout): a partition's current rows and the rows they supersede.
const (
	slotCurrent    = 0
	slotSuperseded = 1
)

// compactPartition merges p's files into new ones and commits the replacement.
func (t *Table) compactPartition(ctx context.Context, p Partition, opt CompactOptions, index, of int) (CompactedPartition, error) {
	out := CompactedPartition{Partition: p.Name, Month: p.Month, FilesRemoved: p.Files, BytesBefore: p.Bytes}
	tbl := t.Iceberg()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return out, fmt.Errorf("file system: %w", err)
	}
	fan, err := t.newFanout(ctx, tbl, fileBounds{versions: 2, rowGroups: compactRowGroups, footerRowGroups: 2 * compactRowGroups,
		targetBytes: opt.TargetFileBytes, maloBoundary: true, openRows: 2 * RowGroupRows, rowGroupRows: compactRowGroupRows})
	if err != nil {
		return out, err
	}
	w, err := t.watermarkFrom(ctx, tbl, tbl.CurrentSnapshot())
	if err != nil {
		return out, err
	}
	id := uuid.New().String()
	fan.footer = func(w *partWriter) map[string]string { return compactionMarks(id, w) }
	files, reaching, err := t.mergePartition(ctx, fsys, fan, p, opt, w, index, of, &out)
	if err != nil {
		fan.abort()
		return out, err
	}
	if err := opt.hook(CompactAfterWrite); err != nil {
		return out, err
	}
	remove := make([]iceberg.DataFile, len(p.tasks))
	for i, task := range p.tasks {
		remove[i] = task.File
	}
	var snap int64
	err = t.underHotHold(ctx, reaching, w, func(ctx context.Context) (err error) {
		snap, err = t.commitCompaction(ctx, id, remove, files)
		return err
	})
	if errors.Is(err, meterstore.ErrOverlap) || errors.Is(err, meterstore.ErrSecondOperator) {
		err = &ForeignIntervalError{Err: err} // refused before the commit
	}
	var refused *ForeignIntervalError
	if errors.Is(err, ErrCompactionRaced) || errors.As(err, &refused) {
		fan.abort() // never committed: the files are ours to remove
	}
	if err != nil {
		return out, err
	}
	out.SnapshotID, out.FilesAdded = snap, len(files)
	for _, f := range files {
		out.BytesAfter += f.FileSizeBytes()
	}
	if err := opt.hook(CompactAfterCommit); err != nil {
		return out, err
	}
	if opt.Progress != nil {
		opt.Progress(CompactProgress{Partition: p.Name, Index: index, Of: of, Rows: out.Rows, Total: p.Rows, Done: true})
	}
	return out, nil
}

// compactionMarks are the footer marks of a file the compaction id writes
// through w: current files hold one row per resolution key; a superseded file
// is superseded by the partition's current files opened so far — a
// superseded row is written right after the current row of its key, so that
// row is in one of them.
func compactionMarks(id string, w *partWriter) map[string]string {
	marks := map[string]string{MarkCompaction: id}
	switch w.slot {
	case slotCurrent:
		marks[MarkKeys] = MarkKeysUnique
	case slotSuperseded:
		if cur := w.part.bySlot[slotCurrent]; cur != nil {
			by, _ := json.Marshal(cur.paths)
			marks[MarkSupersededBy] = string(by)
		}
	}
	return marks
}

// mergePartition merges p's files into fan and closes it, checking that every
// row read is written exactly once. It returns the files and the rows whose
// intervals reach above the watermark w: no rule of this tier compares them
// with the hot tier's rows, and a writer outside MeterStore compared them with
// nothing, so the commit is held against PostgreSQL's (underHotHold).
func (t *Table) mergePartition(ctx context.Context, fsys iceio.IO, fan *fanout, p Partition, opt CompactOptions, w time.Time, index, of int, out *CompactedPartition) ([]iceberg.DataFile, []meterstore.Row, error) {
	var inputs []*mergeInput
	defer func() {
		for _, in := range inputs {
			in.close()
		}
	}()
	for _, task := range p.tasks {
		in, err := openMergeInput(ctx, t.cfg, fsys, task.File.FilePath())
		if err != nil {
			return nil, nil, err
		}
		inputs = append(inputs, in)
	}
	order := t.keyOrder()
	var reported int64
	hooked := false
	// The inputs are held to the rules the write paths enforce: files a
	// foreign writer (or a build before the rules) added may break them, and
	// compaction would otherwise mark their rows clean. Intervals of earlier
	// months reaching into this one are checked with it, as a write is
	// checked against every stored interval overlapping it.
	rules := t.newIntervalRules()
	if !p.Month.IsZero() {
		reaching, err := t.reachingInto(ctx, t.Iceberg(), p.Month)
		if err != nil {
			return nil, nil, err
		}
		rules.carry(reaching)
	}
	pairs := unitPairs{}
	var checked []offered
	var reaching []meterstore.Row
	err := mergeGroups(ctx, inputs, func(group []meterstore.Row) error {
		slices.SortFunc(group, order)
		checked = checked[:0]
		for i := range group {
			if err := pairs.check(&group[i]); err != nil {
				return fmt.Errorf("compact %s: %w", p.Name, err)
			}
			checked = append(checked, offered{&group[i], true})
			if rowEnd(&group[i]).After(w) {
				reaching = append(reaching, group[i])
			}
		}
		if err := rules.group(checked); err != nil {
			return fmt.Errorf("compact %s: %w", p.Name, err)
		}
		for i := 0; i < len(group); {
			j := i + 1
			for j < len(group) && t.sameResolutionKey(&group[i], &group[j]) {
				if group[j].Version == group[j-1].Version {
					r := &group[j]
					return fmt.Errorf("malo %s %s at %s version %d is stored twice: %w", r.MaloID, r.ObisCode, formatWatermark(r.From), r.Version, meterstore.ErrConflict)
				}
				j++
			}
			// The current row first, then the rows it supersedes (compactionMarks).
			if err := fan.add(&group[j-1], slotCurrent); err != nil {
				return err
			}
			for k := i; k < j-1; k++ {
				if err := fan.add(&group[k], slotSuperseded); err != nil {
					return err
				}
			}
			out.Rows += int64(j - i)
			out.Superseded += int64(j - 1 - i)
			i = j
		}
		if !hooked {
			hooked = true
			if err := opt.hook(CompactDuringWrite); err != nil {
				return err
			}
		}
		if opt.Progress != nil && out.Rows-reported >= compactProgressRows {
			reported = out.Rows
			opt.Progress(CompactProgress{Partition: p.Name, Index: index, Of: of, Rows: out.Rows, Total: p.Rows})
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	files, err := fan.close()
	if err != nil {
		return nil, nil, err
	}
	var written int64
	for _, f := range files {
		written += f.Count()
	}
	if out.Rows != p.Rows || written != p.Rows {
		return nil, nil, fmt.Errorf("merged %d rows into files holding %d, from files holding %d", out.Rows, written, p.Rows)
	}
	return files, reaching, nil
}

// keyOrder orders the rows of a merge group — they share malo_id, obis_code
// and from — by the rest of the resolution key, then by version.
func (t *Table) keyOrder() func(a, b meterstore.Row) int {
	byMelo := t.cfg.IdentifyByMelo()
	idents := t.identityIndexes()
	return func(a, b meterstore.Row) int {
		if byMelo {
			if c := compareOptional(a.MeloID, b.MeloID); c != 0 {
				return c
			}
		}
		for _, i := range idents {
			if c := compareOptional(extra(a, i), extra(b, i)); c != 0 {
				return c
			}
		}
		return cmp.Or(cmp.Compare(a.VersionScope, b.VersionScope), cmp.Compare(a.Version, b.Version))
	}
}

// sameResolutionKey compares two rows of a merge group on the rest of the
// resolution key (merge key + version_scope).
func (t *Table) sameResolutionKey(a, b *meterstore.Row) bool {
	if t.cfg.IdentifyByMelo() && compareOptional(a.MeloID, b.MeloID) != 0 {
		return false
	}
	for _, i := range t.identityIndexes() {
		if compareOptional(extra(*a, i), extra(*b, i)) != 0 {
			return false
		}
	}
	return a.VersionScope == b.VersionScope
}

func (t *Table) identityIndexes() []int {
	var out []int
	for i, c := range t.cfg.ExtraColumns() {
		if c.Kind == meterstore.Identity {
			out = append(out, i)
		}
	}
	return out
}

func extra(r meterstore.Row, i int) *string {
	if i < len(r.Extra) {
		return r.Extra[i]
	}
	return nil
}

// compareOptional orders NULL first, then by value.
func compareOptional(a, b *string) int {
	switch {
	case a != nil && b != nil:
		return cmp.Compare(*a, *b)
	case a == b:
		return 0
	case a == nil:
		return -1
	}
	return 1
}

// commitCompaction replaces remove with add in one commit that carries the
// current watermark unchanged (commitUnderLease); if the files being replaced
// are gone, ErrCompactionRaced.
func (t *Table) commitCompaction(ctx context.Context, id string, remove, add []iceberg.DataFile) (int64, error) {
	nt, err := t.commitUnderLease(ctx, "compact", func(tbl *table.Table) (*table.Transaction, error) {
		wm, err := t.watermarkFrom(ctx, tbl, tbl.CurrentSnapshot())
		if err != nil {
			return nil, err
		}
		props := iceberg.Properties{MarkCompaction: id}
		if !wm.IsZero() {
			props[WatermarkProperty] = formatWatermark(wm)
		}
		tx := tbl.NewTransaction()
		rw := tx.NewRewrite(props)
		for _, f := range remove {
			rw.DeleteFile(f)
		}
		for _, f := range add {
			rw.AddDataFile(f)
		}
		if err := rw.Commit(ctx); err != nil {
			// iceberg-go's own check that every file to delete is live.
			if strings.Contains(err.Error(), "do not belong to the table") {
				return nil, ErrCompactionRaced
			}
			return nil, fmt.Errorf("stage: %w", err)
		}
		return tx, nil
	})
	if err != nil {
		return 0, err
	}
	return nt.CurrentSnapshot().SnapshotID, nil
}
