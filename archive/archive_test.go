package archive_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/pgtest"
	"github.com/meterstore/meterstore/testkit/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// loaded is a store with a generated week written to PostgreSQL and its oracle.
type loaded struct {
	s        *storetest.Store
	tbl      *storetest.Table
	oracle   *testkit.Oracle
	workload testkit.Workload
	days     int
	first    time.Time
}

func load(t *testing.T, hook func(archive.Step) error) loaded {
	t.Helper()
	w := testkit.NewWorkload(3)
	w.MaLos, w.Tenants, w.Days = 4, 2, 5
	w.CorrectionRate, w.RedeliveryRate = 0.05, 0.05
	batch, err := w.Generate()
	require.NoError(t, err)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	s := storetest.Start(t, storetest.Options{Now: batch.Days[0].Time(), ArchiveHook: hook}, cfg)
	tbl := s.Table()
	oracle := testkit.NewOracle(cfg)
	var rows []meterstore.Row
	for _, d := range batch.Deliveries {
		r, err := cfg.Encode(d.Series)
		require.NoError(t, err)
		rows = append(rows, r...)
	}
	_, err = tbl.Hot.Write(context.Background(), rows)
	require.NoError(t, err)
	_, err = oracle.RecordDeliveries(batch.Deliveries...)
	require.NoError(t, err)
	first := batch.Days[0].Time().Add(-2 * time.Hour).Truncate(24 * time.Hour)
	return loaded{s: s, tbl: tbl, oracle: oracle, workload: w, days: len(batch.Days), first: first}
}

// rowsOfDay is the loaded workload's original deliveries of the balancing day
// containing day, encoded for the table.
func (l loaded) rowsOfDay(t *testing.T, day time.Time) []meterstore.Row {
	t.Helper()
	w := l.workload
	w.Start, w.Days, w.CorrectionRate, w.RedeliveryRate = day, 1, 0, 0
	batch, err := w.Generate()
	require.NoError(t, err)
	var rows []meterstore.Row
	for _, d := range batch.Deliveries {
		r, err := l.tbl.Config.Encode(d.Series)
		require.NoError(t, err)
		rows = append(rows, r...)
	}
	return rows
}

// checkExactlyOnce compares the store with the oracle: every row counted once
// across the tiers, and no row below the watermark left in PostgreSQL.
func checkExactlyOnce(t *testing.T, l loaded) {
	t.Helper()
	ctx := context.Background()
	res, err := l.s.Engine.Query(ctx, `SELECT count(*), sum(value) FROM readings`)
	require.NoError(t, err)
	all := time.Time{}
	require.EqualValues(t, l.oracle.RowCount(all, all), res.Rows[0][0])
	require.True(t, l.oracle.Sum(all, all).Equal(res.Rows[0][1].(decimal.Decimal)), "sum %s, oracle %s", res.Rows[0][1], l.oracle.Sum(all, all))
	res, err = l.s.Engine.Query(ctx, `SELECT count(*) FROM readings_versions`)
	require.NoError(t, err)
	require.EqualValues(t, l.oracle.RawRowCount(all, all), res.Rows[0][0])
	rep, err := l.tbl.Archiver.VerifyInvariant(ctx)
	require.NoError(t, err)
	require.True(t, rep.Healthy, rep.String())
}

func TestArchiveWindowsExactlyOnce(t *testing.T) {
	ctx := context.Background()
	l := load(t, nil)
	var progress []archive.Progress
	l.tbl.Archiver = archive.New(l.tbl.Hot, l.tbl.Cold, archive.Options{Progress: func(p archive.Progress) { progress = append(progress, p) }})
	now := l.first.Add(4*24*time.Hour + l.tbl.Config.SettlementLag())
	out, err := l.tbl.Archiver.Archive(ctx, now, 2)
	require.NoError(t, err)
	require.Len(t, out.Windows, 2, "maxWindows bounds the run")
	require.True(t, out.Windows[1].Watermark.Equal(l.first.Add(48*time.Hour)))
	for _, w := range out.Windows {
		require.Positive(t, w.Rows)
		require.Positive(t, w.Files)
		require.Positive(t, w.Bytes)
	}
	require.NotEmpty(t, progress)
	checkExactlyOnce(t, l)

	out, err = l.tbl.Archiver.Archive(ctx, now, 0)
	require.NoError(t, err)
	require.Len(t, out.Windows, 2, "only windows ending at or before now − settlement lag")
	checkExactlyOnce(t, l)

	out, err = l.tbl.Archiver.Archive(ctx, now, 0)
	require.NoError(t, err)
	require.False(t, out.ArchivedAnything(), "a re-run with nothing settled does nothing")
}

