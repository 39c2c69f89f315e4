package catalog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
)

// TestCompactionRefusesAForeignIntervalOverHotRows: a file committed out of
// band holds a day whose interval starts below the watermark and ends above
// it, over a quarter-hour PostgreSQL holds above the watermark — at the same
// version (what the hot tier's no_overlap refuses) or of another operator
// (one_operator) — which no check of either tier saw (the foreign writer
// asked neither). Compaction, which would mark the day clean, compares the
// rows it rewrites that reach above the watermark with the hot tier's and
// refuses, naming the reading, both intervals and the rule; nothing is
// rewritten. A higher version of the same operator is a correction, and
// compacts.
func TestCompactionRefusesAForeignIntervalOverHotRows(t *testing.T) {
	for _, tc := range []struct {
		name string
		day  func(meterstore.Row) meterstore.Row
		want error
		rule string
	}{
		{"same version", func(r meterstore.Row) meterstore.Row { return r }, meterstore.ErrOverlap, "no_overlap across tiers"},
		{"another operator", func(r meterstore.Row) meterstore.Row {
			return mkRowLike(r, v10Feb+1, opB)
		}, meterstore.ErrSecondOperator, "one_operator across tiers"},
		{"control: a higher version", func(r meterstore.Row) meterstore.Row { return mkRowLike(r, v10Feb+1, opA) }, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, w := context.Background(), w10Feb
			_, tb, h := tableWithHotTier(t, w)
			tb.HoldAgainstHot(h.HoldReadings)
			archived := mkRow(malos[0], "tenant01", w.Add(-12*time.Hour), "1", v10Feb, opA)
			_, err := tb.CommitWindow(ctx, &SliceSource{Rows: []meterstore.Row{archived}}, w)
			require.NoError(t, err)
			quarter := quarterAbove(w)
			_, err = h.Write(ctx, []meterstore.Row{quarter})
			require.NoError(t, err)
			day := tc.day(gasDayAcross(w))
			commitOutOfBand(t, tb, []meterstore.Row{day})
			before := len(readAll(t, tb))

			res, err := tb.Compact(ctx, CompactOptions{Month: w, OpenMonthFiles: 1})
			if tc.want == nil {
				require.NoError(t, err)
				require.Len(t, res.Partitions, 1)
				return
			}
			var foreign *ForeignIntervalError
			require.True(t, errors.As(err, &foreign), "compacted %+v: %v", res, err)
			require.ErrorIs(t, err, tc.want)
			for _, want := range []string{malos[0], tc.rule, formatWatermark(day.From), formatWatermark(quarter.From), "remove"} {
				require.ErrorContains(t, err, want)
			}
			t.Logf("refused: %v", err)
			require.Empty(t, res.Partitions)
			require.Len(t, readAll(t, tb), before, "nothing rewritten")
			parts, err := tb.Partitions(ctx)
			require.NoError(t, err)
			require.Len(t, parts, 1)
			require.Equal(t, 2, parts[0].Files, "the archived file and the foreign one, not a compaction's")
		})
	}
}

// mkRowLike is r at version by op: its version scope names op.
func mkRowLike(r meterstore.Row, version uint64, op string) meterstore.Row {
	like := mkRow(r.MaloID, *r.Extra[0], r.From, r.Value.String(), version, op)
	like.To, like.Resolution = r.To, r.Resolution
	return like
}

// The rows the tests across the tiers share: w10Feb is the watermark, a
// gas day at v10Feb reaches from below it to above it, and a quarter-hour at
// the same version lies inside the day, above the watermark.
var w10Feb = time.Date(2025, 2, 10, 0, 0, 0, 0, time.UTC)

const v10Feb = 20250210000001

func gasDayAcross(w time.Time) meterstore.Row {
	day := mkRow(malos[0], "tenant01", w.Add(-time.Hour), "24", v10Feb, opA)
	end := w.Add(23 * time.Hour)
	day.To, day.Resolution = &end, strp("P1D")
	return day
}

func quarterAbove(w time.Time) meterstore.Row {
	return mkRow(malos[0], "tenant01", w.Add(15*time.Minute), "1", v10Feb, opA)
}

// tableWithHotTier is a new table in a new env with a hot tier of its own
// around w (withHotTier).
func tableWithHotTier(t *testing.T, w time.Time) (*env, *Table, *hot.Store) {
	t.Helper()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(context.Background(), e.cfg)
	require.NoError(t, err)
	return e, tb, withHotTier(t, e, tb, w)
}

// withHotTier is a PostgreSQL hot tier of tb's table in e's database, with
// partitions around w, whose writes compare their rows with tb's reaching
// into them — as the store wires the two (store/schema.go). The caller sets
// tb's hold.
func withHotTier(t *testing.T, e *env, tb *Table, w time.Time) *hot.Store {
	t.Helper()
	ctx := context.Background()
	h := hot.New(e.pool, e.cfg)
	require.NoError(t, h.CreateTables(ctx, w))
	require.NoError(t, h.EnsurePartitions(ctx, w.Add(-48*time.Hour), w.Add(48*time.Hour)))
	h.CheckAgainstCold(func(ctx context.Context, malos []string, lo, hi time.Time) (time.Time, []meterstore.Row, error) {
		if err := tb.Refresh(ctx); err != nil {
			return time.Time{}, nil, err
		}
		return tb.Reaching(ctx, malos, lo, hi)
	})
	return h
}

