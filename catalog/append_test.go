package catalog

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

var errCrash = errors.New("simulated crash before commit")

func archivedTable(t *testing.T, e *env) (*Table, time.Time) {
	t.Helper()
	ctx := context.Background()
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	w := day0.Add(24 * time.Hour)
	_, err = tb.CommitWindow(ctx, &SliceSource{Rows: genRows(day0, 96, opA, 1)}, w)
	require.NoError(t, err)
	return tb, w
}

func TestWatermarkAtomicWithData(t *testing.T) {
	ctx := context.Background()
	var crash bool
	e := newEnv(t, func(o *Options) {
		o.BeforeCommit = func(ctx context.Context, table, op string) error {
			if crash {
				return errCrash
			}
			return nil
		}
	})
	tb, w := archivedTable(t, e)
	before := readAll(t, tb)
	snap := tb.CurrentSnapshotID()

	crash = true
	_, err := tb.CommitWindow(ctx, &SliceSource{Rows: genRows(w, 96, opA, 1)}, w.Add(24*time.Hour))
	require.ErrorIs(t, err, errCrash)
	crash = false

	tb2, err := e.cat.Table(ctx, e.cfg)
	require.NoError(t, err)
	require.Equal(t, snap, tb2.CurrentSnapshotID())
	got, err := tb2.Watermark(ctx)
	require.NoError(t, err)
	require.True(t, got.Equal(w), "watermark unchanged after a failed commit")
	require.Equal(t, rowSet(before), rowSet(readAll(t, tb2)), "no rows from the failed commit")

	// The failed attempt's files are orphans; cleanup finds them.
	orphans, err := tb2.DeleteOrphanFiles(ctx, 0, true)
	require.NoError(t, err)
	require.NotEmpty(t, orphans)
}

func TestWatermarkParentChainWalk(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, w := archivedTable(t, e)

	// An out-of-band append (plain iceberg-go) without the property.
	rows := []meterstore.Row{mkRow(malos[0], opA, day0.Add(-time.Hour), "1.5", 1, opA)}
	rec, err := rowsToRecord(e.cfg, rows, memory.DefaultAllocator)
	require.NoError(t, err)
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	require.NoError(t, err)
	_, err = tb.Iceberg().Append(ctx, rdr, nil)
	require.NoError(t, err)
	require.NoError(t, tb.Refresh(ctx))

	snaps, err := tb.Snapshots(ctx)
	require.NoError(t, err)
	require.Len(t, snaps, 2)
	require.NotNil(t, snaps[0].Watermark)
	require.Nil(t, snaps[1].Watermark)
	require.Equal(t, snaps[1].ID, tb.CurrentSnapshotID())

	got, err := tb.Watermark(ctx)
	require.NoError(t, err)
	require.True(t, got.Equal(w), "walked past the snapshot without the property")
	got, err = tb.WatermarkAt(ctx, snaps[1].ID)
	require.NoError(t, err)
	require.True(t, got.Equal(w))

	// Snapshot resolution.
	s, err := tb.SnapshotByID(ctx, snaps[0].ID)
	require.NoError(t, err)
	require.Equal(t, "append", s.Operation)
	_, err = tb.SnapshotByID(ctx, 42)
	require.ErrorIs(t, err, ErrNoSnapshot)
	s, err = tb.SnapshotAt(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, snaps[1].ID, s.ID)
	_, err = tb.SnapshotAt(ctx, snaps[0].CommittedAt.Add(-time.Second))
	require.ErrorIs(t, err, ErrNoSnapshot)
}