var errCrash = errors.New("injected crash")

// TestCrashAtEveryStepRecovers stops the job after each of its four steps, then
// runs it again: nothing lost, nothing doubled, the watermark never lower.
func TestCrashAtEveryStepRecovers(t *testing.T) {
	for _, step := range []archive.Step{archive.AfterDetach, archive.AfterWrite, archive.AfterCommit, archive.AfterDrop} {
		t.Run(string(step), func(t *testing.T) {
			ctx := context.Background()
			crash := true
			l := load(t, func(s archive.Step) error {
				if s == step && crash {
					crash = false
					return errCrash
				}
				return nil
			})
			now := l.first.Add(3*24*time.Hour + l.tbl.Config.SettlementLag())
			_, err := l.tbl.Archiver.Archive(ctx, now, 1)
			require.ErrorIs(t, err, errCrash)
			before, err := l.tbl.Cold.Watermark(ctx)
			require.NoError(t, err)

			out, err := l.tbl.Archiver.Archive(ctx, now, 0)
			require.NoError(t, err)
			require.False(t, out.Watermark.Before(before), "the watermark never moves back")
			require.True(t, out.Watermark.Equal(l.first.Add(3*24*time.Hour)), "watermark %s", out.Watermark)
			det, err := l.tbl.Hot.DetachedPartitions(ctx)
			require.NoError(t, err)
			require.Empty(t, det, "no partition is left detached")
			checkExactlyOnce(t, l)
		})
	}
}

func TestTwoArchiversOneWins(t *testing.T) {
	ctx := context.Background()
	block := make(chan struct{})
	entered := make(chan struct{}, 1)
	l := load(t, func(s archive.Step) error {
		if s == archive.AfterDetach {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-block
		}
		return nil
	})
	now := l.first.Add(2*24*time.Hour + l.tbl.Config.SettlementLag())
	other := archive.New(l.tbl.Hot, l.tbl.Cold, archive.Options{})
	var wg sync.WaitGroup
	var first archive.Outcome
	var firstErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		first, firstErr = l.tbl.Archiver.Archive(ctx, now, 0)
	}()
	<-entered
	second, err := other.Archive(ctx, now, 0)
	require.NoError(t, err, "a contended lease is not an error")
	require.True(t, second.LeaseContended)
	require.False(t, second.ArchivedAnything())
	close(block)
	wg.Wait()
	require.NoError(t, firstErr)
	require.True(t, first.ArchivedAnything())
	checkExactlyOnce(t, l)
}

var errStop = errors.New("stop")

// TestInsertRacingDetachFailsLoudly: a write into a window being archived fails
// rather than landing in a table no query reads, and the interrupted window is
// recovered afterwards with every row exactly once.
func TestInsertRacingDetachFailsLoudly(t *testing.T) {
	ctx := context.Background()
	l := load(t, nil)
	now := l.first.Add(24*time.Hour + l.tbl.Config.SettlementLag())
	parts, err := l.tbl.Hot.Partitions(ctx)
	require.NoError(t, err)
	var p hot.Partition
	for _, x := range parts {
		if x.From.Equal(l.first) {
			p = x
		}
	}
	require.Equal(t, l.first, p.From)
	require.NoError(t, l.tbl.Hot.Detach(ctx, p), "the archiver's first step, interrupted here")
	var row meterstore.Row
	err = l.tbl.Hot.Scan(ctx, hot.ScanRequest{Table: p.Name, PageRows: 1}, func(rs []meterstore.Row) error { row = rs[0]; return errStop })
	require.ErrorIs(t, err, errStop)
	row.Version++ // a correction for the window being archived
	_, err = l.tbl.Hot.Write(ctx, []meterstore.Row{row})
	require.Error(t, err, "an insert into a detached window fails")
	out, err := l.tbl.Archiver.Archive(ctx, now, 0)
	require.NoError(t, err)
	require.True(t, out.ArchivedAnything())
	require.True(t, out.Windows[0].Recovered)
	checkExactlyOnce(t, l)
}

