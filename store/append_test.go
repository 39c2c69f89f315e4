package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/internal/pglock"
	"github.com/meterstore/meterstore/internal/testhooks"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// TestAppendRoutesAcrossTiers: a realistic workload is appended, archived, and
// its late corrections appended again; corrections below the watermark go to
// Iceberg and every query across the watermark equals the oracle.
func TestAppendRoutesAcrossTiers(t *testing.T) {
	w := testkit.NewWorkload(11)
	w.MaLos, w.Days, w.Mix = 3, 4, testkit.StromOnly
	w.CorrectionRate, w.RedeliveryRate = 0.2, 0.1
	w.CorrectionDelay = time.Hour // corrections arrive within the run
	batch, err := w.Generate()
	require.NoError(t, err)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	oracle := testkit.NewOracle(cfg)
	e := open(t, func(c *setup) { c.Now = func() time.Time { return batch.Days[0].Time() } }, cfg)
	tbl, _ := e.st.Table("readings_versions")

	var originals, corrections []meterstore.StoredSeries
	for _, d := range batch.Deliveries {
		if d.Kind == testkit.Correction {
			corrections = append(corrections, d.Series)
		} else {
			originals = append(originals, d.Series)
		}
	}
	require.NotEmpty(t, corrections)
	out, err := e.st.Append(e.ctx, originals...)
	require.NoError(t, err)
	require.False(t, out.HadLateCorrections())
	require.Zero(t, out.ColdRows)
	_, err = oracle.RecordSeries(originals...)
	require.NoError(t, err)
	require.Positive(t, effects(out)[meterstore.Duplicate], "redeliveries are Duplicates")

	cut := batch.Days[len(batch.Days)-1].Time() // all but the last local day settle
	_, err = tbl.Archive(e.ctx, cut.Add(cfg.SettlementLag()), 0)
	require.NoError(t, err)
	wm, err := tbl.Watermark(e.ctx)
	require.NoError(t, err)
	require.False(t, wm.IsZero())

	out, err = e.st.Append(e.ctx, corrections...)
	require.NoError(t, err)
	require.True(t, out.HadLateCorrections())
	require.Positive(t, out.HotRows+out.ColdRows)
	_, err = oracle.RecordSeries(corrections...)
	require.NoError(t, err)
	var coldSuperseded int
	for _, d := range out.Displacements {
		require.Equal(t, d.Row.From.Before(wm), d.Tier == store.ColdTier, "tier follows the watermark")
		if d.Tier == store.ColdTier && d.Effect == meterstore.Superseded {
			coldSuperseded++
			require.NotNil(t, d.Superseded)
			require.Less(t, d.Superseded.Version, d.Row.Version)
		}
	}
	require.Positive(t, coldSuperseded)

	// Redelivering the corrections changes nothing, in either tier.
	again, err := e.st.Append(e.ctx, corrections...)
	require.NoError(t, err)
	require.Equal(t, len(again.Displacements), effects(again)[meterstore.Duplicate])

	e.healthy(t, tbl)
	all := time.Time{}
	require.Equal(t, int64(oracle.RowCount(all, all)), e.scalar(t, `SELECT count(*) FROM readings`))
	require.True(t, oracle.Sum(all, all).Equal(dec(t, e.scalar(t, `SELECT sum(value) FROM readings`))))
	require.True(t, oracle.Sum(all, wm).Equal(dec(t, e.scalar(t, `SELECT sum(value) FROM readings WHERE "from" < $1`, wm))))
}

