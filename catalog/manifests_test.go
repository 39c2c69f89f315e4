package catalog

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

// manifestCount is the number of manifests the table's current snapshot lists.
func manifestCount(t *testing.T, tb *Table) int {
	t.Helper()
	tbl := tb.Iceberg()
	fsys, err := tbl.FS(context.Background())
	require.NoError(t, err)
	ms, err := tbl.CurrentSnapshot().Manifests(fsys)
	require.NoError(t, err)
	return len(ms)
}

// plannedState is what the planner knows of each file of the current snapshot
// beyond its path: the marks and field ids read through the data sequence
// number of the file's manifest entry, and the partitions' compaction state.
type plannedState struct {
	files map[string]DataFile
	parts map[string]Partition
}

func planState(t *testing.T, tb *Table) plannedState {
	t.Helper()
	files, _, err := tb.PlanFiles(context.Background(), PlanRequest{})
	require.NoError(t, err)
	s := plannedState{files: map[string]DataFile{}, parts: partitionsByName(t, tb)}
	for _, f := range files {
		f.TextBounds = nil
		s.files[f.Path] = f
	}
	for name, p := range s.parts {
		p.tasks = nil
		s.parts[name] = p
	}
	return s
}

// Daily archival, late cold appends, a compaction and the windows after it
// keep the current snapshot at no more than ManifestsToMerge manifests:
// appends merge them, so planning reads a bounded number of manifests
// whatever the number of commits. Merged entries keep their data sequence
// numbers, so the files' marks, field ids and the partitions' compaction state
// read the same before and after a merge, and so do the rows.
func TestManifestsDoNotGrowWithCommits(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	mw := newMonthWorkload(t, 7)
	tb, err := e.cat.CreateTable(ctx, mw.cfg)
	require.NoError(t, err)
	require.Equal(t, "true", tb.Iceberg().Properties()[table.ManifestMergeEnabledKey])

	commits := 0
	check := func(what string) {
		t.Helper()
		commits++
		require.LessOrEqual(t, manifestCount(t, tb), ManifestsToMerge, "%s (commit %d)", what, commits)
	}
	days, byDay := utcWindows(append(slices.Clone(mw.originals), mw.inWindow...))
	for _, d := range days {
		_, err := tb.CommitWindow(ctx, &SliceSource{Rows: byDay[d]}, d.Add(24*time.Hour))
		require.NoError(t, err)
		check("window " + d.Format(time.DateOnly))
	}
	for _, rows := range mw.late {
		_, err := tb.AppendCold(ctx, rows)
		require.NoError(t, err)
		check("cold append")
	}
	require.Greater(t, commits, 3*ManifestsToMerge)
	rows := readAll(t, tb)

	_, err = tb.Compact(ctx, CompactOptions{})
	require.NoError(t, err)
	check("compaction")
	compacted := planState(t, tb)
	marked := 0
	for _, f := range compacted.files {
		require.True(t, f.FieldIDs, f.Path)
		if f.KeysUnique || f.Superseded {
			marked++
		}
	}
	require.NotZero(t, marked, "the compacted months' files carry their marks")

	// Enough empty windows (the watermark advancing) to merge the
	// compaction's manifests with the rest.
	wm, err := tb.Watermark(ctx)
	require.NoError(t, err)
	for i := range ManifestsToMerge + 1 {
		_, err := tb.CommitWindow(ctx, &SliceSource{}, wm.Add(time.Duration(i+1)*24*time.Hour))
		require.NoError(t, err)
		check("empty window")
	}
	merged := planState(t, tb)
	require.Equal(t, compacted.files, merged.files, "marks and field ids survive the merge")
	for name, p := range compacted.parts {
		require.Equal(t, p, merged.parts[name], name)
	}
	require.Equal(t, rowSet(rows), rowSet(readAll(t, tb)))
}

// A table created before appends merged manifests gets the properties with its
// next commit.
func TestManifestMergingTurnedOnByTheNextCommit(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	tx := tb.Iceberg().NewTransaction()
	require.NoError(t, tx.RemoveProperties([]string{table.ManifestMergeEnabledKey, table.ManifestMinMergeCountKey}))
	nt, err := tx.Commit(ctx)
	require.NoError(t, err)
	tb.set(nt)
	require.NotEmpty(t, missingMergeProperties(tb.Iceberg()))

	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err = tb.CommitWindow(ctx, &SliceSource{Rows: genRows(start, 4, "t1", 1)}, start.Add(24*time.Hour))
	require.NoError(t, err)
	require.NoError(t, tb.Refresh(ctx))
	require.Empty(t, missingMergeProperties(tb.Iceberg()))
}

// Refresh keeps a handle that is current, and loads the commit another handle
// made.
func TestRefreshKeepsACurrentHandle(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	held := tb.Iceberg()
	require.NoError(t, tb.Refresh(ctx))
	require.Same(t, held, tb.Iceberg(), "nothing committed: the handle is kept")

	other, err := e.cat.Table(ctx, e.cfg)
	require.NoError(t, err)
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	res, err := other.CommitWindow(ctx, &SliceSource{Rows: genRows(start, 4, "t1", 1)}, start.Add(24*time.Hour))
	require.NoError(t, err)
	require.NoError(t, tb.Refresh(ctx))
	require.Equal(t, res.SnapshotID, tb.CurrentSnapshotID())
	require.Equal(t, other.Iceberg().MetadataLocation(), tb.Iceberg().MetadataLocation())
}

// A compaction of more months than ManifestsToMerge — a rewrite commit per
// month, which does not merge — ends merging the manifests it left, in an
// empty snapshot that keeps the watermark; every row and the months'
// compaction state are unchanged by the merge.
func TestCompactionOfManyMonthsMergesItsManifests(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	months := 2 * ManifestsToMerge
	for m := range months {
		day := time.Date(2024, time.January+time.Month(m), 1, 0, 0, 0, 0, time.UTC)
		_, err := tb.CommitWindow(ctx, &SliceSource{Rows: genRows(day, 4, "t1", uint64(m+1))}, day.Add(24*time.Hour))
		require.NoError(t, err)
	}
	wm := time.Date(2024, time.January+time.Month(months), 1, 0, 0, 0, 0, time.UTC)
	_, err = tb.CommitWindow(ctx, &SliceSource{}, wm)
	require.NoError(t, err)
	rows := readAll(t, tb)

	res, err := tb.Compact(ctx, CompactOptions{})
	require.NoError(t, err)
	require.Len(t, res.Partitions, months)
	require.LessOrEqual(t, manifestCount(t, tb), ManifestsToMerge)
	snaps, err := tb.Snapshots(ctx)
	require.NoError(t, err)
	last := snaps[len(snaps)-1]
	require.Equal(t, "append", last.Operation, "the merge's own snapshot")
	require.NotNil(t, last.Watermark)
	require.True(t, last.Watermark.Equal(wm))
	for name, p := range partitionsByName(t, tb) {
		require.True(t, p.Compacted, name)
	}
	require.Equal(t, rowSet(rows), rowSet(readAll(t, tb)))
	again, err := tb.Compact(ctx, CompactOptions{})
	require.NoError(t, err)
	require.Empty(t, again.Partitions)
}
