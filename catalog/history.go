package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/meterstore/meterstore"
)

// CommitHistory commits settled history that PostgreSQL never held (a load
// from another system, a demo portfolio) as one archival window: the rows,
// validated as a cold append validates them, and newWatermark in one commit,
// written exactly as CommitWindow writes a window. Every row must lie at or
// above the current watermark (below it, a row is a late correction:
// AppendCold) and below newWatermark (ErrAboveWatermark). An identical
// redelivery is written once and counted in the returned duplicates; what the
// hot tier's constraints refuse — a different assertion under a version
// (ErrRestatement), overlapping intervals of one reading at one version
// (ErrOverlap), a second network operator for a reading (ErrSecondOperator),
// among the rows or against a stored interval reaching into theirs — refuses
// the whole window, writing nothing.
//
// The caller (archive.Archiver.Backfill) holds the archival lease and makes
// sure PostgreSQL holds no row that the new watermark would put out of sight;
// the rows reaching above newWatermark are checked against PostgreSQL's under
// the hold HoldAgainstHot set. It commits as CommitFenced does,
// under the caller's fence: a window or a history committed since the fence
// was read refuses it (ErrFenced), as does a lost lease.
func (t *Table) CommitHistory(ctx context.Context, f Fence, rows []meterstore.Row, newWatermark time.Time) (CommitResult, int, error) {
	rows, err := t.validRows(rows)
	if err != nil {
		return CommitResult{}, 0, err
	}
	tbl := t.Iceberg()
	cur := f.Watermark
	for i := range rows {
		if r := &rows[i]; r.From.Before(cur) {
			return CommitResult{}, 0, fmt.Errorf("cold table %s: history: malo %s %s at %s is below the watermark %s: %w; send late corrections through Append",
				t.cfg.Name(), r.MaloID, r.ObisCode, formatWatermark(r.From), formatWatermark(cur), ErrBelowWatermark)
		}
	}
	sortRowsKeyset(rows)
	rows, dups, err := t.oncePerAssertion(rows)
	if err != nil {
		return CommitResult{}, 0, err
	}
	if len(rows) > 0 {
		// A stored interval can reach above the watermark (a monthly value
		// archived with its "from"): the rules see what overlaps the history.
		stored, err := t.storedOverlapping(ctx, tbl, rows)
		if err != nil {
			return CommitResult{}, 0, err
		}
		if err := t.checkIntervals(stored, rows); err != nil {
			return CommitResult{}, 0, fmt.Errorf("history: %w", err)
		}
	}
	res, err := t.commitFenced(ctx, f, "history", &SliceSource{Rows: rows}, newWatermark,
		func() []meterstore.Row { return ReachingAbove(rows, newWatermark) })
	return res, dups, err
}

// oncePerAssertion drops identical redeliveries from rows sorted in keyset
// order and refuses a restatement under a version among them.
func (t *Table) oncePerAssertion(rows []meterstore.Row) ([]meterstore.Row, int, error) {
	type versioned struct {
		key     string
		version uint64
	}
	stored := map[versioned]int{} // index into out
	out := rows[:0]
	dups := 0
	for i := range rows {
		r := rows[i]
		k := versioned{t.readingKey(&r), r.Version}
		if j, ok := stored[k]; ok {
			if !meterstore.SameAssertion(out[j], r) {
				return nil, 0, fmt.Errorf("history: %w", t.restatementError(&out[j], &r))
			}
			dups++
			continue
		}
		stored[k] = len(out)
		out = append(out, r)
	}
	return out, dups, nil
}
