package catalog

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/pglock"
)

// TestFencedCommitRefusesAWindowCommittedMeanwhile: an archiver that read the
// watermark, then lost the race for its window to another handle's commit,
// is refused — also once its handle has seen that commit, whose watermark is
// the one it would commit (the same window twice, not a pass) — and so is a
// history load under the same fence. A cold append between the fence and the
// commit carries the watermark unchanged and fences nothing.
func TestFencedCommitRefusesAWindowCommittedMeanwhile(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	other, err := e.cat.Table(ctx, e.cfg)
	require.NoError(t, err)
	rows := genRows(day0, 8, opA, 1)
	end := day0.Add(24 * time.Hour)

	f, err := tb.Fence(ctx, nil)
	require.NoError(t, err)
	_, err = other.CommitWindow(ctx, &SliceSource{Rows: rows}, end)
	require.NoError(t, err)
	_, err = tb.CommitFenced(ctx, f, &SliceSource{Rows: rows}, end)
	require.ErrorIs(t, err, ErrFenced)
	require.NoError(t, tb.Refresh(ctx))
	_, err = tb.CommitFenced(ctx, f, &SliceSource{Rows: rows}, end)
	require.ErrorIs(t, err, ErrFenced, "an equal watermark committed by someone else is a conflict")
	_, _, err = tb.CommitHistory(ctx, f, rows, end)
	require.ErrorIs(t, err, ErrFenced)
	require.Len(t, readAll(t, tb), len(rows), "the window is stored once")

	f, err = tb.Fence(ctx, nil)
	require.NoError(t, err)
	_, err = other.AppendCold(ctx, genRows(day0, 1, opA, 2))
	require.NoError(t, err)
	next := genRows(end, 8, opA, 1)
	res, err := tb.CommitFenced(ctx, f, &SliceSource{Rows: next}, end.Add(24*time.Hour))
	require.NoError(t, err, "a late correction between the fence and the commit moves no watermark")
	require.EqualValues(t, len(next), res.Rows)
	_, err = tb.CommitFenced(ctx, f.After(res), &SliceSource{}, end.Add(48*time.Hour))
	require.NoError(t, err, "the fence after a commit is the run's next")
}

// TestFencedCommitNeedsItsLease: a commit under a lease that ended is refused
// before anything is written.
func TestFencedCommitNeedsItsLease(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	lease, err := pglock.Acquire(ctx, e.pool, "archive:"+e.cfg.Name(), time.Second)
	require.NoError(t, err)
	f, err := tb.Fence(ctx, lease)
	require.NoError(t, err)
	lease.Release()
	_, err = tb.CommitFenced(ctx, f, &SliceSource{Rows: genRows(day0, 8, opA, 1)}, day0.Add(24*time.Hour))
	require.ErrorIs(t, err, ErrFenced)
	require.ErrorIs(t, err, pglock.ErrLeaseLost)
	require.Zero(t, tb.CurrentSnapshotID())
}
