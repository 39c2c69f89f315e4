package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/testkit"
)

// monthWorkload is a month and a bit of daily archival for two tenants:
// January 2025 and the first days of February, each balancing day at its own
// version, with corrections — every second one archived in its window, the
// others arriving late as cold appends.
type monthWorkload struct {
	cfg                 meterstore.TableConfig
	originals, inWindow []meterstore.Row
	late                [][]meterstore.Row // one cold append each
}

// lateAppends is how many cold appends carry the late corrections.
const lateAppends = 3

func newMonthWorkload(t *testing.T, seed uint64) monthWorkload {
	t.Helper()
	w := testkit.NewWorkload(seed)
	w.MaLos, w.Days, w.Mix, w.ElectricityChannels, w.Tenants = 6, 34, testkit.StromOnly, 2, 2
	w.CorrectionRate = 0.3
	w.Start = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	cfg, err := w.IntervalTable("readings_versions").Build()
	require.NoError(t, err)
	batch, err := w.Generate()
	require.NoError(t, err)
	mw := monthWorkload{cfg: cfg}
	n := 0
	for _, d := range batch.Deliveries {
		rs, err := cfg.Encode(d.Series)
		require.NoError(t, err)
		switch {
		case d.Kind == testkit.Original:
			mw.originals = append(mw.originals, rs...)
		case d.Kind == testkit.Correction && n%2 == 0:
			mw.inWindow = append(mw.inWindow, rs...)
			n++
		case d.Kind == testkit.Correction:
			if len(mw.late) < lateAppends {
				mw.late = append(mw.late, nil)
			}
			mw.late[n/2%lateAppends] = append(mw.late[n/2%lateAppends], rs...)
			n++
		}
	}
	require.NotEmpty(t, mw.inWindow)
	require.NotEmpty(t, mw.late)
	return mw
}

// archive commits the originals and in-window corrections window by window,
// then the late corrections as cold appends.
func (mw monthWorkload) archive(t *testing.T, tb *Table) {
	t.Helper()
	ctx := context.Background()
	archiveWindows(t, tb, append(slices.Clone(mw.originals), mw.inWindow...))
	for _, rows := range mw.late {
		_, err := tb.AppendCold(ctx, rows)
		require.NoError(t, err)
	}
}

// resolutionKey renders a row's resolution key (the test table has no MeLo
// identification; tenant is its identity column).
func resolutionKey(r meterstore.Row) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s", r.MaloID, r.ObisCode, r.From.UTC().Format(time.RFC3339), *r.Extra[0], r.VersionScope)
}

// fileRows reads one data file.
func fileRows(t *testing.T, tb *Table, loc string) []meterstore.Row {
	t.Helper()
	ctx := context.Background()
	fsys, err := tb.Iceberg().FS(ctx)
	require.NoError(t, err)
	in, err := openMergeInput(ctx, tb.cfg, fsys, loc)
	require.NoError(t, err)
	defer in.close()
	var out []meterstore.Row
	for r := in.head(); r != nil; r = in.head() {
		out = append(out, *r)
		require.NoError(t, in.advance())
	}
	return out
}

func partitionsByName(t *testing.T, tb *Table) map[string]Partition {
	t.Helper()
	parts, err := tb.Partitions(context.Background())
	require.NoError(t, err)
	out := map[string]Partition{}
	for _, p := range parts {
		out[p.Name] = p
	}
	return out
}

