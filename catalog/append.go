package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/pglock"
)

// Cold-append tuning.
const (
	ColdAppendLeaseWait = 14 * time.Second
	coldAppendAttempts  = 5
)

// LeaseName is the advisory-lock name serialising cold writers of a table.
func LeaseName(table string) string { return "cold-append:" + table }

// readingKey is the merge key of a row.
func (t *Table) readingKey(r *meterstore.Row) string {
	var b strings.Builder
	b.WriteString(r.MaloID)
	b.WriteByte(0)
	b.WriteString(r.ObisCode)
	b.WriteByte(0)
	b.WriteString(r.From.UTC().Format(time.RFC3339Nano))
	if t.cfg.IdentifyByMelo() {
		b.WriteByte(0)
		if r.MeloID != nil {
			b.WriteString(*r.MeloID)
		}
	}
	b.WriteString(t.channelIdentity(r))
	return b.String()
}

// channelKey identifies a channel (merge key without "from").
func (t *Table) channelKey(r *meterstore.Row) string {
	var b strings.Builder
	b.WriteString(r.MaloID)
	b.WriteByte(0)
	b.WriteString(r.ObisCode)
	if t.cfg.IdentifyByMelo() {
		b.WriteByte(0)
		if r.MeloID != nil {
			b.WriteString(*r.MeloID)
		}
	}
	b.WriteString(t.channelIdentity(r))
	return b.String()
}

func (t *Table) channelIdentity(r *meterstore.Row) string {
	var b strings.Builder
	for i, c := range t.cfg.ExtraColumns() {
		if c.Kind != meterstore.Identity || i >= len(r.Extra) {
			continue
		}
		b.WriteByte(0)
		if r.Extra[i] != nil {
			b.WriteString(*r.Extra[i])
		}
	}
	return b.String()
}

func rowEnd(r *meterstore.Row) time.Time {
	if r.To != nil {
		return *r.To
	}
	return r.From.Add(time.Microsecond) // a point reading occupies its instant
}

