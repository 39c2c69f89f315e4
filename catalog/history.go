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
// redelivery is written once and counted in the returned duplicates; a
// different assertion under a version (ErrRestatement) or a second network
// operator for a reading (ErrSecondOperator) refuses the whole window,
// writing nothing.
//
// It does not check the hot tier: the caller (archive.Archiver.Backfill)
// holds the archival lease and makes sure PostgreSQL holds no row that the
// new watermark would put out of sight.
func (t *Table) CommitHistory(ctx context.Context, rows []meterstore.Row, newWatermark time.Time) (CommitResult, int, error) {
	rows, err := t.validRows(rows)
	if err != nil {
		return CommitResult{}, 0, err
	}
	tbl := t.Iceberg()
	cur, err := t.watermarkFrom(ctx, tbl, tbl.CurrentSnapshot())
	if err != nil {
		return CommitResult{}, 0, err
	}
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
	res, err := t.CommitWindow(ctx, &SliceSource{Rows: rows}, newWatermark)
	return res, dups, err
}

// oncePerAssertion drops identical redeliveries from rows sorted in keyset
// order and refuses what a cold append refuses among them: a restatement
// under a version, and a second operator for an overlapping reading.
func (t *Table) oncePerAssertion(rows []meterstore.Row) ([]meterstore.Row, int, error) {
	type versioned struct {
		key     string
		version uint64
	}
	stored := map[versioned]int{} // index into out
	// The latest end of the channel's readings so far, per operator: rows come
	// in ascending "from" per channel, so an earlier reading overlaps this one
	// exactly when its end is past this one's start.
	ends := map[string]map[string]time.Time{}
	out := rows[:0]
	dups := 0
	for i := range rows {
		r := rows[i]
		ch := t.channelKey(&r)
		op := operatorOf(r.VersionScope)
		if ends[ch] == nil {
			ends[ch] = map[string]time.Time{}
		}
		for other, end := range ends[ch] {
			if other != op && end.After(r.From) {
				return nil, 0, fmt.Errorf("cold table %s: history: malo %s %s at %s: operator %s, but %s delivered an overlapping reading: %w",
					t.cfg.Name(), r.MaloID, r.ObisCode, formatWatermark(r.From), op, other, ErrSecondOperator)
			}
		}
		k := versioned{t.readingKey(&r), r.Version}
		if j, ok := stored[k]; ok {
			if !meterstore.SameAssertion(out[j], r) {
				s := out[j]
				return nil, 0, fmt.Errorf("cold table %s: history: malo %s %s at %s version %d: delivered as %s %s %s and as %s %s %s: %w",
					t.cfg.Name(), r.MaloID, r.ObisCode, formatWatermark(r.From), r.Version, s.Value, s.Unit, s.Quality, r.Value, r.Unit, r.Quality, ErrRestatement)
			}
			dups++
			continue
		}
		if e := rowEnd(&r); e.After(ends[ch][op]) {
			ends[ch][op] = e
		}
		stored[k] = len(out)
		out = append(out, r)
	}
	return out, dups, nil
}
