package catalog

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/testkit"
)

// fileRuns groups files into runs whose "from" bounds overlap, transitively
// (touching bounds count as overlapping, the conservative reading). It is the
// property the engine's elision rule needs stated independently: a run whose
// files all hold one and the same version needs no resolution.
func fileRuns(t *testing.T, files []DataFile) [][]DataFile {
	t.Helper()
	fs := slices.Clone(files)
	for _, f := range fs {
		require.NotNil(t, f.FromMin, f.Path)
		require.NotNil(t, f.FromMax, f.Path)
		require.NotNil(t, f.VersionMin, f.Path)
		require.NotNil(t, f.VersionMax, f.Path)
	}
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].FromMin.Before(*fs[j].FromMin) })
	var runs [][]DataFile
	for i := 0; i < len(fs); {
		run := []DataFile{fs[i]}
		end := *fs[i].FromMax
		j := i + 1
		for ; j < len(fs) && !fs[j].FromMin.After(end); j++ {
			run = append(run, fs[j])
			if fs[j].FromMax.After(end) {
				end = *fs[j].FromMax
			}
		}
		runs = append(runs, run)
		i = j
	}
	return runs
}

// runVersion is the single version every file of run holds, or false.
func runVersion(run []DataFile) (uint64, bool) {
	v := *run[0].VersionMin
	for _, f := range run {
		if *f.VersionMin != v || *f.VersionMax != v {
			return 0, false
		}
	}
	return v, true
}

// utcWindows splits rows into UTC-day archival windows (keyset-sorted each),
// in order, keyed by the window's start.
func utcWindows(rows []meterstore.Row) ([]time.Time, map[time.Time][]meterstore.Row) {
	byDay := map[time.Time][]meterstore.Row{}
	for _, r := range rows {
		d := r.From.UTC().Truncate(24 * time.Hour)
		byDay[d] = append(byDay[d], r)
	}
	days := slices.SortedFunc(func(yield func(time.Time) bool) {
		for d := range byDay {
			if !yield(d) {
				return
			}
		}
	}, time.Time.Compare)
	for _, d := range days {
		sortRowsKeyset(byDay[d])
	}
	return days, byDay
}

// realisticWorkload: 20 electricity MaLos × 2 channels × 3 Berlin balancing
// days in winter (UTC+1), each day delivered at its own version.
func realisticWorkload(t *testing.T, seed uint64, corrections float64) (meterstore.TableConfig, []meterstore.Row, []meterstore.Row) {
	t.Helper()
	w := testkit.NewWorkload(seed)
	w.MaLos, w.Days, w.Mix, w.ElectricityChannels = 20, 3, testkit.StromOnly, 2
	w.CorrectionRate = corrections
	w.Start = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	cfg, err := w.IntervalTable("readings_versions").Build()
	require.NoError(t, err)
	batch, err := w.Generate()
	require.NoError(t, err)
	var originals, corrected []meterstore.Row
	for _, d := range batch.Deliveries {
		rs, err := cfg.Encode(d.Series)
		require.NoError(t, err)
		switch d.Kind {
		case testkit.Original:
			originals = append(originals, rs...)
		case testkit.Correction:
			corrected = append(corrected, rs...)
		}
	}
	return cfg, originals, corrected
}

type windowCommit struct {
	start    time.Time
	res      CommitResult
	files    []DataFile // the files this window added
	oldFiles int        // files the one-file-per-partition writer would have written
}

// archiveWindows commits rows window by window and returns what each added.
func archiveWindows(t *testing.T, tb *Table, rows []meterstore.Row) []windowCommit {
	t.Helper()
	ctx := context.Background()
	days, byDay := utcWindows(rows)
	seen := map[string]bool{}
	var out []windowCommit
	for _, d := range days {
		res, err := tb.CommitWindow(ctx, &SliceSource{Rows: byDay[d], PageSize: 1000}, d.Add(24*time.Hour))
		require.NoError(t, err)
		files, _, err := tb.PlanFiles(ctx, PlanRequest{SnapshotID: &res.SnapshotID})
		require.NoError(t, err)
		wc := windowCommit{start: d, res: res}
		for _, f := range files {
			if !seen[f.Path] {
				seen[f.Path] = true
				wc.files = append(wc.files, f)
			}
		}
		require.Len(t, wc.files, res.Files)
		months := map[int32]bool{}
		for _, r := range byDay[d] {
			months[monthsSinceEpoch(r.From)] = true
		}
		wc.oldFiles = len(months)
		out = append(out, wc)
	}
	return out
}

