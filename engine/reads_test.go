package engine_test

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// archivedStore is a store whose table holds the workload's originals, archived
// up to cut, with the corrections not yet delivered.
type archivedStore struct {
	s           *storetest.Store
	tbl         *storetest.Table
	cfg         meterstore.TableConfig
	oracle      *testkit.Oracle
	batch       testkit.Batch
	cut         time.Time
	corrections []testkit.Delivery
}

func newArchivedStore(t *testing.T, w testkit.Workload, extra ...meterstore.TableConfig) *archivedStore {
	t.Helper()
	return newArchivedStoreWith(t, w, storetest.Options{}, extra...)
}

// newArchivedStoreWith is newArchivedStore with the store's options (Now is
// the workload's first day).
func newArchivedStoreWith(t testing.TB, w testkit.Workload, opt storetest.Options, extra ...meterstore.TableConfig) *archivedStore {
	t.Helper()
	ctx := context.Background()
	batch, err := w.Generate()
	require.NoError(t, err)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	a := &archivedStore{cfg: cfg, oracle: testkit.NewOracle(cfg), batch: batch}
	opt.Now = batch.Days[0].Time()
	a.s = storetest.Start(t, opt, append([]meterstore.TableConfig{cfg}, extra...)...)
	a.tbl = a.s.Table("readings_versions")
	var originals []testkit.Delivery
	for _, d := range batch.Deliveries {
		if d.Kind == testkit.Correction {
			a.corrections = append(a.corrections, d)
		} else {
			originals = append(originals, d)
		}
	}
	ingest(t, a.tbl, originals)
	_, err = a.oracle.RecordDeliveries(originals...)
	require.NoError(t, err)
	last := batch.Days[len(batch.Days)-1]
	a.cut = last.AddDays(-2).Time()
	out, err := a.tbl.Archiver.Archive(ctx, a.cut.Add(cfg.SettlementLag()), 0)
	require.NoError(t, err)
	require.True(t, out.Watermark.Equal(a.cut), "watermark %s", out.Watermark)
	return a
}

func (a *archivedStore) deliverCorrections(t *testing.T) {
	t.Helper()
	ingest(t, a.tbl, a.corrections)
	_, err := a.oracle.RecordDeliveries(a.corrections...)
	require.NoError(t, err)
}

func querySum(t *testing.T, e *engine.Engine, q string, args ...any) (decimal.Decimal, *engine.Provenance) {
	t.Helper()
	res, err := e.Query(context.Background(), q, args...)
	require.NoError(t, err, q)
	return sumOf(t, res), res.Provenance
}

// failingHot is a hot tier that fails the test if anything reads PostgreSQL.
type failingHot struct {
	engine.HotTier
	t         *testing.T
	rowsBelow int64
}

func (f failingHot) Pages(req engine.HotScan) (engine.RowPages, error) {
	f.t.Errorf("PostgreSQL was read: %+v", req)
	return nil, errors.New("hot tier must not be read")
}

func (f failingHot) Detached(ctx context.Context) ([]engine.DetachedPartition, error) {
	f.t.Errorf("PostgreSQL was asked for detached partitions")
	return nil, errors.New("hot tier must not be read")
}

func (f failingHot) RowsBelow(ctx context.Context, w time.Time) (int64, error) {
	return f.rowsBelow, nil
}

