package archive

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/hot"
)

// Backfill commits settled history that PostgreSQL never held — a load from
// another system, the demo's portfolio — straight to Iceberg as one window
// ending at until: the rows checked by the rules every write path applies
// (catalog.Table.CommitHistory: the row validator, one operator per reading,
// no restatement under a version; identical redeliveries written once) and
// the watermark moved to until in the same commit. Loading history this way
// costs what archival costs, not a constrained PostgreSQL write and then an
// archival of every row.
//
// It holds the archival lease (ErrLeaseHeld when another process does), takes
// only a partition boundary for until, as archival does, and refuses while
// PostgreSQL holds a row below until or a partition detached by an
// interrupted archival: moving the watermark over such a row would put it
// where no query looks (invariant 1).
func (a *Archiver) Backfill(ctx context.Context, until time.Time, rows []meterstore.Row) (Window, int, error) {
	return a.backfill(ctx, until, func(ctx context.Context, f catalog.Fence, held []meterstore.Row) (catalog.CommitResult, int, error) {
		return a.cold.CommitHistory(ctx, f, append(rows, held...), until)
	})
}

// BackfillFrom is Backfill for history too large to hold: src yields the rows
// in catalog.CompareHistoryOrder, and they are checked and written as they
// come (catalog.Table.CommitHistoryFrom), in one commit all the same.
func (a *Archiver) BackfillFrom(ctx context.Context, until time.Time, src catalog.RowSource) (Window, int, error) {
	return a.backfill(ctx, until, func(ctx context.Context, f catalog.Fence, held []meterstore.Row) (catalog.CommitResult, int, error) {
		return a.cold.CommitHistoryFrom(ctx, f, catalog.MergeHistory(src, held), until)
	})
}

// historyCommit commits a history under the fence f, with held, the rows a
// writer put below its end since it was checked, joining it.
type historyCommit func(ctx context.Context, f catalog.Fence, held []meterstore.Row) (catalog.CommitResult, int, error)

func (a *Archiver) backfill(ctx context.Context, until time.Time, commit historyCommit) (Window, int, error) {
	var win Window
	var dups int
	out, err := a.underLease(ctx, func(r *run, out *Outcome) error {
		until = until.UTC()
		if !a.hot.PartitionStart(until).Equal(until) {
			return fmt.Errorf("backfill %s up to %s: not a partition boundary (the next is %s); windows end at one",
				a.cfg.Name(), until.Format(time.RFC3339), a.hot.PartitionStart(until).Add(a.cfg.PartitionStep()).Format(time.RFC3339))
		}
		if !until.After(out.Watermark) {
			return fmt.Errorf("backfill %s up to %s: the watermark is already %s", a.cfg.Name(), until.UTC().Format(time.RFC3339), out.Watermark.UTC().Format(time.RFC3339))
		}
		det, err := a.hot.DetachedPartitions(ctx)
		if err != nil {
			return err
		}
		if len(det) > 0 {
			return fmt.Errorf("backfill %s: partition %s is detached by an interrupted archival; run msql archive first: %w", a.cfg.Name(), det[0].Name, ErrInvariant)
		}
		n, err := a.hot.RowsBelow(ctx, until)
		if err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("backfill %s up to %s: PostgreSQL holds %d rows below it, which the new watermark would hide; archive them first: %w",
				a.cfg.Name(), until.UTC().Format(time.RFC3339), n, ErrInvariant)
		}
		start := time.Now()
		res, d, err := a.commitHistory(ctx, r, until, commit)
		if err != nil {
			return fmt.Errorf("backfill %s: %w", a.cfg.Name(), err)
		}
		win = Window{From: out.Watermark, To: until, Rows: res.Rows, Files: res.Files, Bytes: res.Bytes, Watermark: res.Watermark, Duration: time.Since(start)}
		dups = d
		return nil
	})
	if err == nil && out.LeaseContended {
		err = fmt.Errorf("backfill %s: %w", a.cfg.Name(), ErrLeaseHeld)
	}
	return win, dups, err
}

// commitHistory claims the range below until (hot.ClaimBelow) and commits the
// history with the watermark until. The claimed partitions were empty at the
// check for rows below until and are dropped; a row a writer put there since
// joins the commit, and its partition is dropped after it. A commit that fails
// withdraws the claim to the watermark then committed; a partition holding
// such a row stays detached, for the next archival run to recover.
func (a *Archiver) commitHistory(ctx context.Context, r *run, until time.Time, commit historyCommit) (catalog.CommitResult, int, error) {
	claimed, err := a.hot.ClaimBelow(ctx, r.lease, until)
	if err != nil {
		return catalog.CommitResult{}, 0, err
	}
	var held []hot.Partition
	var rows []meterstore.Row
	for _, p := range claimed {
		n, err := a.hot.CountRows(ctx, p.Name)
		if err != nil {
			return catalog.CommitResult{}, 0, err
		}
		if n == 0 {
			if err := a.hot.Drop(ctx, p); err != nil {
				return catalog.CommitResult{}, 0, err
			}
			continue
		}
		held = append(held, p)
		err = a.eachPage(ctx, p, func(page []meterstore.Row) error {
			rows = append(rows, page...)
			return nil
		})
		if err != nil {
			return catalog.CommitResult{}, 0, err
		}
	}
	res, dups, err := commit(ctx, r.fence, rows)
	if err != nil {
		return res, dups, errors.Join(err, a.withdrawClaim(ctx, r))
	}
	r.fence = r.fence.After(res)
	for _, p := range held {
		if err := a.hot.Drop(ctx, p); err != nil {
			return res, dups, err
		}
	}
	return res, dups, nil
}

// withdrawClaim claims the committed watermark again after a commit that
// failed: writers below the claim's end are refused no longer. The watermark is
// read back, not assumed — a commit reported failed may have happened. A run
// whose lease was lost withdraws nothing (the claim is the new holder's).
func (a *Archiver) withdrawClaim(ctx context.Context, r *run) error {
	if err := a.cold.Refresh(ctx); err != nil {
		return fmt.Errorf("withdraw the claim of %s: %w", a.cfg.Name(), err)
	}
	w, err := a.cold.Watermark(ctx)
	if err != nil {
		return fmt.Errorf("withdraw the claim of %s: %w", a.cfg.Name(), err)
	}
	if _, err := a.hot.ClaimBelow(ctx, r.lease, w); err != nil {
		return fmt.Errorf("withdraw the claim of %s: %w", a.cfg.Name(), err)
	}
	return nil
}
