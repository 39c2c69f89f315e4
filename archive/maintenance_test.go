package archive_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// The scheduler with compaction and orphan cleanup on: it archives, compacts
// a closed month once its newest file is quiet, re-compacts it after a late
// correction, deletes orphans past the safety age and spares younger files;
// every answer stays the oracle's.
func TestSchedulerCompactsAndCleans(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(31)
	w.MaLos, w.Tenants, w.Days = 3, 2, 6
	w.CorrectionRate = 0.3
	w.Start = time.Date(2025, time.October, 28, 12, 0, 0, 0, time.UTC)
	batch, err := w.Generate()
	require.NoError(t, err)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	s := storetest.Start(t, storetest.Options{Now: batch.Days[0].Time()}, cfg)
	tbl := s.Table()
	oracle := testkit.NewOracle(cfg)
	var originals []meterstore.Row
	var late []testkit.Delivery
	for i, d := range batch.Deliveries {
		if d.Kind == testkit.Correction && i%2 == 1 {
			late = append(late, d)
			continue
		}
		r, err := cfg.Encode(d.Series)
		require.NoError(t, err)
		originals = append(originals, r...)
		_, err = oracle.RecordDeliveries(d)
		require.NoError(t, err)
	}
	require.NotEmpty(t, late)
	_, err = tbl.Hot.Write(ctx, originals)
	require.NoError(t, err)
	l := loaded{s: s, tbl: tbl, oracle: oracle}
	now := time.Date(2025, time.November, 4, 0, 0, 0, 0, time.UTC).Add(cfg.SettlementLag())
	clock := func() time.Time { return now }

	notQuiet := archive.Maintenance(tbl.Archiver).Clock(clock).Compact(true, 24*time.Hour)
	var out archive.Outcome
	notQuiet.Report(func(o archive.Outcome, err error) { require.NoError(t, err); out = o })
	require.NoError(t, notQuiet.RunOnce(ctx))
	require.NotEmpty(t, out.Windows)
	require.Empty(t, out.Compacted, "October's files were committed just now")
	checkExactlyOnce(t, l)

	// Orphans of two ages need a file's modification time set back, which
	// only a local warehouse allows (an object store stamps its own).
	orphans := !s3test.OnS3()
	var old, fresh string
	sched := archive.Maintenance(tbl.Archiver).Clock(clock).Compact(true, time.Nanosecond)
	if orphans {
		data := filepath.Join(catalog.LocalPath(tbl.Cold.Iceberg().Location()), "data")
		old, fresh = filepath.Join(data, "old-orphan.parquet"), filepath.Join(data, "fresh-orphan.parquet")
		for _, f := range []string{old, fresh} {
			require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
		}
		hoursAgo := time.Now().Add(-3 * time.Hour)
		require.NoError(t, os.Chtimes(old, hoursAgo, hoursAgo))
		sched = sched.DeleteOrphans(2 * time.Hour)
	}
	sched.Report(func(o archive.Outcome, err error) { require.NoError(t, err); out = o })
	require.NoError(t, sched.RunOnce(ctx))
	require.Len(t, out.Compacted, 2, "the two tenants' October")
	if orphans {
		require.Contains(t, out.OrphansDeleted, old)
		require.NotContains(t, out.OrphansDeleted, fresh)
		_, err = os.Stat(fresh)
		require.NoError(t, err, "a file younger than the safety age stays")
	}
	checkExactlyOnce(t, l)

	require.NoError(t, sched.RunOnce(ctx))
	require.Empty(t, out.Compacted, "nothing new to compact")

	// A late correction into October: compacted again on the next run.
	for _, d := range late {
		rows, err := cfg.Encode(d.Series)
		require.NoError(t, err)
		_, err = tbl.Cold.AppendCold(ctx, rows)
		require.NoError(t, err)
	}
	_, err = oracle.RecordDeliveries(late...)
	require.NoError(t, err)
	require.NoError(t, sched.RunOnce(ctx))
	require.NotEmpty(t, out.Compacted)
	parts, err := tbl.Cold.Partitions(ctx)
	require.NoError(t, err)
	for _, p := range parts {
		require.Equal(t, p.Closed, p.Compacted, p.Name)
	}
	checkExactlyOnce(t, l)

	require.Error(t, archive.Maintenance(tbl.Archiver).DeleteOrphans(time.Minute).RunOnce(ctx), "a safety age under an hour is refused")
}