// TestReproducibleReads: a settlement computed, a correction archived, and
// AsOf(old snapshot, ceiling) reproduces the first figure exactly while the
// current read gives the corrected one; AsKnownAt reconstructs the set of
// readings of an instant; Historical never touches PostgreSQL.
func TestReproducibleReads(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(21)
	w.MaLos, w.Tenants, w.CorrectionRate, w.GapRate = 6, 2, 0.2, 0.01
	a := newArchivedStore(t, w)
	eng := a.s.Engine
	all := time.Time{}

	// The settlement, computed on the cold tier.
	snap1 := a.tbl.Cold.CurrentSnapshotID()
	require.NotZero(t, snap1)
	committed1 := time.Now()
	settlement := `SELECT sum(value) FROM readings WHERE "from" < $1`
	first, prov := querySum(t, eng, settlement, a.cut)
	require.True(t, first.Equal(a.oracle.Sum(all, a.cut)), "engine %s oracle %s", first, a.oracle.Sum(all, a.cut))
	require.Equal(t, engine.Unified, prov.Mode)
	// The version ceiling: the versions of all but the last two days.
	ceiling := testkit.Version(a.batch.Days[2]).Uint64()
	firstCeiled := a.oracle.With(testkit.Ceiling{MaxVersion: ceiling}).Sum(all, a.cut)
	time.Sleep(5 * time.Millisecond)

	// Corrections arrive; those below the watermark are appended to Iceberg.
	a.deliverCorrections(t)
	snap2 := a.tbl.Cold.CurrentSnapshotID()
	require.NotEqual(t, snap1, snap2, "the corrections committed a new snapshot")
	current, _ := querySum(t, eng, settlement, a.cut)
	require.True(t, current.Equal(a.oracle.Sum(all, a.cut)))
	require.False(t, current.Equal(first), "the workload corrects days below the watermark")

	t.Run("as of the old snapshot", func(t *testing.T) {
		old := eng.AsOf(snap1, nil)
		got, prov := querySum(t, old, `SELECT sum(value) FROM readings`)
		require.True(t, got.Equal(first), "as-of %s first %s", got, first)
		require.Equal(t, engine.AsOfMode, prov.Mode)
		require.Equal(t, engine.Cold, prov.Tiers)
		require.Equal(t, []int64{snap1}, prov.SnapshotIDs)
		require.True(t, prov.Watermark.Equal(a.cut))
		// With a ceiling too.
		got, _ = querySum(t, eng.AsOf(snap1, &ceiling), `SELECT sum(value) FROM readings`)
		require.True(t, got.Equal(firstCeiled), "as-of ceiled %s want %s", got, firstCeiled)
	})
	t.Run("the ceiling on the new snapshot is enforced below the projection", func(t *testing.T) {
		pinned := eng.AsOf(snap2, &ceiling)
		want := a.oracle.With(testkit.Ceiling{MaxVersion: ceiling}).Sum(all, a.cut)
		got, prov := querySum(t, pinned, `SELECT sum(value) FROM readings`)
		require.True(t, got.Equal(want), "got %s want %s", got, want)
		require.Equal(t, ceiling, *prov.MaxVersion)
		// No statement can see past it: not the raw relation, not a subquery.
		res, err := pinned.Query(ctx, `SELECT max(version) FROM (SELECT * FROM readings_versions UNION ALL SELECT * FROM readings)`)
		require.NoError(t, err)
		require.LessOrEqual(t, decimalOf(t, res.Rows[0][0]).BigInt().Uint64(), ceiling)
		// Without the ceiling the new snapshot holds the corrections.
		got, _ = querySum(t, eng.AsOf(snap2, nil), `SELECT sum(value) FROM readings`)
		require.True(t, got.Equal(current))
	})
	t.Run("as of an instant", func(t *testing.T) {
		got, prov := querySum(t, eng.AsOfTime(committed1, nil), `SELECT sum(value) FROM readings`)
		require.True(t, got.Equal(first), "as-of-time %s first %s", got, first)
		require.Equal(t, []int64{snap1}, prov.SnapshotIDs)
		got, _ = querySum(t, eng.AsOfTime(time.Now(), nil), `SELECT sum(value) FROM readings`)
		require.True(t, got.Equal(current))
	})
	t.Run("unknown snapshot and an instant before the table are errors", func(t *testing.T) {
		_, err := eng.AsOf(snap2+12345, nil).Query(ctx, `SELECT sum(value) FROM readings`)
		require.ErrorIs(t, err, engine.ErrNoSnapshot)
		_, err = eng.AsOfTime(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), nil).Query(ctx, `SELECT count(*) FROM readings`)
		require.ErrorIs(t, err, engine.ErrNoSnapshot)
		_, err = eng.AsOf(0, nil).Query(ctx, `SELECT count(*) FROM readings`)
		require.ErrorIs(t, err, engine.ErrNoSnapshot)
	})
	t.Run("as known at", func(t *testing.T) {
		// Just before the first correction was recorded: the originals only.
		knownAt := a.corrections[0].Arrival
		for _, c := range a.corrections {
			if c.Arrival.Before(knownAt) {
				knownAt = c.Arrival
			}
		}
		knownAt = knownAt.Add(-time.Microsecond)
		then := eng.AsKnownAt(knownAt)
		want := a.oracle.With(testkit.Ceiling{KnownAt: knownAt}).Sum(all, all)
		got, prov := querySum(t, then, `SELECT sum(value) FROM readings`)
		require.True(t, got.Equal(want), "known-at %s want %s", got, want)
		require.False(t, got.Equal(a.oracle.Sum(all, all)), "the corrections are invisible")
		require.True(t, prov.SpansTiers(), "as-known-at reads both tiers")
		require.NotNil(t, prov.KnownAt)
		// The set of readings, not only the values: an instant inside the
		// workload's arrivals leaves out readings first stored after it.
		mid := a.batch.Deliveries[len(a.batch.Deliveries)/2].Arrival
		view := a.oracle.With(testkit.Ceiling{KnownAt: mid})
		res, err := eng.AsKnownAt(mid).Query(ctx, `SELECT count(*), sum(value) FROM readings`)
		require.NoError(t, err)
		require.EqualValues(t, view.RowCount(all, all), res.Rows[0][0])
		require.Less(t, view.RowCount(all, all), a.oracle.RowCount(all, all))
		require.True(t, view.Sum(all, all).Equal(decimalOf(t, res.Rows[0][1])))
	})
	t.Run("read modes", func(t *testing.T) {
		hist, err := eng.InReadMode(engine.Historical)
		require.NoError(t, err)
		got, prov := querySum(t, hist, `SELECT sum(value) FROM readings`)
		require.True(t, got.Equal(a.oracle.Sum(all, a.cut)))
		require.Equal(t, engine.Historical, prov.Mode)
		require.False(t, prov.TouchedHotTier())
		op, err := eng.InReadMode(engine.Operational)
		require.NoError(t, err)
		got, prov = querySum(t, op, `SELECT sum(value) FROM readings`)
		require.True(t, got.Equal(a.oracle.Sum(a.cut, all)))
		require.Equal(t, engine.Operational, prov.Mode)
		require.Equal(t, engine.Hot, prov.Tiers)
		got, prov = querySum(t, eng, `SELECT sum(value) FROM readings`)
		require.True(t, got.Equal(a.oracle.Sum(all, all)))
		require.Equal(t, engine.Unified, prov.Mode)
	})
	t.Run("historical and as-of never touch PostgreSQL", func(t *testing.T) {
		cold, err := engine.Open(ctx, engine.Config{Tables: []engine.Table{{Config: a.cfg,
			Hot: failingHot{HotTier: store.HotTierOf(a.tbl.Hot), t: t}, Cold: store.ColdTierOf(a.tbl.Cold)}}})
		require.NoError(t, err)
		defer cold.Close()
		hist, err := cold.InReadMode(engine.Historical)
		require.NoError(t, err)
		for _, q := range []string{`SELECT sum(value) FROM readings`, `SELECT sum(value) FROM readings_versions WHERE "from" >= '2099-01-01'`,
			`SELECT sum(a.value) FROM readings a JOIN readings b USING (malo_id, obis_code, "from", tenant)`} {
			_, prov := querySum(t, hist, q)
			require.False(t, prov.TouchedHotTier(), q)
		}
		got, _ := querySum(t, hist, `SELECT sum(value) FROM readings`)
		require.True(t, got.Equal(a.oracle.Sum(all, a.cut)))
		got, _ = querySum(t, cold.AsOf(snap1, nil), `SELECT sum(value) FROM readings`)
		require.True(t, got.Equal(first))
		// A scoped historical handle stays historical and scoped.
		sc, err := hist.Scoped("tenant", "tenant01")
		require.NoError(t, err)
		_, prov := querySum(t, sc, `SELECT sum(value) FROM readings`)
		require.Equal(t, engine.Historical, prov.Mode)
		require.Equal(t, []string{"tenant=tenant01"}, prov.Scope)
	})
}