// TestDisplacementsBothTiers: Inserted, Superseded (with the superseded row),
// Shadowed and Duplicate are reported alike in both tiers; a quality change at
// the same value is a change.
func TestDisplacementsBothTiers(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	coldDay, hotDay := day0, day0.Add(48*time.Hour)
	// Something in the hot tier beyond coldDay, then archive coldDay.
	_, err := e.st.Append(e.ctx, mk(t, dl{from: coldDay, value: "1", version: 20260303000001}), mk(t, dl{from: hotDay.Add(24 * time.Hour), value: "9"}))
	require.NoError(t, err)
	e.archiveThrough(t, tbl, coldDay.Add(24*time.Hour))

	for _, tc := range []struct {
		name string
		from time.Time
		tier store.Tier
	}{{"cold", coldDay, store.ColdTier}, {"hot", hotDay, store.HotTier}} {
		t.Run("tier="+tc.name, func(t *testing.T) {
			if tc.tier == store.HotTier {
				out, err := e.st.Append(e.ctx, mk(t, dl{from: tc.from, value: "1", version: 20260303000001}))
				require.NoError(t, err)
				require.Equal(t, 4, effects(out)[meterstore.Inserted])
			}
			// Same value, quality SUBSTITUTED at a higher version: a change.
			out, err := e.st.Append(e.ctx, mk(t, dl{from: tc.from, value: "1", version: 20260304000001, quality: metering.QualitySubstituted}))
			require.NoError(t, err)
			require.Len(t, out.Displacements, 4)
			for _, d := range out.Displacements {
				require.Equal(t, tc.tier, d.Tier)
				require.Equal(t, meterstore.Superseded, d.Effect)
				require.NotNil(t, d.Superseded)
				require.Equal(t, "MEASURED", d.Superseded.Quality)
				require.Equal(t, "SUBSTITUTED", d.Row.Quality)
				require.Equal(t, "KWH", d.Superseded.Unit)
				require.True(t, d.Superseded.Value.Equal(d.Row.Value))
			}
			// An older backfill: stored, never current.
			out, err = e.st.Append(e.ctx, mk(t, dl{from: tc.from, value: "5", version: 20260302000001}))
			require.NoError(t, err)
			require.Equal(t, 4, effects(out)[meterstore.Shadowed])
			require.Equal(t, tc.tier == store.ColdTier, out.HadLateCorrections())
			// A replay.
			out, err = e.st.Append(e.ctx, mk(t, dl{from: tc.from, value: "5", version: 20260302000001}))
			require.NoError(t, err)
			require.Equal(t, 4, effects(out)[meterstore.Duplicate])
			// A different value under a stored version is refused.
			_, err = e.st.Append(e.ctx, mk(t, dl{from: tc.from, value: "6", version: 20260302000001}))
			require.Error(t, err)
			require.True(t, store.IsConflict(err), "%v", err)
			// What a query returns: the SUBSTITUTED 1s.
			got := e.scalar(t, `SELECT sum(value) FROM readings WHERE "from" >= $1 AND "from" < $2 AND quality = 'SUBSTITUTED'`, tc.from, tc.from.Add(time.Hour))
			require.True(t, dec(t, got).Equal(dec(t, e.scalar(t, `SELECT 4.0::DECIMAL(18,6)`))))
		})
	}
	e.healthy(t, tbl)
}

// TestConcurrentLateCorrectionsSerialise: two Appends of one late correction
// at once — one Inserted, one Duplicate, and one row in Iceberg.
func TestConcurrentLateCorrectionsSerialise(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	_, err := e.st.Append(e.ctx, mk(t, dl{malo: maloB, from: day0, value: "1"}), mk(t, dl{from: day0.Add(72 * time.Hour), value: "1"}))
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))

	corr := mk(t, dl{from: day0, value: "2", n: 1})
	var wg sync.WaitGroup
	outs := make([]store.AppendOutcome, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = e.st.Append(e.ctx, corr)
		}()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	got := []meterstore.Effect{outs[0].Displacements[0].Effect, outs[1].Displacements[0].Effect}
	require.ElementsMatch(t, []meterstore.Effect{meterstore.Inserted, meterstore.Duplicate}, got)
	require.Equal(t, int64(1), e.scalar(t, `SELECT count(*) FROM readings_versions WHERE malo_id = $1 AND "from" < $2`, maloA, day0.Add(48*time.Hour)))
}