func TestAppendColdGuards(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, w := archivedTable(t, e)
	snapsBefore, _ := tb.Snapshots(ctx)

	at := day0.Add(10 * time.Hour)
	corr := mkRow(malos[1], opA, at, "7.250000", 3, opA)

	// Two concurrent appends of the same correction: one Inserted... rather
	// Superseded (version 1 is stored), one Duplicate.
	tbB, err := e.cat.Table(ctx, e.cfg)
	require.NoError(t, err)
	var wg sync.WaitGroup
	effects := make([]meterstore.Effect, 2)
	errs := make([]error, 2)
	for i, h := range []*Table{tb, tbB} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := h.AppendCold(ctx, []meterstore.Row{corr})
			errs[i] = err
			if err == nil {
				effects[i] = out[0].Effect
			}
		}()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.ElementsMatch(t, []meterstore.Effect{meterstore.Superseded, meterstore.Duplicate}, effects)

	require.NoError(t, tb.Refresh(ctx))
	got, err := tb.Watermark(ctx)
	require.NoError(t, err)
	require.True(t, got.Equal(w), "cold append keeps the watermark")
	snaps, _ := tb.Snapshots(ctx)
	require.Len(t, snaps, len(snapsBefore)+1, "one commit for the correction, none for the duplicate")
	require.True(t, snaps[len(snaps)-1].Watermark.Equal(w))
	stored, err := tb.ReadRows(ctx, PlanRequest{From: at, To: at.Add(time.Minute), Eq: map[string]string{"malo_id": malos[1]}})
	require.NoError(t, err)
	require.Len(t, stored, 2)

	// A brand-new reading below the watermark: Inserted. An older version: Shadowed.
	newR := mkRow(malos[2], opA, day0.Add(-24*time.Hour), "3", 1, opA)
	old := mkRow(malos[1], opA, at, "6.5", 2, opA)
	out, err := tb.AppendCold(ctx, []meterstore.Row{newR, old})
	require.NoError(t, err)
	require.Equal(t, meterstore.Inserted, out[0].Effect)
	require.Equal(t, meterstore.Shadowed, out[1].Effect)

	// Restatement refused, nothing written.
	n0 := len(readAll(t, tb))
	bad := corr
	bad.Value = corr.Value.Add(corr.Value)
	_, err = tb.AppendCold(ctx, []meterstore.Row{mkRow(malos[3], opA, day0.Add(-48*time.Hour), "1", 1, opA), bad})
	require.ErrorIs(t, err, ErrRestatement)
	require.ErrorIs(t, err, meterstore.ErrConflict)
	require.Len(t, readAll(t, tb), n0)

	// A second network operator refused.
	other := mkRow(malos[1], opA, at, "7.25", 3, opB)
	_, err = tb.AppendCold(ctx, []meterstore.Row{other})
	require.ErrorIs(t, err, ErrSecondOperator)

	// At or above the watermark: the hot tier's business.
	_, err = tb.AppendCold(ctx, []meterstore.Row{mkRow(malos[1], opA, w, "1", 5, opA)})
	require.ErrorIs(t, err, ErrAboveWatermark)
	require.Len(t, readAll(t, tb), n0)
}

// TestAppendColdValidatesRows: a late correction is held to the rules a row
// written above the watermark is held to — the same validator — rather than
// trusted to have come through Encode: a wrong check digit, a scope that does
// not cover the row, or an unset version is refused with nothing written, and
// balancing_day is the calendar's whatever the caller put there.
func TestAppendColdValidatesRows(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, _ := archivedTable(t, e)
	n0 := len(readAll(t, tb))
	at := day0.Add(23*time.Hour + 30*time.Minute) // 00:30 the next day in Berlin
	for name, mutate := range map[string]func(*meterstore.Row){
		"check digit":     func(r *meterstore.Row) { r.MaloID = "41373559242" },
		"scope":           func(r *meterstore.Row) { r.VersionScope = opA + ":2024-05" },
		"unset version":   func(r *meterstore.Row) { r.Version = 0 },
		"quality":         func(r *meterstore.Row) { r.Quality = "220" },
		"declared column": func(r *meterstore.Row) { r.Extra = r.Extra[:1] },
	} {
		r := mkRow(malos[2], opA, at, "1.5", 2, opA)
		mutate(&r)
		_, err := tb.AppendCold(ctx, []meterstore.Row{r})
		require.ErrorIs(t, err, meterstore.ErrInvalidRow, name)
		require.Len(t, readAll(t, tb), n0, name)
	}

	r := mkRow(malos[2], opA, at, "1.5", 2, opA)
	r.BalancingDay = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	out, err := tb.AppendCold(ctx, []meterstore.Row{r})
	require.NoError(t, err)
	want := time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC)
	require.Equal(t, want, out[0].Row.BalancingDay, "the displacement reports the row as stored")
	stored, err := tb.ReadRows(ctx, PlanRequest{From: at, To: at.Add(time.Minute), Eq: map[string]string{"malo_id": malos[2]}})
	require.NoError(t, err)
	require.Len(t, stored, 2)
	for _, s := range stored {
		require.Equal(t, want, s.BalancingDay.UTC())
	}
}

