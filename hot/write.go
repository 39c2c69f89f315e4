package hot

import (
	"context"
	"fmt"
	"hash/maphash"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meterstore/meterstore"
)

// Write stores rows in one transaction and reports each row's effect.
//
// Every row is validated with metering first (identifiers, canonical codes,
// sparte↔unit, version scope covering "from" for the Sparte, "to" per time model,
// extra columns canonicalised); balancing_day is derived from the calendar, never
// taken from the caller. Partitions for the rows' range are ensured (in their own
// short transaction). Then, in one transaction: one round trip takes the
// readings' advisory locks and reads the prior state of the rows' readings
// (readPrior); each row is classified (Inserted, Superseded, Shadowed,
// Duplicate); exactly the rows classified new go in with one binary COPY into
// the parent (copyFresh). Nothing is ever updated: a duplicate is never sent,
// and a new row whose primary key appeared meanwhile (a writer bypassing the
// locks) fails the COPY with a unique violation, reported as
// ErrConcurrentWrite — what the former INSERT … ON CONFLICT DO NOTHING reported
// as a short count. Intervals crossing a partition boundary are then checked
// against the neighbouring partitions (checkAcrossPartitions), and every new
// interval against the cold tier's rows reaching above the watermark
// (checkAcrossTiers, when CheckAgainstCold is set).
//
// A row restating a different assertion under a stored (merge key, version) fails
// the whole call with *RestatementError; an exclusion violation fails it with
// *OverlapError or *SecondOperatorError. On any error nothing is written.
// Redelivering the same rows is a no-op reported as Duplicate. Write is
// tier-agnostic: routing rows below the tiering watermark is the caller's job.
func (s *Store) Write(ctx context.Context, rows []meterstore.Row) ([]meterstore.Displacement, error) {
	return s.write(ctx, rows, func(string) {})
}

// write is Write, calling lap after each of its steps with the step's name
// (validate, partitions, begin, lock+prior, classify, copy, straddle, tiers, commit):
// the write benchmark's account of where a write's time goes.
func (s *Store) write(ctx context.Context, rows []meterstore.Row, lap func(step string)) ([]meterstore.Displacement, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	// The report holds the validated rows: they are validated in place there,
	// and everything after refers to them by index, so no row is copied again.
	ds := make([]meterstore.Displacement, len(rows))
	v := s.cfg.NewRowValidator()
	for i := range rows {
		ds[i].Row = rows[i]
		if err := v.ValidateRow(&ds[i].Row); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidRow, err)
		}
	}
	b := s.group(len(ds), func(i int) *meterstore.Row { return &ds[i].Row })
	lap("validate")
	if err := s.EnsurePartitions(ctx, b.lo, b.hi.Add(time.Microsecond)); err != nil {
		return nil, fmt.Errorf("write %s: %w", s.cfg.Name(), err)
	}
	lap("partitions")
	// READ COMMITTED whatever the role or database defaults to: the prior
	// state is read by the statement after the lock statement and must see what
	// the lock's previous holder committed, which a transaction-wide snapshot
	// (taken by the lock statement, before the lock is granted) would not.
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", s.cfg.Name(), err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	lap("begin")
	prior, err := s.readPrior(ctx, tx, b)
	if err != nil {
		return nil, err
	}
	lap("lock+prior")
	fresh, err := s.classify(b.ident, ds, prior.rows)
	if err != nil {
		return nil, err
	}
	lap("classify")
	if len(fresh) > 0 {
		if err := s.copyFresh(ctx, tx, ds, fresh); err != nil {
			return nil, err
		}
		lap("copy")
		if err := s.checkAcrossPartitions(ctx, tx, prior.partitionOIDs, ds, fresh); err != nil {
			return nil, err
		}
		lap("straddle")
		if err := s.checkAcrossTiers(ctx, tx, prior.detached, ds, fresh); err != nil {
			return nil, err
		}
		lap("tiers")
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("write %s: commit: %w", s.cfg.Name(), s.mapWriteError(err))
	}
	lap("commit")
	return ds, nil
}