// TestArchivalBetweenBoundaryReads: an archival forced between the two
// boundary reads of an Append still leaves every row visible exactly once.
func TestArchivalBetweenBoundaryReads(t *testing.T) {
	w := testkit.NewWorkload(5)
	w.MaLos, w.Days, w.Mix = 2, 3, testkit.StromOnly
	batch, err := w.Generate()
	require.NoError(t, err)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	oracle := testkit.NewOracle(cfg)
	var tbl *store.Table
	var fired bool
	last := batch.Days[len(batch.Days)-1].Time()
	e := open(t, func(c *setup) {
		c.Now = func() time.Time { return batch.Days[0].Time() }
		c.hooks.Append = func(s testhooks.AppendStep) {
			if s != testhooks.BeforeBoundaryRecheck || fired || tbl == nil {
				return
			}
			fired = true
			_, err := tbl.Archive(context.Background(), last.Add(cfg.SettlementLag()), 0)
			require.NoError(t, err)
		}
	}, cfg)
	tbl, _ = e.st.Table("readings_versions")
	var series []meterstore.StoredSeries
	for _, d := range batch.Deliveries {
		series = append(series, d.Series)
	}
	out, err := e.st.Append(e.ctx, series...)
	require.NoError(t, err)
	require.True(t, fired)
	require.Positive(t, out.Rerouted, "rows the archival moved are re-sent to Iceberg")
	for _, d := range out.Displacements {
		if d.Round == 2 {
			require.Equal(t, store.ColdTier, d.Tier)
			require.Equal(t, meterstore.Duplicate, d.Effect, "the archival already moved it")
		}
	}
	_, err = oracle.RecordSeries(series...)
	require.NoError(t, err)
	e.healthy(t, tbl)
	all := time.Time{}
	require.Equal(t, int64(oracle.RowCount(all, all)), e.scalar(t, `SELECT count(*) FROM readings`))
	require.Equal(t, int64(oracle.RawRowCount(all, all)), e.scalar(t, `SELECT count(*) FROM readings_versions`))
	require.True(t, oracle.Sum(all, all).Equal(dec(t, e.scalar(t, `SELECT sum(value) FROM readings`))))
}

// TestHotWriterRefusesBelowBoundary: the bulk path refuses a late interval,
// naming it and Append, and writes nothing of the batch.
func TestHotWriterRefusesBelowBoundary(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	_, err := e.st.Append(e.ctx, mk(t, dl{malo: maloB, from: day0, value: "1"}), mk(t, dl{from: day0.Add(72 * time.Hour), value: "1"}))
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))
	hw, err := tbl.HotWriter(e.ctx)
	require.NoError(t, err)
	require.True(t, hw.Boundary().Equal(day0.Add(48*time.Hour)))

	before := e.scalar(t, `SELECT count(*) FROM readings_versions`)
	_, err = hw.Append(e.ctx, mk(t, dl{from: day0.Add(96 * time.Hour), value: "3"}), mk(t, dl{from: day0.Add(24 * time.Hour), value: "3"}))
	require.ErrorIs(t, err, store.ErrBelowBoundary)
	require.Contains(t, err.Error(), "2026-03-03T00:00:00Z")
	require.Contains(t, err.Error(), "Append")
	require.Equal(t, before, e.scalar(t, `SELECT count(*) FROM readings_versions`))

	out, err := hw.Append(e.ctx, mk(t, dl{from: day0.Add(96 * time.Hour), value: "3"}))
	require.NoError(t, err)
	require.Equal(t, 4, out.HotRows)
}

// TestColdAppendLeaseTimeout: a held cold-append lease makes Append give up
// after its budget with a retryable error, having changed nothing (the hot
// part of the batch included).
func TestColdAppendLeaseTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits the 14 s lease budget")
	}
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	_, err := e.st.Append(e.ctx, mk(t, dl{malo: maloB, from: day0, value: "1"}), mk(t, dl{from: day0.Add(72 * time.Hour), value: "1"}))
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))
	lease, err := pglock.Acquire(e.ctx, e.pool, catalog.LeaseName("readings_versions"), time.Second)
	require.NoError(t, err)
	defer lease.Release()

	before := e.scalar(t, `SELECT count(*) FROM readings_versions`)
	start := time.Now()
	_, err = e.st.Append(e.ctx, mk(t, dl{from: day0, value: "2"}), mk(t, dl{from: day0.Add(96 * time.Hour), value: "2"}))
	require.ErrorIs(t, err, store.ErrLockTimeout)
	require.True(t, store.IsRetryable(err))
	require.GreaterOrEqual(t, time.Since(start), 10*time.Second)
	require.Equal(t, before, e.scalar(t, `SELECT count(*) FROM readings_versions`))
}