// A foreign writer commits between AppendCold's read and its commit: the
// compare-and-swap fails, AppendCold reloads, re-checks the guards against the
// new state and re-applies; every row ends up stored exactly once.
func TestAppendColdRetriesForeignCommit(t *testing.T) {
	ctx := context.Background()
	var foreign []meterstore.Row
	var e *env
	calls := 0
	e = newEnv(t, func(o *Options) {
		o.BeforeCommit = func(ctx context.Context, table, op string) error {
			if op != "cold append" {
				return nil
			}
			calls++
			if len(foreign) == 0 {
				return nil
			}
			// Another process: its own catalog state, a plain iceberg-go append.
			other, err := e.cat.Table(ctx, e.cfg)
			if err != nil {
				return err
			}
			rec, err := rowsToRecord(e.cfg, foreign, memory.DefaultAllocator)
			if err != nil {
				return err
			}
			rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
			if err != nil {
				return err
			}
			foreign = nil
			_, err = other.Iceberg().Append(ctx, rdr, nil)
			return err
		}
	})
	tb, w := archivedTable(t, e)
	snaps0, _ := tb.Snapshots(ctx)

	// 1. An unrelated foreign row lands in between: the correction is re-applied once.
	unrelated := mkRow(malos[3], opA, day0.Add(-72*time.Hour), "4.5", 1, opA)
	corr := mkRow(malos[0], opA, day0.Add(2*time.Hour), "8.125", 2, opA)
	foreign = []meterstore.Row{unrelated}
	calls = 0
	out, err := tb.AppendCold(ctx, []meterstore.Row{corr})
	require.NoError(t, err)
	require.Equal(t, 2, calls, "one lost commit, one retry")
	require.Equal(t, meterstore.Superseded, out[0].Effect)
	got := rowSet(readAll(t, tb))
	require.Equal(t, 1, got[rowKey(corr)])
	require.Equal(t, 1, got[rowKey(unrelated)])
	require.Len(t, readAll(t, tb), 4*96+2)
	snaps, _ := tb.Snapshots(ctx)
	require.Len(t, snaps, len(snaps0)+2, "the foreign snapshot and ours")
	require.Nil(t, snaps[len(snaps)-2].Watermark)
	require.True(t, snaps[len(snaps)-1].Watermark.Equal(w), "ours keeps the watermark")

	// 2. The foreign writer stored the very same correction: the re-check finds
	// it and the retry writes nothing (Duplicate), so it is not stored twice.
	same := mkRow(malos[2], opA, day0.Add(3*time.Hour), "2.75", 2, opA)
	foreign = []meterstore.Row{same}
	calls = 0
	out, err = tb.AppendCold(ctx, []meterstore.Row{same})
	require.NoError(t, err)
	require.Equal(t, 1, calls, "the retry had nothing left to commit")
	require.Equal(t, meterstore.Duplicate, out[0].Effect)
	got = rowSet(readAll(t, tb))
	require.Equal(t, 1, got[rowKey(same)])
	require.Len(t, readAll(t, tb), 4*96+3)

	// 3. A conflicting restatement committed in between: the retry refuses.
	restated := mkRow(malos[2], opA, day0.Add(4*time.Hour), "9.5", 2, opA)
	mine := restated
	mine.Value = decimal.RequireFromString("9.75")
	foreign = []meterstore.Row{restated}
	_, err = tb.AppendCold(ctx, []meterstore.Row{mine})
	require.ErrorIs(t, err, ErrRestatement)
	got = rowSet(readAll(t, tb))
	require.Equal(t, 1, got[rowKey(restated)])
	require.Zero(t, got[rowKey(mine)])

	// The lost attempts' data files (one per attempt) are orphans, with their
	// manifests; no committed file is.
	orphans, err := tb.DeleteOrphanFiles(ctx, 0, true)
	require.NoError(t, err)
	var data []string
	for _, o := range orphans {
		if strings.HasSuffix(o, ".parquet") {
			data = append(data, o)
		}
	}
	require.Len(t, data, 3)
}

// TestColdSecondOperatorSeesLongIntervals: a stored reading that starts long
// before a late correction still overlaps it when it is a P1M or P1Y value, and
// a second network operator for that channel is refused however far back the
// stored interval starts.
func TestColdSecondOperatorSeesLongIntervals(t *testing.T) {
	ctx := context.Background()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, berlin)
	for _, tc := range []struct {
		resolution string
		end        time.Time
		at         time.Time // the late correction, inside the stored interval
	}{
		{"P1M", start.AddDate(0, 1, 0), start.AddDate(0, 0, 30)},
		{"P1Y", start.AddDate(1, 0, 0), start.AddDate(0, 2, 14)},
	} {
		t.Run("resolution="+tc.resolution, func(t *testing.T) {
			e := newEnv(t)
			tb, err := e.cat.CreateTable(ctx, e.cfg)
			require.NoError(t, err)
			long := mkRow(malos[0], opA, start, "1200", 1, opA)
			to := tc.end.UTC()
			long.To, long.Resolution = &to, strp(tc.resolution)
			_, err = tb.CommitWindow(ctx, &SliceSource{Rows: []meterstore.Row{long}}, tc.end.AddDate(0, 1, 0))
			require.NoError(t, err)

			other := mkRow(malos[0], opA, tc.at, "7.25", 3, opB)
			_, err = tb.AppendCold(ctx, []meterstore.Row{other})
			require.ErrorIs(t, err, ErrSecondOperator, "%s stored from %s, correction at %s", tc.resolution, start, tc.at)
			same := mkRow(malos[0], opA, tc.end.Add(time.Hour), "1", 3, opB)
			_, err = tb.AppendCold(ctx, []meterstore.Row{same})
			require.NoError(t, err, "after the stored interval another operator may deliver")
		})
	}
}