// classify sets each row's effect — with the row it superseded, or the higher
// version outranking it — from the stored rows of its reading and the
// batch's earlier rows (rows are applied in order), and returns the indexes of
// the rows to insert. prior may hold more than the rows' merge keys (readPrior
// reads spans); a stored row no batch row shares a merge key with is ignored.
//
// Rows are chained by a hash of their merge key and compared field by field, so
// a batch costs one map entry per distinct key and no allocation per row (the
// copies of superseded rows come from slabs).
func (s *Store) classify(id identity, ds []meterstore.Displacement, prior []meterstore.Row) ([]int, error) {
	seed := maphash.MakeSeed()
	n := len(prior) + len(ds)
	head := make(map[uint64]int32, n) // hash → 1 + index into ents of the latest entry
	ents := make([]*meterstore.Row, 0, n)
	next := make([]int32, 0, n) // 1 + index of the previous entry with the same hash, 0 = none
	var kb []byte
	hash := func(r *meterstore.Row) uint64 {
		kb = id.appendMergeKey(kb[:0], r)
		return maphash.Bytes(seed, kb)
	}
	push := func(h uint64, r *meterstore.Row) {
		ents = append(ents, r)
		next = append(next, head[h])
		head[h] = int32(len(ents))
	}
	for i := range prior {
		push(hash(&prior[i]), &prior[i])
	}
	fresh := make([]int, 0, len(ds))
	var slab []meterstore.Row
	keep := func(i int, r *meterstore.Row) *meterstore.Row {
		if len(slab) == 0 {
			slab = make([]meterstore.Row, min(256, len(ds)-i))
		}
		slab[0] = *r
		k := &slab[0]
		slab = slab[1:]
		return k
	}
	for i := range ds {
		r := &ds[i].Row
		h := hash(r)
		var cur *meterstore.Row
		dup := false
		for e := head[h]; e != 0; e = next[e-1] {
			st := ents[e-1]
			if !st.From.Equal(r.From) || !id.equal(st, r) {
				continue
			}
			if st.Version == r.Version {
				if !meterstore.SameAssertion(*st, *r) {
					return nil, s.restatement(*st, *r)
				}
				dup = true
				continue
			}
			if st.VersionScope == r.VersionScope && (cur == nil || st.Version > cur.Version) {
				cur = st
			}
		}
		switch {
		case dup:
			ds[i].Effect = meterstore.Duplicate
			if cur != nil && cur.Version > r.Version {
				ds[i].Outranking = keep(i, cur)
			}
			continue
		case cur == nil:
			ds[i].Effect = meterstore.Inserted
		case r.Version > cur.Version:
			ds[i].Effect = meterstore.Superseded
			ds[i].Superseded = keep(i, cur)
		default:
			ds[i].Effect = meterstore.Shadowed
			ds[i].Outranking = keep(i, cur)
		}
		push(h, r)
		fresh = append(fresh, i)
	}
	return fresh, nil
}

func (s *Store) restatement(stored, offered meterstore.Row) error {
	var fields []string
	if !stored.Value.Equal(offered.Value) {
		fields = append(fields, "value")
	}
	if stored.Quality != offered.Quality {
		fields = append(fields, "quality")
	}
	if stored.Unit != offered.Unit {
		fields = append(fields, "unit")
	}
	meloDiffers := (stored.MeloID == nil) != (offered.MeloID == nil) ||
		stored.MeloID != nil && *stored.MeloID != *offered.MeloID
	if meloDiffers {
		fields = append(fields, "melo_id")
	}
	if stored.VersionScope != offered.VersionScope {
		fields = append(fields, "version_scope")
	}
	if (stored.To == nil) != (offered.To == nil) || stored.To != nil && !stored.To.Equal(*offered.To) {
		fields = append(fields, "to")
	}
	hint := "a version identifies one assertion: a corrected value needs a higher version"
	if meloDiffers && !s.cfg.IdentifyByMelo() {
		hint = "a second Messlokation under one Marktlokation is a different reading only on a table with identify_by_melo = true; declare it, or deliver the correction at a higher version"
	}
	return &RestatementError{Table: s.cfg.Name(), Stored: stored, Offered: offered, Fields: fields, Hint: hint}
}
