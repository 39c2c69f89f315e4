package catalog

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"meterstore"
)

func TestExpireSnapshots(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, w := archivedTable(t, e)
	for i := 1; i <= 3; i++ {
		_, err := tb.CommitWindow(ctx, &SliceSource{}, w.Add(time.Duration(i)*24*time.Hour))
		require.NoError(t, err)
	}
	_, err := tb.ExpireSnapshots(ctx, 24*time.Hour, 2, false)
	require.ErrorIs(t, err, ErrRetentionTooShort)
	n, err := tb.ExpireSnapshots(ctx, DefaultRetention, DefaultMinSnapshots, false)
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = tb.ExpireSnapshots(ctx, 0, 2, true)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	got, err := tb.Watermark(ctx)
	require.NoError(t, err)
	require.True(t, got.Equal(w.Add(72*time.Hour)))
	require.Len(t, readAll(t, tb), 4*96)
}

func TestCompactionAndOrphansKeepRows(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, w := archivedTable(t, e)
	// Several small correction files in the same partition, at one version
	// (compaction never merges versions: TestCompactionKeepsVersionsApart).
	for i := 0; i < 3; i++ {
		_, err := tb.AppendCold(ctx, []meterstore.Row{
			mkRow(malos[i], opA, day0.Add(time.Duration(i)*time.Hour), "9.000001", 2, opA),
			mkRow(malos[3], opA, day0.Add(time.Duration(i)*time.Hour), "1.1", 2, opA),
		})
		require.NoError(t, err)
	}
	before := readAll(t, tb)
	filesBefore, _, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	require.Len(t, filesBefore, 4)

	// A planted orphan, old enough.
	orphan := filepath.Join(LocalPath(tb.Iceberg().Location()), "data", "stray.parquet")
	require.NoError(t, os.WriteFile(orphan, []byte("x"), 0o644))
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(orphan, old, old))

	res, err := tb.Compact(ctx, CompactOptions{})
	require.NoError(t, err)
	require.Equal(t, 3, res.FilesRemoved, "the version-2 files; the window's version-1 file stays")
	require.Equal(t, 1, res.FilesAdded)
	files, _, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	require.Len(t, files, 2)
	versions := map[uint64]int64{}
	for _, f := range files {
		checkFooter(t, f.Path)
		require.Equal(t, *f.VersionMin, *f.VersionMax)
		versions[*f.VersionMin] = f.Records
	}
	require.Equal(t, map[uint64]int64{1: 4 * 96, 2: 6}, versions)
	require.Equal(t, rowSet(before), rowSet(readAll(t, tb)), "compaction keeps the rows")
	got, err := tb.Watermark(ctx)
	require.NoError(t, err)
	require.True(t, got.Equal(w))
	snaps, _ := tb.Snapshots(ctx)
	require.NotNil(t, snaps[len(snaps)-1].Watermark, "compaction snapshot carries the watermark")

	// Orphan cleanup: the planted file goes; with the safety age, fresh files stay.
	gone, err := tb.DeleteOrphanFiles(ctx, 24*time.Hour, false)
	require.NoError(t, err)
	require.Contains(t, gone, orphan)
	_, err = os.Stat(orphan)
	require.True(t, os.IsNotExist(err))
	require.Equal(t, rowSet(before), rowSet(readAll(t, tb)), "orphan cleanup keeps the rows")
	// Old snapshots still readable after cleanup (their files are referenced).
	old0 := snaps[0].ID
	rows0, err := tb.ReadRows(ctx, PlanRequest{SnapshotID: &old0})
	require.NoError(t, err)
	require.Len(t, rows0, 4*96)
}

func TestCheckSchema(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	chk, err := tb.CheckSchema(e.cfg)
	require.NoError(t, err)
	require.Empty(t, chk.Changes)
	require.NoError(t, chk.Err())

	spec := e.cfg.Spec()
	spec.Columns = append(spec.Columns, meterstore.Column{Name: "note", Nullable: true})
	additive, err := spec.Build()
	require.NoError(t, err)
	chk, err = tb.CheckSchema(additive)
	require.NoError(t, err)
	require.True(t, chk.Safe())
	require.Len(t, chk.Changes, 1)

	spec = e.cfg.Spec()
	spec.Columns = append(spec.Columns, meterstore.Column{Name: "region", Kind: meterstore.Identity})
	spec.Columns[1].Nullable = false
	narrowing, err := spec.Build()
	require.NoError(t, err)
	chk, err = tb.CheckSchema(narrowing)
	require.NoError(t, err)
	require.False(t, chk.Safe())
	require.ErrorIs(t, chk.Err(), ErrUnsafeSchema)
	kinds := map[string]bool{}
	for _, c := range chk.Unsafe() {
		kinds[c.Kind] = true
	}
	require.True(t, kinds["required added"], chk.Err())
	require.True(t, kinds["new identity column"], chk.Err())
	t.Log(chk.Err())

	ok, why := promotable(IcebergType(meterstore.TypeDecimal18_6), IcebergType(meterstore.TypeDecimal20_0))
	require.False(t, ok, why)
}

func TestPurgeTable(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, _ := archivedTable(t, e)
	files, _, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	require.NoError(t, e.cat.PurgeTable(ctx, e.cfg))
	_, err = e.cat.Table(ctx, e.cfg)
	require.ErrorIs(t, err, ErrNoSuchTable)
	for _, f := range files {
		_, err := os.Stat(f.Path)
		require.True(t, os.IsNotExist(err), f.Path)
	}
	// Recreate after purge works.
	_, err = e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
}
