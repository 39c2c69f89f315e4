package proof

import (
	"errors"
	"fmt"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/testkit"
)

// compactionFixture is a week of deliveries across a month end (October 27 to
// November 3): originals and half the corrections arrive before archival, the
// other corrections after it, as late corrections into the closed October.
type compactionFixture struct {
	faultFixture
	inWindow, late []testkit.Delivery
	end            time.Time // end of the last balancing day
}

func newCompactionFixture(t testing.TB, seed uint64) compactionFixture {
	t.Helper()
	return newCompactionFixtureAt(t, seed, time.Date(2025, time.October, 27, 12, 0, 0, 0, time.UTC), 8)
}

// newCompactionFixtureAt is a compaction fixture of days balancing days from start.
func newCompactionFixtureAt(t testing.TB, seed uint64, start time.Time, days int) compactionFixture {
	t.Helper()
	w := testkit.NewWorkload(seed)
	w.MaLos, w.Days, w.Mix = 4, days, testkit.StromOnly
	w.CorrectionRate, w.RedeliveryRate = 0.3, 0.1
	w.Start = start
	b, err := w.Generate()
	require.NoError(t, err)
	f := compactionFixture{faultFixture: faultFixture{cfg: w.IntervalTable("readings_versions").MustBuild(), batch: b}}
	for i, d := range b.Deliveries {
		switch {
		case d.Kind != testkit.Correction:
			f.originals = append(f.originals, d)
		case i%2 == 0:
			f.inWindow = append(f.inWindow, d)
		default:
			f.late = append(f.late, d)
		}
		f.corrections = append(f.corrections, d)
	}
	require.NotEmpty(t, f.inWindow)
	require.NotEmpty(t, f.late)
	f.first, _ = metering.DayBounds(b.Days[0], metering.SparteStrom)
	_, f.end = metering.DayBounds(b.Days[len(b.Days)-1], metering.SparteStrom)
	return f
}

// load writes the fixture: originals and in-window corrections, archival of
// every settled window, then the late corrections. It returns the snapshot
// before the late corrections and the oracle of what it holds.
func (f compactionFixture) load(t testing.TB, e *env, o *testkit.Oracle) (int64, *testkit.Oracle) {
	t.Helper()
	e.appendAll(t, o, f.originals)
	e.appendAll(t, o, f.inWindow)
	e.now = archiveNow(f.cfg, f.end)
	_, err := e.table(t).Archive(e.ctx, e.now, 0)
	require.NoError(t, err)
	pre := e.table(t).Cold().CurrentSnapshotID()
	before := testkit.NewOracle(f.cfg)
	_, err = before.RecordDeliveries(append(append([]testkit.Delivery{}, f.originals...), f.inWindow...)...)
	require.NoError(t, err)
	out := e.appendAll(t, o, f.late)
	require.True(t, out.HadLateCorrections())
	return pre, before
}

// sumCount runs SELECT count(*), sum(value) on eng.
func sumCount(t testing.TB, e *env, eng *engine.Engine, rel string) string {
	t.Helper()
	res, err := eng.Query(e.ctx, `SELECT count(*), sum(value) FROM `+rel)
	require.NoError(t, err)
	return fmt.Sprintf("%d rows, sum %s", asInt(t, res.Rows[0][0]), asDec(t, res.Rows[0][1]))
}

// oracleSumCount is the oracle's count and sum of readings with "from" before
// to (zero: all).
func oracleSumCount(v testkit.View, to time.Time) string {
	return fmt.Sprintf("%d rows, sum %s", v.RowCount(time.Time{}, to), v.Sum(time.Time{}, to))
}

// scopedAnswers are the answers of the scoped reads, each checked against the
// oracle: as of the snapshot pre (whose oracle is then; an as-of read is of the
// cold tier, below the watermark), and as known at several instants.
func scopedAnswers(t testing.TB, e *env, o, then *testkit.Oracle, pre int64, label string) {
	t.Helper()
	eng := e.cur.st.Engine()
	res := e.cfgs[0].ResolvedName()
	w, err := e.table(t).Cold().WatermarkAt(e.ctx, pre)
	require.NoError(t, err)
	require.Equal(t, oracleSumCount(then.Current(), w), sumCount(t, e, eng.AsOf(pre, nil), res), "%s: as of the snapshot before the late corrections", label)
	var recorded []time.Time
	for _, r := range o.Current().Versions(time.Time{}, time.Time{}) {
		recorded = append(recorded, r.RecordedAt)
	}
	for _, at := range []time.Time{recorded[0], recorded[len(recorded)/2], recorded[len(recorded)-1]} {
		require.Equal(t, oracleSumCount(o.With(testkit.Ceiling{KnownAt: at}), time.Time{}), sumCount(t, e, eng.AsKnownAt(at), res),
			"%s: as known at %s", label, at.Format(time.RFC3339))
	}
}

