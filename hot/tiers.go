package hot

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/pglock"
)

// ColdRows reads the cold tier's rows of the given MaLos that may overlap an
// interval within [lo, hi): those starting before hi whose "to" lies above
// lo, as of the cold tier's current state, and that state's watermark.
type ColdRows func(ctx context.Context, malos []string, lo, hi time.Time) (watermark time.Time, rows []meterstore.Row, err error)

// CheckAgainstCold makes Write compare its fresh intervals with the cold
// tier's rows read by cold. Without it Write checks PostgreSQL's rows only —
// and an interval archived with its "from" below the watermark may reach above
// it (a gas day, 05:00Z–05:00Z, archived with the UTC day it starts in), where
// no constraint of this tier sees it.
func (s *Store) CheckAgainstCold(cold ColdRows) {
	s.mu.Lock()
	s.cold = cold
	s.mu.Unlock()
}

func (s *Store) coldRows() ColdRows {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cold
}

// checksAcrossTiers reports whether Write compares its fresh intervals with
// the cold tier's (checkAcrossTiers).
func (s *Store) checksAcrossTiers() bool {
	return s.coldRows() != nil && s.checksAcrossPartitions()
}

// checkAcrossTiers refuses a fresh row overlapping an interval of the same
// reading and version that the cold tier holds or an archival is moving
// there. It runs after the COPY, under the readings' locks, so the rows it
// reads are complete:
//
//   - a cold writer reaching above the watermark holds the same locks through
//     its commit (HoldReadings), so its rows are committed or not yet checked;
//   - an archival claims its window (ClaimBelow) with DDL on the parent, which
//     waits for this transaction, so every claim it makes is older than the
//     COPY. The claimed partitions stay in PostgreSQL, detached, until the
//     archival's commit is in Iceberg: read first, then the cold tier, no
//     window's rows fall between the two reads.
//
// detached is the detached partitions as readPrior listed them under the
// parent's lock.
func (s *Store) checkAcrossTiers(ctx context.Context, tx pgx.Tx, detached map[string]bool, ds []meterstore.Displacement, fresh []int) error {
	if !s.checksAcrossTiers() || len(fresh) == 0 {
		return nil
	}
	cold := s.coldRows()
	rows := make([]*meterstore.Row, len(fresh))
	for j, i := range fresh {
		rows[j] = &ds[i].Row
	}
	names, lo, hi := spanOf(rows)
	moving, err := s.movingRows(ctx, tx, detached, names, lo, hi)
	if err != nil {
		return err
	}
	w, stored, err := cold(ctx, names, lo, hi)
	if err != nil {
		return fmt.Errorf("write %s: check intervals against the cold tier: %w", s.cfg.Name(), err)
	}
	pk, err := s.primaryKey(ctx, tx)
	if err != nil {
		return err
	}
	id := s.identityOf(identityOf(pk))
	if c := firstConflict(id, append(stored, moving...), rows); c != nil {
		return s.tierConflict(c, w)
	}
	return nil
}

// movingRows is detachedReaching in a savepoint of tx, listed and read again
// when a partition listed was dropped before its rows were read: an archival
// drops its window's partition once the window is committed to Iceberg, so
// the rows are in the cold read that follows. A failed statement would abort
// tx, the savepoint keeps the write alive. listed is the detached partitions
// as already listed under the parent's lock (readPrior), nil if not: a list
// with none costs no round trip.
func (s *Store) movingRows(ctx context.Context, tx pgx.Tx, listed map[string]bool, malos []string, lo, hi time.Time) ([]meterstore.Row, error) {
	if listed != nil && len(listed) == 0 {
		return nil, nil
	}
	for attempt := 1; ; attempt++ {
		sp, err := tx.Begin(ctx)
		if err != nil {
			return nil, fmt.Errorf("write %s: read detached partitions: %w", s.cfg.Name(), err)
		}
		rows, err := s.detachedReaching(ctx, sp, listed, malos, lo, hi)
		if err == nil {
			return rows, sp.Commit(ctx)
		}
		if rerr := sp.Rollback(ctx); rerr != nil || attempt == maxDroppedRereads || !droppedMeanwhile(err) {
			return nil, errors.Join(err, rerr)
		}
		listed = nil
	}
}

// maxDroppedRereads bounds movingRows' reads: each retry follows an archival
// committing a window, which a write outlives only a few times.
const maxDroppedRereads = 5

