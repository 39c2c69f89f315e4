package catalog

import (
	"context"
	"time"

	"github.com/meterstore/meterstore"
)

// HotHold runs commit — a cold commit moving the watermark to w whose rows
// reach above w — under the hot tier's locks on the readings of rows, after
// refusing a row that conflicts with one PostgreSQL holds
// (hot.Store.HoldReadings). Rows ending at or below w meet no row of
// PostgreSQL's, which holds rows at or above w only.
type HotHold func(ctx context.Context, rows []meterstore.Row, w time.Time, commit func(context.Context) error) error

// HoldAgainstHot makes a history commit (CommitHistory, CommitHistoryFrom)
// check the rows it writes that reach above its watermark against the hot
// tier's rows, and commit under hold. A history lies below every row
// PostgreSQL holds (the caller makes sure of that), but an interval of it may
// end above the history's end (a gas day loaded with the UTC day it starts
// in), over hot rows no check of this tier sees. Without it a history is
// checked against the cold tier only.
func (t *Table) HoldAgainstHot(hold HotHold) {
	t.mu.Lock()
	t.holdHot = hold
	t.mu.Unlock()
}

func (t *Table) hotHold() HotHold {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.holdHot
}

// underHotHold runs commit — of rows, among others, reaching above the
// watermark w — under the hold HoldAgainstHot set, which refuses a row that
// conflicts with one PostgreSQL holds; without a hold, or with no row
// reaching above w, it just commits.
func (t *Table) underHotHold(ctx context.Context, rows []meterstore.Row, w time.Time, commit func(context.Context) error) error {
	if hold := t.hotHold(); hold != nil && len(rows) > 0 {
		return hold(ctx, rows, w, commit)
	}
	return commit(ctx)
}

// ReachingAbove is the rows whose interval ends above w: those of a cold
// write to check against the hot tier.
func ReachingAbove(rows []meterstore.Row, w time.Time) []meterstore.Row {
	var out []meterstore.Row
	for i := range rows {
		if rowEnd(&rows[i]).After(w) {
			out = append(out, rows[i])
		}
	}
	return out
}