// TestAppendAuthoritative: an authored value below the version in force is
// re-appended at the next version in its scope; re-asserting it is a no-op.
func TestAppendAuthoritative(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	_, err := e.st.Append(e.ctx, mk(t, dl{malo: maloB, from: day0, value: "1"}), mk(t, dl{from: day0.Add(96 * time.Hour), value: "1"}))
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))
	for _, tc := range []struct {
		name string
		from time.Time
	}{{"cold", day0}, {"hot", day0.Add(72 * time.Hour)}} {
		t.Run("tier="+tc.name, func(t *testing.T) {
			_, err := e.st.Append(e.ctx, mk(t, dl{from: tc.from, value: "7", version: 20260310000001, quality: metering.QualityFaulty}))
			require.NoError(t, err)
			ersatz := mk(t, dl{from: tc.from, value: "3", version: 20260305000001, quality: metering.QualitySubstituted})
			out, err := e.st.AppendAuthoritative(e.ctx, ersatz)
			require.NoError(t, err)
			require.Equal(t, 2, out.Rounds)
			require.Len(t, out.Displacements, 4)
			for _, d := range out.Displacements {
				require.Equal(t, meterstore.Superseded, d.Effect)
				require.Equal(t, uint64(20260310000002), d.Row.Version)
				require.Equal(t, "FAULTY", d.Superseded.Quality)
			}
			got := e.scalar(t, `SELECT sum(value) FROM readings WHERE malo_id = $1 AND "from" >= $2 AND "from" < $3`, maloA, tc.from, tc.from.Add(time.Hour))
			require.Equal(t, "12", dec(t, got).String())
			// Already in force: a no-op, not a version bump.
			out, err = e.st.AppendAuthoritative(e.ctx, ersatz)
			require.NoError(t, err)
			require.Empty(t, out.Displacements)
			require.Len(t, out.AlreadyInForce, 4)
			require.Equal(t, int64(12), e.scalar(t, `SELECT count(*) FROM readings_versions WHERE malo_id = $1 AND "from" >= $2 AND "from" < $3`, maloA, tc.from, tc.from.Add(time.Hour)))
		})
	}
}

// TestAppendAuthoritativeRacingAuthor: another author takes the version an
// authoritative write is about to land at, between its rounds. The write must
// continue from what its own writes observe and land above it, not fail on the
// version the other author took.
func TestAppendAuthoritativeRacingAuthor(t *testing.T) {
	from := day0.Add(72 * time.Hour)
	var st *store.Store
	batches, racing := 0, false
	e := open(t, func(c *setup) {
		c.hooks.Append = func(s testhooks.AppendStep) {
			if s != testhooks.BeforeHotBatch || racing {
				return
			}
			if batches++; batches == 2 { // the authoritative write's second round
				racing = true
				_, err := st.Append(context.Background(), mk(t, dl{from: from, value: "5", version: 20260310000002}))
				require.NoError(t, err)
			}
		}
	}, intervalTable(t, nil))
	st = e.st
	_, err := e.st.Append(e.ctx, mk(t, dl{from: from, value: "7", version: 20260310000001, quality: metering.QualityFaulty}))
	require.NoError(t, err)
	batches = 0
	ersatz := mk(t, dl{from: from, value: "3", version: 20260305000001, quality: metering.QualitySubstituted})
	out, err := e.st.AppendAuthoritative(e.ctx, ersatz)
	require.NoError(t, err)
	require.True(t, racing, "the other author wrote between the rounds")
	require.Len(t, out.Displacements, 4)
	for _, d := range out.Displacements {
		require.Equal(t, meterstore.Superseded, d.Effect)
		require.Equal(t, uint64(20260310000003), d.Row.Version, "above the version the other author took")
		require.Equal(t, "5", d.Superseded.Value.String(), "the other author's value stopped being current")
	}
	require.LessOrEqual(t, out.Rounds, store.AuthoritativeAttempts)
	got := e.scalar(t, `SELECT sum(value) FROM readings WHERE malo_id = $1`, maloA)
	require.Equal(t, "12", dec(t, got).String())
}

