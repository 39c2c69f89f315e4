package catalog

import (
	"context"
	"fmt"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/testkit"
)

// resolved folds rows with testkit's oracle (independent of resolution.sql)
// and renders its winners for comparison.
func resolved(t *testing.T, cfg meterstore.TableConfig, rows []meterstore.Row, c testkit.Ceiling) []string {
	t.Helper()
	o := testkit.NewOracle(cfg)
	_, err := o.Record(rows...)
	require.NoError(t, err)
	var out []string
	for _, r := range o.With(c).Winners(time.Time{}, time.Time{}) {
		out = append(out, fmt.Sprintf("%s|%s|%s|%s|%d|%s|%s", r.MaloID, r.ObisCode, r.From.UTC().Format(time.RFC3339), *r.Extra[0], r.Version, r.VersionScope, r.Value))
	}
	return out
}

func knownAt(rows []meterstore.Row, at time.Time) []meterstore.Row {
	var out []meterstore.Row
	for _, r := range rows {
		if !r.RecordedAt.After(at) {
			out = append(out, r)
		}
	}
	return out
}

// Compaction and orphan cleanup leave every answer unchanged: the current
// resolved rows, each older snapshot's (AsOf), and AsKnownAt reconstructions —
// all checked against the oracle fed the rows as they were written.
func TestCompactionAndOrphansKeepAnswers(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	w := testkit.NewWorkload(5)
	w.MaLos, w.Days, w.Mix, w.ElectricityChannels, w.Tenants = 12, 3, testkit.StromOnly, 2, 2
	w.CorrectionRate = 0.3
	w.Start = time.Date(2024, 2, 28, 12, 0, 0, 0, time.UTC) // Berlin days crossing into March
	cfg, err := w.IntervalTable("readings_versions").Build()
	require.NoError(t, err)
	batch, err := w.Generate()
	require.NoError(t, err)

	days := map[time.Time][]meterstore.Row{}
	var corrections [][]meterstore.Row
	for _, d := range batch.Deliveries {
		rs, err := cfg.Encode(d.Series)
		require.NoError(t, err)
		switch d.Kind {
		case testkit.Original:
			days[rs[0].BalancingDay] = append(days[rs[0].BalancingDay], rs...)
		case testkit.Correction:
			corrections = append(corrections, rs)
		}
	}
	require.NotEmpty(t, corrections)

	tb, err := e.cat.CreateTable(ctx, cfg)
	require.NoError(t, err)
	var written []meterstore.Row
	type point struct {
		snap int64
		rows []meterstore.Row // what the snapshot holds
	}
	var history []point
	for _, day := range slices.SortedFunc(func(yield func(time.Time) bool) {
		for d := range days {
			if !yield(d) {
				return
			}
		}
	}, time.Time.Compare) {
		rows := days[day]
		sortRowsKeyset(rows)
		wm := rows[0].From
		for _, r := range rows {
			if r.From.After(wm) {
				wm = r.From
			}
		}
		res, err := tb.CommitWindow(ctx, &SliceSource{Rows: rows, PageSize: 500}, wm.Add(time.Hour))
		require.NoError(t, err)
		written = append(written, rows...)
		history = append(history, point{res.SnapshotID, slices.Clone(written)})
	}
	// Corrections as cold appends, a few per commit: small files to compact.
	for i := 0; i < len(corrections); i += 3 {
		var rows []meterstore.Row
		for _, c := range corrections[i:min(i+3, len(corrections))] {
			rows = append(rows, c...)
		}
		out, err := tb.AppendCold(ctx, rows)
		require.NoError(t, err)
		for _, o := range out {
			require.NotEqual(t, meterstore.Duplicate, o.Effect)
		}
		written = append(written, rows...)
		history = append(history, point{tb.CurrentSnapshotID(), slices.Clone(written)})
	}

	var instants []time.Time
	for _, r := range written {
		instants = append(instants, r.RecordedAt)
	}
	slices.SortFunc(instants, time.Time.Compare)
	instants = slices.Compact(instants)
	probe := []time.Time{instants[0], instants[len(instants)/3], instants[2*len(instants)/3], instants[len(instants)-1].Add(-time.Second)}

	answers := func() map[string][]string {
		out := map[string][]string{}
		cur, err := tb.ReadRows(ctx, PlanRequest{})
		require.NoError(t, err)
		out["current"] = resolved(t, cfg, cur, testkit.Ceiling{})
		for _, h := range history {
			id := h.snap
			rows, err := tb.ReadRows(ctx, PlanRequest{SnapshotID: &id})
			require.NoError(t, err)
			out[fmt.Sprintf("asof %d", id)] = resolved(t, cfg, rows, testkit.Ceiling{})
		}
		for _, at := range probe {
			out["known "+at.Format(time.RFC3339Nano)] = resolved(t, cfg, knownAt(cur, at), testkit.Ceiling{})
		}
		return out
	}

	// The oracle's answers from what was written.
	want := map[string][]string{"current": resolved(t, cfg, written, testkit.Ceiling{})}
	for _, h := range history {
		want[fmt.Sprintf("asof %d", h.snap)] = resolved(t, cfg, h.rows, testkit.Ceiling{})
	}
	for _, at := range probe {
		want["known "+at.Format(time.RFC3339Nano)] = resolved(t, cfg, written, testkit.Ceiling{KnownAt: at})
	}
	require.NotEqual(t, want["current"], want[fmt.Sprintf("asof %d", history[len(days)-1].snap)], "corrections change the answer")
	before := answers()
	require.Equal(t, want, before)

	filesBefore, _, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	orphan := strings.TrimSuffix(tb.Iceberg().Location(), "/") + "/data/stray.parquet"
	s3test.WriteFile(t, orphan, []byte("x"))
	res, err := tb.Compact(ctx, CompactOptions{})
	require.NoError(t, err)
	require.Positive(t, res.FilesRemoved())
	filesAfter, _, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	require.Less(t, len(filesAfter), len(filesBefore))
	for _, f := range filesAfter {
		checkFooter(t, f.Path)
	}
	t.Logf("compaction: %d → %d files (%d partitions compacted)", len(filesBefore), len(filesAfter), len(res.Partitions))

	afterCompact := answers()
	require.Equal(t, want, afterCompact, "compaction keeps every answer")
	gone, err := tb.DeleteOrphanFiles(ctx, 0, false)
	require.NoError(t, err)
	require.Contains(t, gone, LocalPath(orphan))
	require.Equal(t, want, answers(), "orphan cleanup keeps every answer")

	// Reopened from the catalog, the same.
	tb2, err := e.cat.Table(ctx, cfg)
	require.NoError(t, err)
	tb = tb2
	require.Equal(t, want, answers())
}