// checkCompacted checks the files of a compacted partition: one current file
// (the month is small) holding the highest version of every resolution key of
// the partition, marked keys-unique, and at most one superseded file holding
// the other versions, each lower than its key's current one, marked as
// superseded by the current file.
func checkCompacted(t *testing.T, tb *Table, p Partition, all []meterstore.Row) {
	t.Helper()
	ctx := context.Background()
	fsys, err := tb.Iceberg().FS(ctx)
	require.NoError(t, err)
	highest := map[string]uint64{}
	rows := 0
	for _, r := range all {
		if p.Name != fmt.Sprintf("tenant=%s/from_month=%s", *r.Extra[0], r.From.UTC().Format("2006-01")) {
			continue
		}
		rows++
		highest[resolutionKey(r)] = max(highest[resolutionKey(r)], r.Version)
	}
	require.Positive(t, rows)
	var current []string
	var superseded []meterstore.Row
	var supersededBy []string
	for _, task := range p.tasks {
		loc := task.File.FilePath()
		checkFooter(t, loc)
		m, err := readMarks(fsys, loc, tb.Config())
		require.NoError(t, err)
		require.NotEmpty(t, m.compaction, loc)
		got := fileRows(t, tb, loc)
		if m.keysUnique {
			require.Nil(t, m.supersededBy)
			current = append(current, loc)
			seen := map[string]bool{}
			for _, r := range got {
				k := resolutionKey(r)
				require.False(t, seen[k], "%s repeats in a file marked keys-unique", k)
				seen[k] = true
				require.Equal(t, highest[k], r.Version, "%s: the current file holds the highest version", k)
			}
			require.Len(t, seen, len(highest))
			continue
		}
		require.NotNil(t, m.supersededBy, loc)
		supersededBy = m.supersededBy
		superseded = append(superseded, got...)
	}
	require.Len(t, current, 1)
	for _, r := range superseded {
		require.Less(t, r.Version, highest[resolutionKey(r)], "a superseded row has a higher version")
	}
	require.Equal(t, rows, len(highest)+len(superseded))
	if len(superseded) > 0 {
		require.Equal(t, current, supersededBy)
	}
}

// A closed month of daily files — two versions per window, in-window and late
// corrections, two tenants — is merged into one current file and one
// superseded file per partition, in one commit that keeps the watermark; the
// open month is left alone, a second run is a no-op, a late correction after
// it makes the month due again once quiet.
func TestCompactionMergesAMonth(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	mw := newMonthWorkload(t, 7)
	tb, err := e.cat.CreateTable(ctx, mw.cfg)
	require.NoError(t, err)
	mw.archive(t, tb)
	before := readAll(t, tb)
	wm, err := tb.Watermark(ctx)
	require.NoError(t, err)

	parts := partitionsByName(t, tb)
	require.Len(t, parts, 6, "Dec 31 (the first Berlin day starts at 23:00Z), January and February, two tenants each")
	jan := []string{"tenant=tenant01/from_month=2025-01", "tenant=tenant02/from_month=2025-01"}
	for _, name := range jan {
		p := parts[name]
		require.True(t, p.Closed, name)
		require.False(t, p.Compacted, name)
		require.Greater(t, p.Files, 31, "%s: a file per version, window and tenant", name)
	}
	feb := parts["tenant=tenant01/from_month=2025-02"]
	require.False(t, feb.Closed, "February is not below the watermark %s", wm)

	dry, err := tb.Compact(ctx, CompactOptions{DryRun: true})
	require.NoError(t, err)
	require.Len(t, dry.Partitions, 4, "two tenants' December and January")
	require.Equal(t, before, readAll(t, tb), "a dry run writes nothing")

	var progress []CompactProgress
	res, err := tb.Compact(ctx, CompactOptions{Progress: func(p CompactProgress) { progress = append(progress, p) }})
	require.NoError(t, err)
	require.Len(t, res.Partitions, 4)
	require.Equal(t, 2, res.Skipped, "February")
	require.NotEmpty(t, progress)
	require.True(t, progress[len(progress)-1].Done)

	all := append(slices.Clone(mw.originals), mw.inWindow...)
	for _, rows := range mw.late {
		all = append(all, rows...)
	}
	parts = partitionsByName(t, tb)
	for _, name := range jan {
		p := parts[name]
		require.True(t, p.Compacted, name)
		require.NotNil(t, p.LastCompaction, name)
		require.Equal(t, 2, p.Files, "%s: the current file and the superseded one", name)
		checkCompacted(t, tb, p, all)
	}
	require.Equal(t, feb.Files, parts["tenant=tenant01/from_month=2025-02"].Files, "the open month is left alone")
	require.Equal(t, rowSet(before), rowSet(readAll(t, tb)), "compaction keeps every row")
	got, err := tb.Watermark(ctx)
	require.NoError(t, err)
	require.True(t, got.Equal(wm))
	snaps, err := tb.Snapshots(ctx)
	require.NoError(t, err)
	last := snaps[len(snaps)-1]
	require.Equal(t, "replace", last.Operation)
	require.NotNil(t, last.Watermark, "the compaction's own snapshot carries the watermark")
	require.True(t, last.Watermark.Equal(wm))

	again, err := tb.Compact(ctx, CompactOptions{})
	require.NoError(t, err)
	require.Empty(t, again.Partitions, "a compacted month is not compacted again")

	// A late correction into January: the month is due again, once quiet.
	r := all[0]
	for _, x := range all {
		if x.From.Month() == time.January && x.From.Day() > 1 && resolutionKey(x) == resolutionKey(all[0]) {
			r = x
		}
	}
	late := r
	late.Version = r.Version + 100
	late.RecordedAt = r.RecordedAt.Add(time.Hour)
	late.Value = r.Value.Add(r.Value)
	_, err = tb.AppendCold(ctx, []meterstore.Row{late})
	require.NoError(t, err)
	all = append(all, late)
	name := fmt.Sprintf("tenant=%s/from_month=%s", *late.Extra[0], late.From.Format("2006-01"))
	p := partitionsByName(t, tb)[name]
	require.False(t, p.Compacted)
	require.Equal(t, 3, p.Files)
	now := time.Now()
	quiet, err := tb.Compact(ctx, CompactOptions{QuietFor: time.Hour, Now: func() time.Time { return now }})
	require.NoError(t, err)
	require.Empty(t, quiet.Partitions, "the late correction is not quiet yet")
	res, err = tb.Compact(ctx, CompactOptions{QuietFor: time.Hour, Now: func() time.Time { return now.Add(2 * time.Hour) }})
	require.NoError(t, err)
	require.Len(t, res.Partitions, 1)
	require.Equal(t, name, res.Partitions[0].Partition)
	checkCompacted(t, tb, partitionsByName(t, tb)[name], all)
	require.Equal(t, rowSet(append(before, late)), rowSet(readAll(t, tb)))
	checkPlannedMarks(t, tb, name)
}