// hotRows is every row h holds in attached partitions.
func hotRows(t *testing.T, h *hot.Store) []meterstore.Row {
	t.Helper()
	var out []meterstore.Row
	require.NoError(t, h.Scan(context.Background(), hot.ScanRequest{}, func(rs []meterstore.Row) error {
		out = append(out, rs...)
		return nil
	}))
	return out
}

// holdStep names a point of a history commit a hot write is driven into.
type holdStep string

const (
	beforeHold  holdStep = "files written, before the hold"
	underHold   holdStep = "under the hold, before the commit"
	afterCommit holdStep = "under the hold, after the commit"
	afterHold   holdStep = "after the hold"
)

// TestHistoryRacingAHotWrite drives a hot write of a quarter-hour into a
// history commit of a gas day reaching over it, at every point of the commit
// the two can meet: before the hold the history's rows are checked against
// PostgreSQL's (the hot write lands, the history is refused); under the hold
// the hot write waits for the readings' locks and, after the commit, reads
// the day from Iceberg (refused); after the hold likewise. Each time one of
// them is refused with the no_overlap rule, and the two tiers hold one of the
// rows, never both.
func TestHistoryRacingAHotWrite(t *testing.T) {
	for _, step := range []holdStep{beforeHold, underHold, afterCommit, afterHold} {
		t.Run(string(step), func(t *testing.T) {
			ctx, w := context.Background(), w10Feb
			e, tb, h := tableWithHotTier(t, w)
			race := &hotWriteRace{t: t, e: e, h: h, step: step, row: quarterAbove(w)}
			tb.HoldAgainstHot(race.hold)
			f, err := tb.Fence(ctx, nil)
			require.NoError(t, err)
			_, _, histErr := tb.CommitHistory(ctx, f, []meterstore.Row{gasDayAcross(w)}, w)
			hotErr := race.wait()
			require.True(t, race.ran, "the hot write ran")
			t.Logf("history: %v; hot write: %v", histErr, hotErr)
			cold, stored := readAll(t, tb), hotRows(t, h)
			if step == beforeHold {
				require.ErrorIs(t, histErr, meterstore.ErrOverlap)
				require.NoError(t, hotErr)
				require.Empty(t, cold)
				require.Len(t, stored, 1)
				return
			}
			require.NoError(t, histErr)
			require.ErrorIs(t, hotErr, meterstore.ErrOverlap)
			require.ErrorContains(t, hotErr, "no_overlap across tiers")
			require.Len(t, cold, 1)
			require.Empty(t, stored)
		})
	}
}

// hotWriteRace is a HotHold that runs the hot tier's hold and writes row to
// the hot tier at step: before or after the hold in line, under it from
// another goroutine, which must be seen waiting for the readings' locks
// before the commit goes on.
type hotWriteRace struct {
	t    *testing.T
	e    *env
	h    *hot.Store
	step holdStep
	row  meterstore.Row
	ran  bool
	done chan error
}

func (r *hotWriteRace) hold(ctx context.Context, rows []meterstore.Row, w time.Time, commit func(context.Context) error) error {
	r.at(ctx, beforeHold)
	err := r.h.HoldReadings(ctx, rows, w, func(ctx context.Context) error {
		r.at(ctx, underHold)
		if err := commit(ctx); err != nil {
			return err
		}
		r.at(ctx, afterCommit)
		return nil
	})
	r.at(ctx, afterHold)
	return err
}

func (r *hotWriteRace) at(ctx context.Context, s holdStep) {
	if s != r.step {
		return
	}
	r.ran = true
	r.done = make(chan error, 1)
	if s == beforeHold || s == afterHold {
		_, err := r.h.Write(ctx, []meterstore.Row{r.row})
		r.done <- err
		return
	}
	go func() {
		_, err := r.h.Write(context.Background(), []meterstore.Row{r.row})
		r.done <- err
	}()
	r.waitingForLocks(ctx)
}

// waitingForLocks waits until a session of the database waits for an
// advisory lock: the hot write, blocked by the hold.
func (r *hotWriteRace) waitingForLocks(ctx context.Context) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		require.NoError(r.t, r.e.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n))
		if n > 0 {
			return
		}
		select {
		case err := <-r.done:
			r.t.Fatalf("the hot write did not wait for the hold: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	r.t.Fatal("the hot write never waited for the readings' locks")
}

func (r *hotWriteRace) wait() error {
	if r.done == nil {
		return nil
	}
	return <-r.done
}

// commitOutOfBand adds rows to tb in files and a commit of its own that
// keeps the watermark, as another writer of the Iceberg table would: no rule
// of either tier is asked.
func commitOutOfBand(t *testing.T, tb *Table, rows []meterstore.Row) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, tb.Refresh(ctx))
	files, err := tb.writeFiles(ctx, tb.Iceberg(), rowPages(rows, 1000), defaultBounds)
	require.NoError(t, err)
	tx := tb.Iceberg().NewTransaction()
	require.NoError(t, tx.AddDataFiles(ctx, files, iceberg.Properties{WatermarkProperty: formatWatermark(*mustWatermark(t, tb))}))
	_, err = tb.commitTx(ctx, tx, "out-of-band append")
	require.NoError(t, err)
}