// detachedReaching reads the rows of the MaLos in the table's detached
// partitions — an archival's window on its way to Iceberg — that start before
// hi and end after lo. names lists those partitions; nil: list them first.
func (s *Store) detachedReaching(ctx context.Context, q querier, names map[string]bool, malos []string, lo, hi time.Time) ([]meterstore.Row, error) {
	if names == nil {
		var err error
		if names, err = s.detachedNames(ctx, q); err != nil {
			return nil, err
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	cols := s.cfg.ColumnNames()
	sel := meterstore.QuoteIdents(cols)
	var branches []string
	for _, n := range slices.Sorted(maps.Keys(names)) {
		branches = append(branches, fmt.Sprintf(`SELECT %s FROM %s WHERE malo_id = ANY($1) AND "from" < $3 AND "to" > $2`, sel, meterstore.QuoteIdent(n)))
	}
	res, err := q.Query(ctx, strings.Join(branches, " UNION ALL "), malos, lo, hi)
	if err != nil {
		return nil, fmt.Errorf("write %s: read detached partitions: %w", s.cfg.Name(), err)
	}
	out, err := s.newDecoder(cols).readAll(res, nil)
	if err != nil {
		return nil, fmt.Errorf("write %s: read detached partitions: %w", s.cfg.Name(), err)
	}
	return out, nil
}

// conflict is a pair of rows on either side of the watermark that the
// rules refuse: other, held by the other tier, and row, being written.
type conflict struct {
	other, row *meterstore.Row
	operator   bool // one_operator; else no_overlap
}

// eachConflict calls found with each pair of an other row and a row of rows
// of one reading whose intervals overlap and that the rules refuse together,
// as the cold tier refuses them within itself, until found returns false:
//
//   - no_overlap: the same version, different "from". Two rows with the same
//     "from" are one reading at that version — a duplicate or a restatement,
//     which the tier holding both decides.
//   - one_operator: different network operators, whatever the versions. The
//     hot tier's constraint compares rows with the same "from" only, which two
//     rows on either side of the watermark never share; the cold tier's rule
//     refuses any overlapping interval of another operator, and a row crossing
//     the watermark lives in the cold tier.
func eachConflict(id identity, others []meterstore.Row, rows []*meterstore.Row, found func(*conflict) bool) {
	if len(others) == 0 {
		return
	}
	byReading := map[string][]*meterstore.Row{}
	var kb []byte
	for i := range others {
		o := &others[i]
		if o.To == nil {
			continue
		}
		kb = id.appendKey(kb[:0], o)
		byReading[string(kb)] = append(byReading[string(kb)], o)
	}
	for _, r := range rows {
		if r.To == nil {
			continue
		}
		kb = id.appendKey(kb[:0], r)
		for _, o := range byReading[string(kb)] {
			if !o.From.Before(*r.To) || !o.To.After(r.From) {
				continue
			}
			var c *conflict
			switch {
			case o.Operator() != r.Operator():
				c = &conflict{other: o, row: r, operator: true}
			case o.Version == r.Version && !o.From.Equal(r.From):
				c = &conflict{other: o, row: r}
			}
			if c != nil && !found(c) {
				return
			}
		}
	}
}

// firstConflict is eachConflict's first pair, nil when there is none.
func firstConflict(id identity, others []meterstore.Row, rows []*meterstore.Row) *conflict {
	var first *conflict
	eachConflict(id, others, rows, func(c *conflict) bool {
		first = c
		return false
	})
	return first
}

// maxNamedConflicts bounds the pairs a TierConflictsError names: a foreign
// file may contradict thousands of hot rows, and its Total says how many.
const maxNamedConflicts = 20

// conflictsAcrossTiers is the refusal of every pair eachConflict finds, which
// lie across the watermark w: nil for none, the pair's own error for one, a
// *TierConflictsError for more.
func (s *Store) conflictsAcrossTiers(id identity, others []meterstore.Row, rows []*meterstore.Row, w time.Time) error {
	all := &TierConflictsError{}
	eachConflict(id, others, rows, func(c *conflict) bool {
		all.Total++
		if len(all.Named) < maxNamedConflicts {
			all.Named = append(all.Named, s.tierConflict(c, w))
		}
		return true
	})
	switch all.Total {
	case 0:
		return nil
	case 1:
		return all.Named[0]
	}
	return all
}

// tierConflict is the refusal of c's pair, which lies across the watermark w.
func (s *Store) tierConflict(c *conflict, w time.Time) error {
	f := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	o, r := c.other, c.row
	if c.operator {
		return &SecondOperatorError{Table: s.cfg.Name(), Constraint: "one_operator across tiers",
			Detail: fmt.Sprintf("malo %s obis %s: [%s, %s) of operator %s (version %d) and [%s, %s) of operator %s (version %d) overlap on either side of the tiering watermark %s",
				r.MaloID, r.ObisCode, f(r.From), f(*r.To), r.Operator(), r.Version, f(o.From), f(*o.To), o.Operator(), o.Version, f(w))}
	}
	return &OverlapError{Table: s.cfg.Name(), Constraint: "no_overlap across tiers",
		Detail: fmt.Sprintf("malo %s obis %s version %d: [%s, %s) and [%s, %s) lie on either side of the tiering watermark %s",
			r.MaloID, r.ObisCode, r.Version, f(r.From), f(*r.To), f(o.From), f(*o.To), f(w))}
}

// HoldReadings runs write — a cold write of rows, all starting below the
// watermark w — under the readings' locks Write takes, after refusing with an
// *OverlapError a row that overlaps a row of PostgreSQL (attached or detached
// by an archival under way) of the same reading at the same version. Rows
// reaching above w are the ones to pass: no constraint of this tier sees them,
// and a hot writer of their readings, which compares its rows with the cold
// tier's under the same locks (CheckAgainstCold), waits for write to finish.
// A table without the checks across partitions just runs write.
func (s *Store) HoldReadings(ctx context.Context, rows []meterstore.Row, w time.Time, write func(context.Context) error) error {
	if !s.checksAcrossPartitions() || len(rows) == 0 {
		return write(ctx)
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return fmt.Errorf("write %s: %w", s.cfg.Name(), err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	ptrs := make([]*meterstore.Row, len(rows))
	for i := range rows {
		ptrs[i] = &rows[i]
	}
	b := s.group(len(rows), func(i int) *meterstore.Row { return ptrs[i] })
	if _, err := tx.Exec(ctx, "SELECT count(pg_advisory_xact_lock($1::int4, b)) FROM unnest($2::int4[]) AS b",
		int32(pglock.Key("readings:"+s.cfg.Name())), b.buckets); err != nil {
		return fmt.Errorf("write %s: lock readings: %w", s.cfg.Name(), err)
	}
	if err := s.checkAgainstHot(ctx, tx, ptrs, w); err != nil {
		return err
	}
	return write(ctx)
}

// checkAgainstHot refuses the rows of rows overlapping a row PostgreSQL
// holds, attached or detached, of the same reading at the same version (or
// of another operator), naming every such pair (conflictsAcrossTiers).
func (s *Store) checkAgainstHot(ctx context.Context, tx pgx.Tx, rows []*meterstore.Row, w time.Time) error {
	names, lo, hi := spanOf(rows)
	cols := s.cfg.ColumnNames()
	// Attached partitions lie above the archived range, so at or above w.
	res, err := tx.Query(ctx, fmt.Sprintf(`SELECT %s FROM %s WHERE malo_id = ANY($1) AND "from" < $3 AND "to" > $2 AND "from" >= $4`,
		meterstore.QuoteIdents(cols), meterstore.QuoteIdent(s.cfg.Name())), names, lo, hi, w)
	if err != nil {
		return fmt.Errorf("write %s: check intervals against the hot tier: %w", s.cfg.Name(), err)
	}
	stored, err := s.newDecoder(cols).readAll(res, nil)
	if err != nil {
		return fmt.Errorf("write %s: check intervals against the hot tier: %w", s.cfg.Name(), err)
	}
	moving, err := s.movingRows(ctx, tx, nil, names, lo, hi)
	if err != nil {
		return err
	}
	pk, err := s.primaryKey(ctx, tx)
	if err != nil {
		return err
	}
	return s.conflictsAcrossTiers(s.identityOf(identityOf(pk)), append(stored, moving...), rows, w)
}

// spanOf is what a check across the watermark reads of the other tier for
// rows: their MaLos, sorted, and [lo, hi) from the earliest "from" to the
// latest "to" of the intervals among them (a point in time overlaps nothing).
func spanOf(rows []*meterstore.Row) (malos []string, lo, hi time.Time) {
	seen := map[string]bool{}
	for _, r := range rows {
		if r.To == nil {
			continue
		}
		if len(seen) == 0 {
			lo, hi = r.From, *r.To
		}
		lo, hi = minTime(lo, r.From), maxTime(hi, *r.To)
		seen[r.MaloID] = true
	}
	return slices.Sorted(maps.Keys(seen)), lo, hi
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