// checkPlannedMarks checks what PlanFiles says of a compacted partition's
// files, then rewrites its current file out of band (the same rows, no
// marks): the superseded file no longer counts as superseded, the copy proves
// nothing.
func checkPlannedMarks(t *testing.T, tb *Table, name string) {
	t.Helper()
	ctx := context.Background()
	p := partitionsByName(t, tb)[name]
	month := p.Month
	req := PlanRequest{From: month, To: month.AddDate(0, 1, 0), Eq: map[string]string{"tenant": p.tasks[0].File.Partition()[firstPartitionID+1].(string)}} // tenant: the first identity column
	files, _, err := tb.PlanFiles(ctx, req)
	require.NoError(t, err)
	require.Len(t, files, 2)
	var current DataFile
	for _, f := range files {
		require.NotEqual(t, f.KeysUnique, f.Superseded, f.Path)
		require.Contains(t, f.TextBounds, "malo_id", "MaLo ids are shorter than the bound truncation")
		if f.KeysUnique {
			current = f
		}
	}
	loc := current.Path // a local path for a file warehouse, the object's URI on S3
	if !strings.Contains(loc, "://") {
		loc = "file://" + loc
	}
	rows := fileRows(t, tb, loc)
	copied, err := tb.writeFiles(ctx, tb.Iceberg(), rowPages(rows, 1000), defaultBounds)
	require.NoError(t, err)
	var old iceberg.DataFile
	for _, task := range p.tasks {
		if LocalPath(task.File.FilePath()) == current.Path {
			old = task.File
		}
	}
	tx := tb.Iceberg().NewTransaction()
	rw := tx.NewRewrite(iceberg.Properties{WatermarkProperty: formatWatermark(*mustWatermark(t, tb))})
	rw.DeleteFile(old)
	for _, f := range copied {
		rw.AddDataFile(f)
	}
	require.NoError(t, rw.Commit(ctx))
	_, err = tb.commitTx(ctx, tx, "out-of-band rewrite")
	require.NoError(t, err)
	files, _, err = tb.PlanFiles(ctx, req)
	require.NoError(t, err)
	for _, f := range files {
		require.False(t, f.Superseded, "%s: the file its mark names is gone", f.Path)
		if slices.ContainsFunc(copied, func(c iceberg.DataFile) bool { return LocalPath(c.FilePath()) == f.Path }) {
			require.False(t, f.KeysUnique, "a file without the mark proves nothing")
		}
	}
}