// firstWindowArchived is a loaded store with its first window archived,
// and a row of that window.
func firstWindowArchived(t *testing.T) (loaded, meterstore.Row) {
	t.Helper()
	ctx := context.Background()
	l := load(t, nil)
	now := l.first.Add(24*time.Hour + l.tbl.Config.SettlementLag())
	var row meterstore.Row
	err := l.tbl.Hot.Scan(ctx, hot.ScanRequest{To: l.first.Add(24 * time.Hour), PageRows: 1}, func(rs []meterstore.Row) error { row = rs[0]; return errStop })
	require.ErrorIs(t, err, errStop)
	out, err := l.tbl.Archiver.Archive(ctx, now, 1)
	require.NoError(t, err)
	require.True(t, out.ArchivedAnything())
	return l, row
}

// TestReconcileMovesARecreatedPartition: a late correction written straight
// to PostgreSQL after archival dropped its window (what a stale router would
// do) is refused: the window is the cold tier's. A partition recreated below
// the watermark all the same — by a build that did not claim the archived
// range — holds rows no query reads; Reconcile offers them to Iceberg, drops
// it and claims the range again.
func TestReconcileMovesARecreatedPartition(t *testing.T) {
	ctx := context.Background()
	l, late := firstWindowArchived(t)
	late.Version++
	late.Value = late.Value.Add(decimal.NewFromInt(1))
	_, err := l.tbl.Hot.Write(ctx, []meterstore.Row{late})
	require.ErrorIs(t, err, hot.ErrArchivedRange, "the archived window is not recreated")

	_, err = l.s.Pool.Exec(ctx, `DROP TABLE "readings_versions$archived"`)
	require.NoError(t, err, "the state an earlier build left: no archived range")
	_, err = l.tbl.Hot.Write(ctx, []meterstore.Row{late})
	require.NoError(t, err)
	rep, err := l.tbl.Archiver.VerifyInvariant(ctx)
	require.NoError(t, err)
	require.False(t, rep.Healthy, "a row below the watermark in PostgreSQL is a violation")

	rec, err := l.tbl.Archiver.Reconcile(ctx)
	require.NoError(t, err)
	require.Len(t, rec.Dropped, 1)
	_, err = l.oracle.Record(late)
	require.NoError(t, err)
	checkExactlyOnce(t, l)
	late.Version++
	_, err = l.tbl.Hot.Write(ctx, []meterstore.Row{late})
	require.ErrorIs(t, err, hot.ErrArchivedRange, "Reconcile claims the range below the watermark again")
}

// TestArchivalRacingAWriterThatCreatesAPartition: a window's commit claims
// every range below its new watermark, also ranges without a partition when the
// run looked — everything below a table's first window, a window whose
// partition is missing — and empty partitions below the first window. A
// writer that puts rows there before the commit (a router that read the
// watermark before it moved) must be refused, never acknowledged below the
// watermark where no query reads them (invariants 1 and 7).
func TestArchivalRacingAWriterThatCreatesAPartition(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		name   string
		window int           // the window (0 = the table's first) whose commit the writer races
		rows   time.Duration // the racing rows' balancing day, after the first window's start
		prep   func(context.Context, loaded) error
	}{
		{name: "below the first window, no partition", window: 0, rows: -10*day + 12*time.Hour},
		{name: "below the first window, an empty partition", window: 0, rows: -5*day + 12*time.Hour,
			prep: func(ctx context.Context, l loaded) error {
				return l.tbl.Hot.EnsurePartitions(ctx, l.first.Add(-6*day), l.first.Add(-4*day))
			}},
		{name: "a window with no partition", window: 7, rows: 8*day + 12*time.Hour,
			prep: func(ctx context.Context, l loaded) error {
				parts, err := l.tbl.Hot.Partitions(ctx)
				if err != nil {
					return err
				}
				p, ok := findPartitionAt(parts, l.first.Add(7*day))
				if !ok {
					return errors.New("no pre-created partition for the eighth window")
				}
				if err := l.tbl.Hot.Detach(ctx, p); err != nil {
					return err
				}
				return l.tbl.Hot.Drop(ctx, p)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var l loaded
			var racing []meterstore.Row
			var writeErr error
			windows := 0
			l = load(t, func(s archive.Step) error {
				if s != archive.AfterWrite {
					return nil
				}
				windows++
				if windows == tc.window+1 {
					// The window is read out, its commit not yet made.
					_, writeErr = l.tbl.Hot.Write(ctx, racing)
				}
				return nil
			})
			racing = l.rowsOfDay(t, l.first.Add(tc.rows))
			if tc.prep != nil {
				require.NoError(t, tc.prep(ctx, l))
			}
			now := l.first.Add(time.Duration(tc.window+1)*day + l.tbl.Config.SettlementLag())
			out, err := l.tbl.Archiver.Archive(ctx, now, 0)
			require.NoError(t, err)
			require.Len(t, out.Windows, tc.window+1)
			if writeErr == nil {
				_, err := l.oracle.Record(racing...)
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, writeErr, hot.ErrPartitionDetached, "a refused write says the range is the cold tier's")
			}
			rep, err := l.tbl.Archiver.VerifyInvariant(ctx)
			require.NoError(t, err)
			require.True(t, rep.Healthy, rep.String())
			checkExactlyOnce(t, l)
		})
	}
}