// TestArrivalVersionSortsBelowStated: a delivery without an MSCONS label gets
// a Unix-millisecond version, which a stated label always outranks.
func TestArrivalVersionSortsBelowStated(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	recorded := day0.Add(100 * time.Hour)
	arrival, err := metering.VersionArrival(recorded)
	require.NoError(t, err)
	require.False(t, arrival.IsWellFormed())
	from := day0.Add(72 * time.Hour)
	out, err := e.st.Append(e.ctx, mk(t, dl{from: from, value: "5", version: arrival.Uint64()}))
	require.NoError(t, err)
	require.Equal(t, 4, effects(out)[meterstore.Inserted])
	out, err = e.st.Append(e.ctx, mk(t, dl{from: from, value: "1", version: 20260301000001}))
	require.NoError(t, err)
	require.Equal(t, 4, effects(out)[meterstore.Superseded], "a late delivery carrying its own version wins")
	got := e.scalar(t, `SELECT sum(value) FROM readings`)
	require.Equal(t, "4", dec(t, got).String())
}

// TestDetachedRetryReroutesEarlierBatches drives a multi-window archival
// through an Append of several hot batches: after the first batch the archival
// commits and drops windows one and two and holds window three detached; the
// second batch, routed against the first boundary read, recreates window two's
// partition below the new watermark; the third batch meets the detached window
// and retries after the archival ends. The rows of the second batch must end
// visible (re-routed to Iceberg), not stranded in PostgreSQL under the
// watermark, although the retry's boundary read already saw the last move.
func TestDetachedRetryReroutesEarlierBatches(t *testing.T) {
	d1, d2, d3, d6 := day0, day0.Add(24*time.Hour), day0.Add(48*time.Hour), day0.Add(120*time.Hour)
	var tbl *store.Table
	detached3, release, archived := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var detaches, batches int
	e := open(t, func(c *setup) {
		c.HotBatchRows = 4 // one delivery of mk's four intervals per transaction
		c.hooks.Archive = func(s archive.Step) error {
			if s == archive.AfterDetach {
				if detaches++; detaches == 3 {
					close(detached3)
					<-release
				}
			}
			return nil
		}
		c.hooks.Append = func(s testhooks.AppendStep) {
			switch s {
			case testhooks.BeforeHotBatch:
				if batches++; batches == 2 {
					go func() {
						_, err := tbl.Archive(context.Background(), d3.Add(24*time.Hour).Add(tbl.Config().SettlementLag()), 0)
						archived <- err
					}()
					<-detached3
				}
			case testhooks.BeforeDetachedRetry:
				if detaches == 3 {
					close(release)
					require.NoError(t, <-archived)
					detaches++
				}
			}
		}
	}, intervalTable(t, nil))
	tbl, _ = e.st.Table("readings_versions")
	oracle := testkit.NewOracle(tbl.Config())
	series := []meterstore.StoredSeries{
		mk(t, dl{from: d1, value: "1"}), mk(t, dl{from: d2, value: "2"}),
		mk(t, dl{from: d3, value: "3"}), mk(t, dl{from: d6, value: "6"}),
	}
	out, err := e.st.Append(e.ctx, series...)
	require.NoError(t, err)
	require.Equal(t, 4, detaches, "the archival held window three detached and then finished")
	wm, err := tbl.Watermark(e.ctx)
	require.NoError(t, err)
	require.True(t, wm.Equal(d3.Add(24*time.Hour)), "watermark %s", wm)
	_, err = oracle.RecordSeries(series...)
	require.NoError(t, err)
	e.healthy(t, tbl)
	all := time.Time{}
	require.Equal(t, int64(oracle.RowCount(all, all)), e.scalar(t, `SELECT count(*) FROM readings`))
	require.True(t, oracle.Sum(all, all).Equal(dec(t, e.scalar(t, `SELECT sum(value) FROM readings`))))
	require.Positive(t, out.Rerouted, "the second batch's rows are re-sent to Iceberg")
}