func mustWatermark(t *testing.T, tb *Table) *time.Time {
	t.Helper()
	w, err := tb.Watermark(context.Background())
	require.NoError(t, err)
	return &w
}

// writeFilePerMalo writes rows with one writer that closes a file at every
// malo_id boundary (targetBytes 1: each file is due after its first row
// group), a file per malo_id.
func writeFilePerMalo(t *testing.T, tb *Table, rows []meterstore.Row) []iceberg.DataFile {
	t.Helper()
	files, err := tb.writeFiles(context.Background(), tb.Iceberg(), rowPages(rows, 500), fileBounds{rowGroups: maxRowGroupsPerFile,
		footerRowGroups: maxFooterRowGroups, openRows: 700, targetBytes: 1, maloBoundary: true})
	require.NoError(t, err)
	require.Len(t, files, len(malos), "a file per malo_id: each is due after its first row group")
	return files
}

// A file due to close at its target size takes the rest of its malo_id first,
// so the files of a partition have disjoint malo_id bounds.
func TestFilesCloseAtMaloBoundaries(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	files := writeFilePerMalo(t, tb, genRows(day0, 2000, opA, 1))
	seen := map[string]bool{}
	for _, f := range files {
		got := fileRows(t, tb, f.FilePath())
		require.Equal(t, got[0].MaloID, got[len(got)-1].MaloID)
		require.False(t, seen[got[0].MaloID])
		seen[got[0].MaloID] = true
		require.Len(t, got, 2000)
	}
}

// The marks round-trip through the footer, and an empty superseded-by list
// proves nothing.
func TestMarksInTheFooter(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	for _, tc := range []struct {
		marks map[string]string
		want  fileMarks
	}{
		{nil, fileMarks{}},
		{map[string]string{MarkCompaction: "c1", MarkKeys: MarkKeysUnique}, fileMarks{compaction: "c1", keysUnique: true}},
		{map[string]string{MarkKeys: "maybe"}, fileMarks{}},
		{map[string]string{MarkSupersededBy: `["a","b"]`}, fileMarks{supersededBy: []string{"a", "b"}}},
		{map[string]string{MarkSupersededBy: `[]`}, fileMarks{}},
	} {
		f, err := tb.newFanout(ctx, tb.Iceberg(), defaultBounds)
		require.NoError(t, err)
		f.footer = func(*partWriter) map[string]string { return tc.marks }
		rows := genRows(day0, 4, opA, 1)
		for i := range rows {
			require.NoError(t, f.add(&rows[i], rows[i].Version))
		}
		files, err := f.close()
		require.NoError(t, err)
		fsys, err := tb.Iceberg().FS(ctx)
		require.NoError(t, err)
		got, err := readMarks(fsys, files[0].FilePath(), tb.Config())
		require.NoError(t, err)
		tc.want.fieldIDs = true         // the writer gives every column its field id,
		tc.want.namesAsIDs = true       // under its configured name and type,
		tc.want.holdsDay = true         // and every row its balancing day,
		tc.want.derivedDay = true       // derived by the encoder,
		tc.want.dayMarked = true        // which says so (MarkBalancingDay),
		tc.want.unitPairsChecked = true // and every row's unit pair, checked (MarkUnitPairs)
		require.Equal(t, tc.want, got, "%v", tc.marks)
		tb.planMu.Lock()
		remembered := tb.marks[files[0].FilePath()]
		tb.planMu.Unlock()
		require.Equal(t, got, remembered, "the marks known from the writing are the footer's")
	}
}