// Compaction of a closed month holding several versions and late corrections
// changes no answer — readings, readings_versions, as of the snapshot before
// it, as known at — and orphan cleanup keeps them too; as-of reads of the
// pre-compaction snapshot work until that snapshot expires.
func TestCompactionKeepsAnswers(t *testing.T) {
	f := newCompactionFixture(t, 0xC0A1)
	o := testkit.NewOracle(f.cfg)
	e := newEnv(t, f.first, f.cfg)
	pre, then := f.load(t, e, o)
	agree(t, e, o, "before compaction")
	scopedAnswers(t, e, o, then, pre, "before compaction")
	cold := e.table(t).Cold()
	beforeCompaction := cold.CurrentSnapshotID()
	planned, _, err := cold.PlanFiles(e.ctx, catalog.PlanRequest{})
	require.NoError(t, err)

	res, err := cold.Compact(e.ctx, catalog.CompactOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, res.Partitions, "October is closed")
	after, _, err := cold.PlanFiles(e.ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	require.Less(t, len(after), len(planned))
	t.Logf("compaction: %d → %d files, %d rows superseded", len(planned), len(after), res.Partitions[0].Superseded)
	agree(t, e, o, "after compaction")
	scopedAnswers(t, e, o, then, pre, "after compaction")
	require.Equal(t, oracleSumCount(o.Current(), e.watermark(t)), sumCount(t, e, e.cur.st.Engine().AsOf(beforeCompaction, nil), f.cfg.ResolvedName()),
		"as of the snapshot just before compaction")

	// Orphan cleanup spares the files of unexpired snapshots.
	_, err = cold.DeleteOrphanFiles(e.ctx, 0, false)
	require.NoError(t, err)
	agree(t, e, o, "after orphan cleanup")
	scopedAnswers(t, e, o, then, pre, "after orphan cleanup")

	// Until expiry, then no more.
	n, err := cold.ExpireSnapshots(e.ctx, 0, 1, true)
	require.NoError(t, err)
	require.Positive(t, n)
	_, err = cold.DeleteOrphanFiles(e.ctx, 0, false)
	require.NoError(t, err)
	current := map[string]bool{}
	for _, f := range after {
		current[f.Path] = true
	}
	for _, p := range planned {
		if !current[p.Path] {
			require.False(t, s3test.Exists(t, p.Path), "%s: only expired snapshots held it (expiry deletes their files)", p.Path)
		}
	}
	_, err = e.cur.st.Engine().AsOf(pre, nil).Query(e.ctx, `SELECT count(*) FROM `+f.cfg.ResolvedName())
	require.ErrorIs(t, err, engine.ErrNoSnapshot)
	agree(t, e, o, "after expiry and orphan cleanup")
}

// TestCrashDuringCompaction stops compaction at every step (and at the catalog
// commit itself), restarts a new store over the same database and warehouse,
// and checks: every answer unchanged right after the crash, compaction then
// completes, orphan cleanup reclaims what the crash left, answers unchanged.
func TestCrashDuringCompaction(t *testing.T) {
	for _, step := range []string{string(catalog.CompactDuringWrite), string(catalog.CompactAfterWrite), "catalog-commit", string(catalog.CompactAfterCommit)} {
		t.Run(step, func(t *testing.T) {
			f := newCompactionFixture(t, 0xC0A2)
			o := testkit.NewOracle(f.cfg)
			e := newEnv(t, f.first, f.cfg)
			pre, then := f.load(t, e, o)
			cold := e.table(t).Cold()
			opt := catalog.CompactOptions{Hook: func(s catalog.CompactStep) error {
				if string(s) == step {
					return errCrash
				}
				return nil
			}}
			if step == "catalog-commit" {
				e.compactCrash.Store(true)
				opt.Hook = nil
			}
			_, err := cold.Compact(e.ctx, opt)
			require.ErrorIs(t, err, errCrash)
			agree(t, e, o, "after a crash at "+step)
			scopedAnswers(t, e, o, then, pre, "after a crash at "+step)

			e.restart(t)
			cold = e.table(t).Cold()
			require.NoError(t, cold.Refresh(e.ctx))
			res, err := cold.Compact(e.ctx, catalog.CompactOptions{})
			require.NoError(t, err)
			if step == string(catalog.CompactAfterCommit) {
				require.Empty(t, res.Partitions, "the interrupted run committed: nothing left to do")
			} else {
				require.NotEmpty(t, res.Partitions, "the interrupted run changed nothing")
			}
			parts, err := cold.Partitions(e.ctx)
			require.NoError(t, err)
			for _, p := range parts {
				require.Equal(t, p.Closed, p.Compacted, p.Name)
			}
			_, err = cold.DeleteOrphanFiles(e.ctx, 0, false)
			require.NoError(t, err)
			agree(t, e, o, "after recovery from "+step)
			scopedAnswers(t, e, o, then, pre, "after recovery from "+step)
		})
	}
}

// Archival, compaction and late corrections racing: the leases decide who
// commits when, and in the end nothing is lost or doubled.
func TestArchivalCompactionAndLateCorrectionsRacing(t *testing.T) {
	f := newCompactionFixture(t, 0xC0A3)
	o := testkit.NewOracle(f.cfg)
	e := newEnv(t, f.first, f.cfg)
	e.appendAll(t, o, f.originals)
	e.appendAll(t, o, f.inWindow)
	tbl := e.table(t)
	// October archived first, so compaction has a closed month to race on.
	_, err := tbl.Archive(e.ctx, archiveNow(f.cfg, time.Date(2025, time.November, 1, 0, 0, 0, 0, time.UTC)), 0)
	require.NoError(t, err)

	var wg sync.WaitGroup
	errs := make(chan error, 3)
	run := func(name string, fn func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(); err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		}()
	}
	run("archival", func() error {
		for day := 1; day <= 4; day++ {
			_, err := tbl.Archive(e.ctx, archiveNow(f.cfg, time.Date(2025, time.November, day, 0, 0, 0, 0, time.UTC)), 1)
			if err != nil {
				return err
			}
		}
		return nil
	})
	run("compaction", func() error {
		for i := 0; i < 3; i++ {
			_, err := tbl.Cold().Compact(e.ctx, catalog.CompactOptions{Force: i == 1})
			if err != nil && !errors.Is(err, catalog.ErrCompactionRaced) {
				return err
			}
		}
		return nil
	})
	run("late corrections", func() error {
		for i := 0; i < len(f.late); i += 4 {
			if _, err := e.cur.st.Append(e.ctx, seriesOf(f.late[i:min(i+4, len(f.late))])...); err != nil {
				return err
			}
		}
		return nil
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	_, err = o.RecordDeliveries(f.late...)
	require.NoError(t, err)
	_, err = tbl.Archive(e.ctx, archiveNow(f.cfg, f.end), 0)
	require.NoError(t, err)
	e.healthy(t)
	require.EqualValues(t, o.RawRowCount(time.Time{}, e.watermark(t)), e.coldRows(t), "Iceberg holds every row below the watermark exactly once")
	agree(t, e, o, "after archival, compaction and late corrections raced")
	_, err = tbl.Cold().Compact(e.ctx, catalog.CompactOptions{})
	require.NoError(t, err)
	agree(t, e, o, "after a final compaction")
}

// Late corrections into a compacted month: the month holding several versions
// and late corrections is compacted, then corrected late again — first at
// creation-time versions (above any version of the month), then at the
// versions the operator restates days at. readings, readings_versions, AsOf
// the snapshot before compaction (with and without a version ceiling) and
// AsKnownAt equal the oracle at every step, and the plan of the month reads
// what the footer marks prove: no superseded file in a current read, the
// current files as they are, a creation-time correction by exclusion.
func TestLateCorrectionsIntoACompactedMonth(t *testing.T) {
	f := newCompactionFixture(t, 0xC0A4)
	o := testkit.NewOracle(f.cfg)
	e := newEnv(t, f.first, f.cfg)
	early, later := f.late[:len(f.late)/2], f.late[len(f.late)/2:]
	f.late = early
	pre, then := f.load(t, e, o)
	cold := e.table(t).Cold()
	beforeCompaction := cold.CurrentSnapshotID()
	atCompaction := testkit.NewOracle(f.cfg)
	_, err := atCompaction.RecordDeliveries(append(append(append([]testkit.Delivery{}, f.originals...), f.inWindow...), early...)...)
	require.NoError(t, err)
	agree(t, e, o, "before compaction")
	scopedAnswers(t, e, o, then, pre, "before compaction")

	res, err := cold.Compact(e.ctx, catalog.CompactOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, res.Partitions, "October is closed")
	require.Positive(t, res.Partitions[0].Superseded, "October holds several versions")
	agree(t, e, o, "after compaction")
	scopedAnswers(t, e, o, then, pre, "after compaction")
	october := `SELECT count(*), sum(value) FROM ` + f.cfg.ResolvedName() + ` WHERE "from" < '2025-11-01 00:00:00+00'`
	plan := explainCold(t, e, e.cur.st.Engine(), october)
	require.Contains(t, plan, "resolution elided")
	require.Contains(t, plan, "keys-unique mark")
	require.Contains(t, plan, "superseded files not read")
	res2, err := e.cur.st.Engine().Query(e.ctx, october)
	require.NoError(t, err)
	require.Zero(t, res2.Provenance.ResolvedFiles, "a compacted month is read without resolution")
	require.Positive(t, res2.Provenance.ColdFiles)

	creationTime := reversioned(t, later[:len(later)/2], 20251120000001)
	out := e.appendAll(t, o, creationTime)
	require.True(t, out.HadLateCorrections())
	agree(t, e, o, "after late corrections at creation-time versions")
	scopedAnswers(t, e, o, then, pre, "after late corrections at creation-time versions")
	plan = explainCold(t, e, e.cur.st.Engine(), october)
	require.Contains(t, plan, "by exclusion")
	require.NotContains(t, plan, "ranked")
	require.Contains(t, plan, "superseded files not read")

	restated := later[len(later)/2:]
	out = e.appendAll(t, o, restated)
	require.True(t, out.HadLateCorrections())
	agree(t, e, o, "after late corrections at restated versions")
	scopedAnswers(t, e, o, then, pre, "after late corrections at restated versions")

	// As of the snapshot before compaction, under a version ceiling that
	// makes superseded rows current again.
	ceiling := metering.Version{}
	for _, d := range f.inWindow {
		if ceiling.IsZero() || d.Series.Version.Compare(ceiling) < 0 {
			ceiling = d.Series.Version
		}
	}
	mv := ceiling.Uint64()
	w, err := cold.WatermarkAt(e.ctx, beforeCompaction)
	require.NoError(t, err)
	require.Equal(t, oracleSumCount(atCompaction.With(testkit.Ceiling{MaxVersion: mv}), w),
		sumCount(t, e, e.cur.st.Engine().AsOf(beforeCompaction, &mv), f.cfg.ResolvedName()), "as of the snapshot before compaction, versions ≤ %d", mv)
	now := cold.CurrentSnapshotID()
	require.Equal(t, oracleSumCount(o.With(testkit.Ceiling{MaxVersion: mv}), e.watermark(t)),
		sumCount(t, e, e.cur.st.Engine().AsOf(now, &mv), f.cfg.ResolvedName()), "as of the current snapshot, versions ≤ %d", mv)
	plan = explainCold(t, e, e.cur.st.Engine().AsOf(now, &mv), october)
	require.NotContains(t, plan, "superseded files not read", "a version ceiling reads the superseded file")
}

// explainCold is the cold line of EXPLAIN of q on eng.
func explainCold(t testing.TB, e *env, eng *engine.Engine, q string) string {
	t.Helper()
	text, err := eng.Explain(e.ctx, q)
	require.NoError(t, err)
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "cold:") {
			return l
		}
	}
	t.Fatalf("no cold line in EXPLAIN:\n%s", text)
	return ""
}

// reversioned copies deliveries with distinct versions from first on: a
// creation-time version above any the month holds.
func reversioned(t testing.TB, ds []testkit.Delivery, first uint64) []testkit.Delivery {
	t.Helper()
	out := make([]testkit.Delivery, len(ds))
	for i, d := range ds {
		v, err := metering.NewVersion(first + uint64(i))
		require.NoError(t, err)
		d.Series.Version = v
		out[i] = d
	}
	return out
}