func findPartitionAt(parts []hot.Partition, from time.Time) (hot.Partition, bool) {
	for _, p := range parts {
		if p.From.Equal(from) {
			return p, true
		}
	}
	return hot.Partition{}, false
}

// TestFirstWindowCommitsTheRowsClaimedBelowIt: the claim of a table's first
// window detaches the partitions below it, and a writer may have filled them
// since the archiver looked for the oldest one holding rows. Their rows join
// the window's commit — several partitions of one month, merged into the
// order the commit writes files in — here after the run was interrupted with
// them all detached.
func TestFirstWindowCommitsTheRowsClaimedBelowIt(t *testing.T) {
	ctx := context.Background()
	l := load(t, nil)
	end := l.first.Add(2 * 24 * time.Hour)
	lease, ok, err := l.tbl.Hot.TryArchiveLease(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	claimed, err := l.tbl.Hot.ClaimBelow(ctx, lease, end)
	lease.Release()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(claimed), 2, "the window's partition and one below it, both holding rows")
	out, err := l.tbl.Archiver.Archive(ctx, end.Add(l.tbl.Config.SettlementLag()), 0)
	require.NoError(t, err)
	require.Len(t, out.Windows, 1)
	require.True(t, out.Windows[0].Recovered)
	require.True(t, out.Watermark.Equal(end), "watermark %s", out.Watermark)
	checkExactlyOnce(t, l)
}

// TestReconcileRefusesARecreatedPartitionAConflictingColdWriteContradicts:
// a partition recreated below the watermark holds a correction (a write that
// raced an archival — here the state a build without the archived range
// left), and before Reconcile moves it a late correction of the same reading
// and version with another value goes to Iceberg: no check saw the pair, the
// cold write compares only with cold rows and hot rows reaching above the
// watermark. Reconcile offers the partition's rows to AppendCold, which
// refuses the restatement; as reoffer's doc says, the partition stays
// detached (its row not counted, not lost), the run fails naming it, and the
// next run refuses again. Answers stay the cold row's, once.
func TestReconcileRefusesARecreatedPartitionAConflictingColdWriteContradicts(t *testing.T) {
	ctx := context.Background()
	l, late := firstWindowArchived(t)

	_, err := l.s.Pool.Exec(ctx, `DROP TABLE "readings_versions$archived"`)
	require.NoError(t, err, "the state an earlier build left: no archived range")
	late.Version++
	late.Value = late.Value.Add(decimal.NewFromInt(1))
	_, err = l.tbl.Hot.Write(ctx, []meterstore.Row{late})
	require.NoError(t, err, "the partition below the watermark is recreated")
	cold := late
	cold.Value = late.Value.Add(decimal.NewFromInt(1))
	_, err = l.tbl.Cold.AppendCold(ctx, []meterstore.Row{cold})
	require.NoError(t, err, "the cold write does not see the recreated partition")
	_, err = l.oracle.Record(cold)
	require.NoError(t, err)

	for run := range 2 {
		rec, err := l.tbl.Archiver.Reconcile(ctx)
		require.ErrorIs(t, err, meterstore.ErrRestatement, "run %d: %+v", run, rec)
		require.Empty(t, rec.Dropped)
		t.Logf("run %d refused: %v", run, err)
		det, derr := l.tbl.Hot.DetachedPartitions(ctx)
		require.NoError(t, derr)
		require.Len(t, det, 1, "the recreated partition, detached")
		require.ErrorContains(t, err, det[0].Name)
		var held []meterstore.Row
		require.NoError(t, l.tbl.Hot.Scan(ctx, hot.ScanRequest{Table: det[0].Name}, func(rs []meterstore.Row) error {
			held = append(held, rs...)
			return nil
		}))
		require.Len(t, held, 1)
		require.True(t, held[0].Value.Equal(late.Value), "the hot correction is kept")
	}
	res, err := l.s.Engine.Query(ctx, `SELECT count(*), sum(value) FROM readings`)
	require.NoError(t, err)
	all := time.Time{}
	require.EqualValues(t, l.oracle.RowCount(all, all), res.Rows[0][0])
	require.True(t, l.oracle.Sum(all, all).Equal(res.Rows[0][1].(decimal.Decimal)), "sum %s, oracle %s (the cold correction once)", res.Rows[0][1], l.oracle.Sum(all, all))
}