func decimalOf(t *testing.T, v any) decimal.Decimal {
	t.Helper()
	switch x := v.(type) {
	case decimal.Decimal:
		return x
	case nil:
		return decimal.Zero
	}
	t.Fatalf("not a decimal: %T", v)
	return decimal.Zero
}

// TestSystemTables: snapshots of state, refreshed explicitly.
func TestSystemTables(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(5)
	w.MaLos, w.Days = 3, 4
	a := newArchivedStore(t, w)
	eng := a.s.Engine

	res, err := eng.Query(ctx, `SELECT count(*) FROM system.tables`)
	require.NoError(t, err)
	require.EqualValues(t, 0, res.Rows[0][0], "empty until refreshed")

	now := a.cut.Add(50 * time.Hour)
	require.NoError(t, eng.RefreshSystemTables(ctx, now))
	res, err = eng.Query(ctx, `SELECT "table", watermark, watermark_lag_seconds, invariant_violations, healthy FROM system.tables`)
	require.NoError(t, err)
	require.Len(t, res.Rows, 1)
	require.Equal(t, "readings", res.Rows[0][0])
	require.True(t, res.Rows[0][1].(time.Time).Equal(a.cut))
	require.EqualValues(t, 50*3600, res.Rows[0][2])
	require.EqualValues(t, 0, res.Rows[0][3])
	require.Equal(t, true, res.Rows[0][4])
	require.Zero(t, res.Provenance.Tiers, "system tables read no tier")

	res, err = eng.Query(ctx, `SELECT value FROM system.resolution WHERE setting = 'resolution_sql'`)
	require.NoError(t, err)
	require.Len(t, res.Rows, 1)
	require.Equal(t, a.cfg.ResolutionSQL(), res.Rows[0][0])

	res, err = eng.Query(ctx, `SELECT setting, value FROM system.config WHERE "table" = 'readings' ORDER BY 1`)
	require.NoError(t, err)
	cfgRows := map[string]any{}
	for _, r := range res.Rows {
		cfgRows[r[0].(string)] = r[1]
	}
	for _, k := range []string{"partition_step", "archival_step", "settlement_lag", "partition_step_matches_archival_step", "merge_key"} {
		require.Contains(t, cfgRows, k)
	}
	require.Equal(t, "true", cfgRows["partition_step_matches_archival_step"])

	snaps, err := a.tbl.Cold.Snapshots(ctx)
	require.NoError(t, err)
	res, err = eng.Query(ctx, `SELECT snapshot_id, committed_at, watermark FROM system.snapshots ORDER BY committed_at, snapshot_id`)
	require.NoError(t, err)
	require.Len(t, res.Rows, len(snaps))
	byID := map[int64]*time.Time{}
	for _, s := range snaps {
		byID[s.ID] = s.Watermark
	}
	for _, r := range res.Rows {
		wm, ok := byID[r[0].(int64)]
		require.True(t, ok)
		if wm == nil {
			require.Nil(t, r[2])
		} else {
			require.True(t, wm.Equal(r[2].(time.Time)))
		}
	}

	// Unhealthy: rows below the watermark still in PostgreSQL.
	bad2, err := engine.Open(ctx, engine.Config{Tables: []engine.Table{{Config: a.cfg,
		Hot: rowsBelowHot{HotTier: store.HotTierOf(a.tbl.Hot), n: 7}, Cold: store.ColdTierOf(a.tbl.Cold)}}})
	require.NoError(t, err)
	defer bad2.Close()
	require.NoError(t, bad2.RefreshSystemTables(ctx, now))
	res, err = bad2.Query(ctx, `SELECT invariant_violations, healthy FROM system.tables`)
	require.NoError(t, err)
	require.EqualValues(t, 7, res.Rows[0][0])
	require.Equal(t, false, res.Rows[0][1])

	// A confined handle sees the system tables too (refreshed into its database).
	sc, err := eng.Isolated("readings")
	require.NoError(t, err)
	res, err = sc.Query(ctx, `SELECT count(*) FROM system.tables`)
	require.NoError(t, err)
	require.EqualValues(t, 1, res.Rows[0][0])
	_, err = eng.Query(ctx, `SELECT * FROM system.duckdb_settings`)
	require.ErrorIs(t, err, engine.ErrNotAQuery)
}