// TestAppendRacingTheFirstArchival: an Append that read the watermark before a
// table's first archival and writes below its first window while the window's
// commit is being made ends with its rows in Iceberg, where queries read them:
// the archival's claim refuses the hot write, and Append routes the rows again
// against the watermark the commit moved.
func TestAppendRacingTheFirstArchival(t *testing.T) {
	early := day0.Add(-10 * 24 * time.Hour)
	var tbl *store.Table
	var racing bool
	appended, retried := make(chan error, 1), make(chan struct{}, 1)
	e := open(t, func(c *setup) {
		c.hooks.Archive = func(s archive.Step) error {
			if s != archive.AfterWrite || racing {
				return nil
			}
			racing = true // the first window is read out, its commit not yet made
			go func() {
				_, err := tbl.Append(context.Background(), mk(t, dl{from: early, value: "7"}))
				appended <- err
			}()
			select {
			case <-retried:
			case err := <-appended:
				appended <- err
			}
			return nil
		}
		c.hooks.Append = func(s testhooks.AppendStep) {
			if s == testhooks.BeforeDetachedRetry {
				select {
				case retried <- struct{}{}:
				default:
				}
			}
		}
	}, intervalTable(t, nil))
	tbl, _ = e.st.Table("readings_versions")
	oracle := testkit.NewOracle(tbl.Config())
	first := mk(t, dl{from: day0, value: "1"})
	_, err := tbl.Append(e.ctx, first)
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(24*time.Hour))
	require.True(t, racing)
	require.NoError(t, <-appended)
	_, err = oracle.RecordSeries(first, mk(t, dl{from: early, value: "7"}))
	require.NoError(t, err)
	e.healthy(t, tbl)
	all := time.Time{}
	require.Equal(t, int64(oracle.RowCount(all, all)), e.scalar(t, `SELECT count(*) FROM readings`))
	require.True(t, oracle.Sum(all, all).Equal(dec(t, e.scalar(t, `SELECT sum(value) FROM readings`))))
}

// TestHotWriterOpenedBeforeAnArchival: a HotWriter whose boundary an archival
// has passed since it opened cannot put a row below the new watermark, where
// no query reads it — the archival's claim refuses it, and nothing the store
// answers changes.
func TestHotWriterOpenedBeforeAnArchival(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	_, err := tbl.Append(e.ctx, mk(t, dl{from: day0, value: "1"}), mk(t, dl{from: day0.Add(72 * time.Hour), value: "1"}))
	require.NoError(t, err)
	hw, err := tbl.HotWriter(e.ctx)
	require.NoError(t, err)
	require.True(t, hw.Boundary().IsZero(), "nothing archived when it opened")
	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))

	before := e.scalar(t, `SELECT count(*) FROM readings`)
	_, err = hw.Append(e.ctx, mk(t, dl{malo: maloB, from: day0.Add(24 * time.Hour), value: "3"}))
	require.ErrorIs(t, err, hot.ErrArchivedRange)
	e.healthy(t, tbl)
	require.Equal(t, before, e.scalar(t, `SELECT count(*) FROM readings`))
}

// TestACancelAfterTheHotCommitStillFinishesTheAppend: once the hot rows are
// committed, the boundary recheck that follows finishes the write whatever
// the caller's context: a cancel there must not report a committed write as
// failed (an import then counted none of its rows), nor skip re-routing rows
// an archival moved below the boundary.
func TestACancelAfterTheHotCommitStillFinishesTheAppend(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := open(t, func(c *setup) {
		c.hooks.Append = func(s testhooks.AppendStep) {
			if s == testhooks.BeforeBoundaryRecheck {
				cancel()
			}
		}
	}, intervalTable(t, nil))
	out, err := e.st.Append(ctx, mk(t, dl{from: day0.Add(72 * time.Hour), value: "1"}))
	require.NoError(t, err, "the rows are committed")
	require.Equal(t, 4, out.HotRows)
	require.Equal(t, int64(4), e.scalar(t, `SELECT count(*) FROM readings_versions`))
}