// AppendCold appends late corrections (rows below the watermark) in one commit
// that keeps the watermark unchanged, under the table's cold-append lease.
// Exact duplicates are skipped; what the hot tier's constraints refuse is
// refused here too, against the rows stored over the intervals written and
// among the rows themselves — a different assertion under a stored version
// (ErrRestatement), two overlapping intervals of one reading at one version
// (ErrOverlap), a second network operator for a reading (ErrSecondOperator)
// — and refuses the whole call, writing nothing. A commit lost to
// another writer is reloaded, re-checked and re-applied a bounded number of times.
// Like a window, the rows are written in files per (partition, version); a
// correction batch usually restates one version, so usually one file each.
func (t *Table) AppendCold(ctx context.Context, rows []meterstore.Row) (_ []meterstore.Displacement, err error) {
	defer t.explainObjectStore(&err)
	if len(rows) == 0 {
		return nil, nil
	}
	if t.c.opt.Pool == nil {
		return nil, errors.New("catalog: cold appends need Options.Pool for the cold-append lease")
	}
	rows, err = t.validRows(rows)
	if err != nil {
		return nil, err
	}
	lease, err := pglock.Acquire(ctx, t.c.opt.Pool, LeaseName(t.cfg.Name()), ColdAppendLeaseWait)
	if err != nil {
		return nil, fmt.Errorf("cold table %s: cold append: %w", t.cfg.Name(), err)
	}
	defer lease.Release()

	var lastErr error
	for attempt := 0; attempt < coldAppendAttempts; attempt++ {
		if err := t.Refresh(ctx); err != nil {
			return nil, err
		}
		out, err := t.appendColdOnce(ctx, rows)
		if err == nil {
			return out, nil
		}
		if !errors.Is(err, ErrCommitConflict) {
			return nil, err
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 50 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("cold table %s: cold append gave up after %d attempts: %w", t.cfg.Name(), coldAppendAttempts, lastErr)
}

// validRows checks the rows with the same validator the hot tier runs, on a
// copy normalised as it will be stored: a late correction is held to exactly
// the rules of a row written above the watermark.
func (t *Table) validRows(rows []meterstore.Row) ([]meterstore.Row, error) {
	out := slices.Clone(rows)
	v := t.cfg.NewRowValidator()
	for i := range out {
		if err := v.ValidateRow(&out[i]); err != nil {
			return nil, fmt.Errorf("cold table %s: cold append: %w", t.cfg.Name(), err)
		}
	}
	return out, nil
}

func (t *Table) appendColdOnce(ctx context.Context, rows []meterstore.Row) ([]meterstore.Displacement, error) {
	tbl := t.Iceberg()
	wm, err := t.watermarkFrom(ctx, tbl, tbl.CurrentSnapshot())
	if err != nil {
		return nil, err
	}
	for i := range rows {
		if r := &rows[i]; !r.From.Before(wm) {
			return nil, fmt.Errorf("cold table %s: malo %s %s at %s is not below the watermark %s (it belongs to the hot tier): %w",
				t.cfg.Name(), r.MaloID, r.ObisCode, formatWatermark(r.From), formatWatermark(wm), ErrAboveWatermark)
		}
	}
	stored, err := t.storedOverlapping(ctx, tbl, rows)
	if err != nil {
		return nil, err
	}
	byReading := map[string][]meterstore.Row{}
	for i := range stored {
		s := &stored[i]
		byReading[t.readingKey(s)] = append(byReading[t.readingKey(s)], *s)
	}

	out := make([]meterstore.Displacement, len(rows))
	var write []meterstore.Row
	for i := range rows {
		r := rows[i]
		out[i].Row = r
		key := t.readingKey(&r)
		existing := byReading[key]
		var winner *meterstore.Row
		dup := false
		for j := range existing {
			s := &existing[j]
			if s.Version == r.Version {
				if !meterstore.SameAssertion(*s, r) {
					return nil, t.restatementError(s, &r)
				}
				dup = true
			}
			if winner == nil || s.Version > winner.Version {
				winner = s
			}
		}
		var w *meterstore.Row
		if winner != nil {
			c := *winner
			w = &c
		}
		switch {
		case dup:
			out[i].Effect = meterstore.Duplicate
			if w.Version > r.Version {
				out[i].Outranking = w
			}
			continue
		case w == nil:
			out[i].Effect = meterstore.Inserted
		case w.Version < r.Version:
			out[i].Effect = meterstore.Superseded
			out[i].Superseded = w
		default:
			out[i].Effect = meterstore.Shadowed
			out[i].Outranking = w
		}
		write = append(write, r)
		// Later rows of this call see this one (a batch carrying a reading twice).
		byReading[key] = append(byReading[key], r)
	}
	if len(write) == 0 {
		return out, nil
	}
	if err := t.checkIntervals(stored, write); err != nil {
		return nil, err
	}
	sortRowsKeyset(write)
	files, err := t.writeFiles(ctx, tbl, rowPages(write, 50_000), defaultBounds)
	if err != nil {
		return nil, err
	}
	props := iceberg.Properties{WatermarkProperty: formatWatermark(wm)}
	if _, err := t.commitFiles(ctx, tbl, "cold append", files, props); err != nil {
		return nil, err
	}
	return out, nil
}

// restatementError refuses r, stated under the version of row s (stored, or
// earlier in the same write) with another assertion; by another network
// operator it is a second operator too.
func (t *Table) restatementError(s, r *meterstore.Row) error {
	err := fmt.Errorf("cold table %s: malo %s %s at %s version %d: stated as %s %s %s (scope %s), restated as %s %s %s (scope %s); a version identifies one assertion: a corrected value needs a higher version: %w",
		t.cfg.Name(), r.MaloID, r.ObisCode, formatWatermark(r.From), r.Version, s.Value, s.Unit, s.Quality, s.VersionScope, r.Value, r.Unit, r.Quality, r.VersionScope, ErrRestatement)
	if s.Operator() != r.Operator() {
		return fmt.Errorf("%w (and %w)", err, ErrSecondOperator)
	}
	return err
}

// storedOverlapping reads what is stored for the readings of rows: every row
// of their MaLos whose interval overlaps their range [lo, hi) — by its end,
// not by a look-back from its start, so a P1M or P1Y value that began long
// before is seen; a point reading (no "to") occupies its instant. Only files
// whose bounds of malo_id, "from" and "to" admit such a row are opened.
func (t *Table) storedOverlapping(ctx context.Context, tbl *table.Table, rows []meterstore.Row) ([]meterstore.Row, error) {
	lo, hi := rows[0].From, rows[0].From
	malos := map[string]bool{}
	for i := range rows {
		r := &rows[i]
		malos[r.MaloID] = true
		if r.From.Before(lo) {
			lo = r.From
		}
		if e := rowEnd(r); e.After(hi) {
			hi = e
		}
	}
	ends := iceberg.NewOr(iceberg.GreaterThan(iceberg.Reference("to"), iceberg.Timestamp(lo.UnixMicro())),
		iceberg.NewAnd(iceberg.IsNull(iceberg.Reference("to")), iceberg.GreaterThanEqual(iceberg.Reference("from"), iceberg.Timestamp(lo.UnixMicro()))))
	return t.readFiltered(ctx, tbl, nil, iceberg.NewAnd(
		iceberg.IsIn(iceberg.Reference("malo_id"), slices.Sorted(mapsKeys(malos))...),
		iceberg.LessThan(iceberg.Reference("from"), iceberg.Timestamp(hi.UnixMicro())),
		ends))
}

func mapsKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func sortRowsKeyset(rows []meterstore.Row) {
	slices.SortStableFunc(rows, func(a, b meterstore.Row) int {
		if c := strings.Compare(a.MaloID, b.MaloID); c != 0 {
			return c
		}
		if c := strings.Compare(a.ObisCode, b.ObisCode); c != 0 {
			return c
		}
		if c := a.From.Compare(b.From); c != 0 {
			return c
		}
		switch {
		case a.Version < b.Version:
			return -1
		case a.Version > b.Version:
			return 1
		}
		return 0
	})
}