// TestContradictionAcrossTiersReportsAForeignInterval: a commit no rule
// checks (as a foreign writer's: CommitWindow keeping the watermark) adds a
// cold interval from below the watermark over a row PostgreSQL holds above
// it, at that row's version. ContradictionAcrossTiers reports the hot tier's
// refusal naming the reading and both intervals; before the commit, none.
func TestContradictionAcrossTiersReportsAForeignInterval(t *testing.T) {
	ctx := context.Background()
	l, _ := firstWindowArchived(t)
	conflict, err := l.tbl.Archiver.ContradictionAcrossTiers(ctx)
	require.NoError(t, err)
	require.NoError(t, conflict)
	w, err := l.tbl.Cold.Watermark(ctx)
	require.NoError(t, err)
	var above meterstore.Row
	err = l.tbl.Hot.Scan(ctx, hot.ScanRequest{From: w, PageRows: 1}, func(rs []meterstore.Row) error { above = rs[0]; return errStop })
	require.ErrorIs(t, err, errStop)
	straddler := above
	straddler.From = w.Add(-time.Hour)
	_, err = l.tbl.Cold.CommitWindow(ctx, &catalog.SliceSource{Rows: []meterstore.Row{straddler}}, w)
	require.NoError(t, err)

	conflict, err = l.tbl.Archiver.ContradictionAcrossTiers(ctx)
	require.NoError(t, err)
	require.ErrorIs(t, conflict, meterstore.ErrOverlap)
	for _, want := range []string{above.MaloID, "no_overlap across tiers", straddler.From.Format(time.RFC3339), above.From.Format(time.RFC3339)} {
		require.ErrorContains(t, conflict, want)
	}
	t.Logf("%v", conflict)
}

// TestContradictionAcrossTiersNamesEveryInterval: two foreign intervals over
// hot rows of two MaLos — both named and counted, not the first only.
func TestContradictionAcrossTiersNamesEveryInterval(t *testing.T) {
	ctx := context.Background()
	l, _ := firstWindowArchived(t)
	w, err := l.tbl.Cold.Watermark(ctx)
	require.NoError(t, err)
	// Per MaLo, the earliest hot row of one of its readings: an interval from
	// an hour below the watermark to its end meets that row only.
	earliest := map[string]meterstore.Row{}
	err = l.tbl.Hot.Scan(ctx, hot.ScanRequest{From: w}, func(rs []meterstore.Row) error {
		for _, r := range rs {
			if e, ok := earliest[r.MaloID]; !ok || (e.ObisCode == r.ObisCode && r.From.Before(e.From)) {
				earliest[r.MaloID] = r
			}
		}
		return nil
	})
	require.NoError(t, err)
	var above []meterstore.Row
	for _, malo := range slices.Sorted(maps.Keys(earliest))[:2] {
		above = append(above, earliest[malo])
	}
	var straddlers []meterstore.Row
	for _, r := range above {
		r.From = w.Add(-time.Hour)
		straddlers = append(straddlers, r)
	}
	_, err = l.tbl.Cold.CommitWindow(ctx, &catalog.SliceSource{Rows: straddlers}, w)
	require.NoError(t, err)

	conflict, err := l.tbl.Archiver.ContradictionAcrossTiers(ctx)
	require.NoError(t, err)
	var all *hot.TierConflictsError
	require.ErrorAs(t, conflict, &all)
	require.Equal(t, 2, all.Total)
	require.ErrorIs(t, conflict, meterstore.ErrOverlap)
	require.ErrorContains(t, conflict, "2 pairs of intervals conflict across the tiering watermark: ")
	for _, r := range above {
		require.ErrorContains(t, conflict, "malo "+r.MaloID+" obis "+r.ObisCode)
	}
	t.Logf("%v", conflict)
}