// A realistic archival run: UTC-day windows over Berlin balancing days, each
// day at its own version. Every file holds one version, a window's files of
// different versions cover disjoint "from" ranges, and every run of
// overlapping files — over the whole table and over narrower plans — holds a
// single version, so the engine may skip resolution everywhere.
func TestWindowFilesAreVersionHomogeneous(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	cfg, rows, _ := realisticWorkload(t, 11, 0)
	tb, err := e.cat.CreateTable(ctx, cfg)
	require.NoError(t, err)
	windows := archiveWindows(t, tb, rows)
	require.Len(t, windows, 4, "Dec 31 23:00Z, then three UTC days")

	var before, after int
	for _, w := range windows {
		before += w.oldFiles
		after += len(w.files)
		t.Logf("window %s: %d rows, %d files (one per partition: %d)", w.start.Format(time.DateOnly), w.res.Rows, len(w.files), w.oldFiles)
		versions := map[uint64][]DataFile{}
		for _, f := range w.files {
			require.NotNil(t, f.VersionMin)
			require.NotNil(t, f.VersionMax)
			require.Equal(t, *f.VersionMin, *f.VersionMax, "%s holds versions %d..%d", f.Path, *f.VersionMin, *f.VersionMax)
			checkFooter(t, f.Path)
			versions[*f.VersionMin] = append(versions[*f.VersionMin], f)
		}
		for v1, a := range versions {
			for v2, b := range versions {
				if v1 == v2 {
					continue
				}
				for _, f := range a {
					for _, g := range b {
						disjoint := f.FromMax.Before(*g.FromMin) || g.FromMax.Before(*f.FromMin)
						require.True(t, disjoint, "version %d [%s, %s] and %d [%s, %s]", v1, f.FromMin, f.FromMax, v2, g.FromMin, g.FromMax)
					}
				}
			}
		}
	}
	// Dec 31 and Jan 3 hold one balancing day, Jan 1 and Jan 2 two.
	require.Equal(t, []int{1, 2, 2, 1}, []int{len(windows[0].files), len(windows[1].files), len(windows[2].files), len(windows[3].files)})
	t.Logf("files: %d one per partition → %d one per (partition, version)", before, after)

	plans := []PlanRequest{
		{},
		{From: time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC), To: time.Date(2025, 1, 2, 12, 0, 0, 0, time.UTC)},
		{Eq: map[string]string{"malo_id": rows[0].MaloID}},
	}
	for _, req := range plans {
		files, _, err := tb.PlanFiles(ctx, req)
		require.NoError(t, err)
		require.NotEmpty(t, files)
		for _, run := range fileRuns(t, files) {
			_, ok := runVersion(run)
			require.True(t, ok, "plan %+v: a run of %d files holds several versions", req, len(run))
		}
	}
	got, err := tb.ReadRows(ctx, PlanRequest{})
	require.NoError(t, err)
	require.Len(t, got, len(rows))
}

// With 1 % of the (MaLo, channel, day) groups restated at the next version in
// the same window, only the runs holding a restatement carry two versions;
// every other run stays single-version.
func TestCorrectionsDirtyOnlyTheirRuns(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	var cfg meterstore.TableConfig
	var rows, corr []meterstore.Row
	for seed := uint64(1); seed < 50 && len(corr) == 0; seed++ {
		cfg, rows, corr = realisticWorkload(t, seed, 0.01)
	}
	require.NotEmpty(t, corr, "a seed with a correction")
	restated := map[uint64]bool{}
	for _, r := range corr {
		restated[r.Version] = true
	}
	tb, err := e.cat.CreateTable(ctx, cfg)
	require.NoError(t, err)
	windows := archiveWindows(t, tb, append(slices.Clone(rows), corr...))
	for _, w := range windows {
		t.Logf("window %s: %d rows, %d files (one per partition: %d)", w.start.Format(time.DateOnly), w.res.Rows, len(w.files), w.oldFiles)
		for _, f := range w.files {
			require.Equal(t, *f.VersionMin, *f.VersionMax)
		}
	}
	files, _, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	var clean, dirty int
	for _, run := range fileRuns(t, files) {
		hasCorrection := false
		for _, f := range run {
			hasCorrection = hasCorrection || restated[*f.VersionMin]
		}
		_, single := runVersion(run)
		require.Equal(t, !hasCorrection, single, "a run is multi-version exactly when it holds a restatement")
		if single {
			clean++
		} else {
			dirty++
		}
	}
	t.Logf("%d correction rows (versions %v): %d clean runs, %d dirty", len(corr), slices.Sorted(func(yield func(uint64) bool) {
		for v := range restated {
			if !yield(v) {
				return
			}
		}
	}), clean, dirty)
	require.Positive(t, clean)
	require.Positive(t, dirty)
	got, err := tb.ReadRows(ctx, PlanRequest{})
	require.NoError(t, err)
	require.Len(t, got, len(rows)+len(corr))
}

// A write holding more versions per partition than MaxVersionFilesPerPartition
// opens that many files; the last takes every further version.
func TestVersionFanOutIsBounded(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, _ := archivedTable(t, e)
	n := MaxVersionFilesPerPartition + 3
	var rows []meterstore.Row
	for i := 0; i < n; i++ {
		// One reading per version, per MaLo: versions interleave in key order.
		for _, m := range malos {
			rows = append(rows, mkRow(m, opA, day0.Add(time.Duration(i)*15*time.Minute), fmt.Sprintf("%d.5", i), uint64(10+i), opA))
		}
	}
	sortKeyset(rows)
	_, err := tb.AppendCold(ctx, rows)
	require.NoError(t, err)
	files, _, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	require.Len(t, files, 1+MaxVersionFilesPerPartition)
	var multi int
	var records int64
	for _, f := range files {
		checkFooter(t, f.Path)
		records += f.Records
		if *f.VersionMin != *f.VersionMax {
			multi++
			require.EqualValues(t, 10+MaxVersionFilesPerPartition-1, *f.VersionMin)
			require.EqualValues(t, 10+n-1, *f.VersionMax)
		}
	}
	require.Equal(t, 1, multi, "only the last file holds several versions")
	require.EqualValues(t, 4*96+len(rows), records)
}