type rowsBelowHot struct {
	engine.HotTier
	n int64
}

func (r rowsBelowHot) RowsBelow(ctx context.Context, w time.Time) (int64, error) { return r.n, nil }

// TestSeveralTables: one statement over two tables, per-table watermarks, and
// the scalar watermark as the oldest of the tables actually read.
func TestSeveralTables(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(9)
	w.MaLos, w.Days, w.Tenants = 4, 5, 2
	esa := w.IntervalTable("esa_typ2_versions").MustBuild()
	a := newArchivedStore(t, w, esa)
	esaTbl := a.s.Table("esa_typ2_versions")
	var originals []testkit.Delivery
	for _, d := range a.batch.Deliveries {
		if d.Kind != testkit.Correction {
			originals = append(originals, d)
		}
	}
	ingest(t, esaTbl, originals)
	esaCut := a.batch.Days[1].Time()
	out, err := esaTbl.Archiver.Archive(ctx, esaCut.Add(esa.SettlementLag()), 0)
	require.NoError(t, err)
	require.True(t, out.Watermark.Equal(esaCut))
	require.True(t, esaCut.Before(a.cut))
	eng := a.s.Engine
	all := time.Time{}

	res, err := eng.Query(ctx, `SELECT count(*), sum(r.value) + sum(e.value) FROM readings r JOIN esa_typ2 e USING (malo_id, obis_code, "from", tenant)`)
	require.NoError(t, err)
	require.EqualValues(t, a.oracle.RowCount(all, all), res.Rows[0][0])
	require.True(t, a.oracle.Sum(all, all).Mul(decimal.NewFromInt(2)).Equal(decimalOf(t, res.Rows[0][1])))
	p := res.Provenance
	require.Len(t, p.Watermarks, 2)
	require.True(t, p.Watermarks["readings"].Equal(a.cut))
	require.True(t, p.Watermarks["esa_typ2"].Equal(esaCut))
	require.True(t, p.Watermark.Equal(esaCut), "the oldest of the tables read")

	res, err = eng.Query(ctx, `SELECT count(*) FROM readings`)
	require.NoError(t, err)
	require.Equal(t, []string{"readings"}, keys(res.Provenance.Watermarks))
	require.True(t, res.Provenance.Watermark.Equal(a.cut), "esa_typ2 was not read")

	res, err = eng.Query(ctx, `SELECT (SELECT count(*) FROM esa_typ2) AS n, 1 AS one`)
	require.NoError(t, err)
	require.Equal(t, []string{"esa_typ2"}, keys(res.Provenance.Watermarks), "a table named only inside a subquery is read")
	require.True(t, res.Provenance.Watermark.Equal(esaCut))

	res, err = eng.Query(ctx, `SELECT 1`)
	require.NoError(t, err)
	require.Empty(t, res.Provenance.Watermarks)
	require.True(t, res.Provenance.Watermark.Equal(time.Unix(0, 0)), "a statement reading no table reports the epoch")

	// Catalog-wide scope: both sides carry their predicate.
	sc, err := eng.Scoped("tenant", "tenant01")
	require.NoError(t, err)
	res, err = sc.Query(ctx, `SELECT DISTINCT r.tenant, e.tenant FROM readings r, esa_typ2 e`)
	require.NoError(t, err)
	require.Equal(t, [][]any{{"tenant01", "tenant01"}}, res.Rows)
	// Isolation: the other table does not exist.
	iso, err := eng.Isolated("readings")
	require.NoError(t, err)
	_, err = iso.Query(ctx, `SELECT count(*) FROM esa_typ2`)
	require.ErrorIs(t, err, engine.ErrNotAQuery)
	// meter_completeness needs the table named when two could be meant.
	_, err = eng.Query(ctx, `SELECT * FROM meter_completeness('2025-10-23', '2025-10-24')`)
	require.ErrorContains(t, err, "name one")
	_, err = eng.Query(ctx, `SELECT * FROM meter_completeness('2025-10-23', '2025-10-24', 'esa_typ2')`)
	require.NoError(t, err)

	require.NoError(t, eng.RefreshSystemTables(ctx, time.Now()))
	res, err = eng.Query(ctx, `SELECT "table", watermark FROM system.tables ORDER BY 1`)
	require.NoError(t, err)
	require.Len(t, res.Rows, 2)
	res, err = iso.Query(ctx, `SELECT "table" FROM system.tables`)
	require.NoError(t, err)
	require.Equal(t, [][]any{{"readings"}}, res.Rows, "an isolated handle sees its own table's system rows")
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
