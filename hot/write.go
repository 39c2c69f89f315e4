package hot

import (
	"context"
	"fmt"
	"hash/maphash"
	"time"

	"meterstore"
	"meterstore/metering"
)

// Effect is what writing one row did to its reading; shared with the cold tier.
type Effect = meterstore.Effect

// The four effects (see meterstore.Effect).
const (
	Inserted   = meterstore.Inserted
	Superseded = meterstore.Superseded
	Shadowed   = meterstore.Shadowed
	Duplicate  = meterstore.Duplicate
)

// Displacement reports one written row and its effect, observed inside the
// write's own transaction.
type Displacement struct {
	Row    meterstore.Row // as written (balancing_day derived, extra columns canonical)
	Effect Effect
	// Superseded is the row that stopped being current, for Effect == Superseded.
	Superseded *meterstore.Row
}

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
// against the neighbouring partitions (checkAcrossPartitions).
//
// A row restating a different assertion under a stored (merge key, version) fails
// the whole call with *RestatementError; an exclusion violation fails it with
// *OverlapError or *SecondOperatorError. On any error nothing is written.
// Redelivering the same rows is a no-op reported as Duplicate. Write is
// tier-agnostic: routing rows below the tiering watermark is the caller's job.
func (s *Store) Write(ctx context.Context, rows []meterstore.Row) ([]Displacement, error) {
	return s.write(ctx, rows, func(string) {})
}

// write is Write, calling lap after each of its steps with the step's name
// (validate, partitions, begin, lock+prior, classify, copy, straddle, commit):
// the write benchmark's account of where a write's time goes.
func (s *Store) write(ctx context.Context, rows []meterstore.Row, lap func(step string)) ([]Displacement, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	// The report holds the validated rows: they are validated in place there,
	// and everything after refers to them by index, so no row is copied again.
	ds := make([]Displacement, len(rows))
	memo := validated{extra: s.cfg.ExtraColumns()}
	for i := range rows {
		ds[i].Row = rows[i]
		if err := s.validate(&ds[i].Row, &memo); err != nil {
			return nil, err
		}
	}
	b := s.group(len(ds), func(i int) *meterstore.Row { return &ds[i].Row })
	lap("validate")
	if err := s.EnsurePartitions(ctx, b.lo, b.hi.Add(time.Microsecond)); err != nil {
		return nil, fmt.Errorf("write %s: %w", s.cfg.Name(), err)
	}
	lap("partitions")
	tx, err := s.pool.Begin(ctx)
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
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("write %s: commit: %w", s.cfg.Name(), s.mapWriteError(err))
	}
	lap("commit")
	return ds, nil
}

// classify sets each row's effect from the stored rows of its reading and the
// batch's earlier rows (rows are applied in order), and returns the indexes of
// the rows to insert. prior may hold more than the rows' merge keys (readPrior
// reads spans); a stored row no batch row shares a merge key with is ignored.
//
// Rows are chained by a hash of their merge key and compared field by field, so
// a batch costs one map entry per distinct key and no allocation per row (the
// copies of superseded rows come from slabs).
func (s *Store) classify(id identity, ds []Displacement, prior []meterstore.Row) ([]int, error) {
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
				break
			}
			if st.VersionScope == r.VersionScope && (cur == nil || st.Version > cur.Version) {
				cur = st
			}
		}
		switch {
		case dup:
			ds[i].Effect = Duplicate
			continue
		case cur == nil:
			ds[i].Effect = Inserted
		case r.Version > cur.Version:
			ds[i].Effect = Superseded
			if len(slab) == 0 {
				slab = make([]meterstore.Row, min(256, len(ds)-i))
			}
			slab[0] = *cur
			ds[i].Superseded, slab = &slab[0], slab[1:]
		default:
			ds[i].Effect = Shadowed
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

// validated remembers the last accepted value of each field validate checks
// without regard to the instant. A batch repeats them row after row (one
// delivery is one MaLo, channel, unit and scope), so parsing each only when it
// changes takes most of the validation cost out of a batch; every row is still
// checked, against exactly the same rules. It also holds the slab the
// normalised "to"s are taken from: one allocation per 1 024 rows, not per row.
type validated struct {
	malo, obis, sparte, unit, quality, resolution, melo, scope string
	sp                                                         metering.Sparte
	vs                                                         metering.VersionScope
	ok                                                         uint16 // bit per field: the remembered value is valid
	extra                                                      []meterstore.Column
	times                                                      []time.Time // slab the normalised "to"s point into
}

const (
	okMalo uint16 = 1 << iota
	okObis
	okSparteUnit
	okQuality
	okResolution
	okMelo
	okScope
)

// validate checks a row with metering and normalises it in place: UTC µs
// instants, canonical extra columns, balancing_day from the calendar.
func (s *Store) validate(r *meterstore.Row, m *validated) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: table %s: row malo %s obis %s from %s: %w", ErrInvalidRow, s.cfg.Name(),
			r.MaloID, r.ObisCode, r.From.UTC().Format(time.RFC3339), fmt.Errorf(format, args...))
	}
	if m.ok&okMalo == 0 || r.MaloID != m.malo {
		m.ok &^= okMalo
		if id, err := metering.ParseMaloID(r.MaloID); err != nil {
			return fail("%w", err)
		} else if id.String() != r.MaloID {
			return fail("malo_id %q is not canonical; store %q", r.MaloID, id.String())
		}
		m.malo, m.ok = r.MaloID, m.ok|okMalo
	}
	if m.ok&okObis == 0 || r.ObisCode != m.obis {
		m.ok &^= okObis
		if o, err := metering.ParseObis(r.ObisCode); err != nil {
			return fail("%w", err)
		} else if o.String() != r.ObisCode {
			return fail("obis_code %q is not canonical; store %q", r.ObisCode, o.String())
		}
		m.obis, m.ok = r.ObisCode, m.ok|okObis
	}
	if m.ok&okSparteUnit == 0 || r.Sparte != m.sparte || r.Unit != m.unit {
		m.ok &^= okSparteUnit
		sp, err := metering.ParseSparte(r.Sparte)
		if err != nil {
			return fail("%w", err)
		}
		u, err := metering.ParseUnit(r.Unit)
		if err != nil {
			return fail("%w", err)
		}
		if err := sp.AllowsUnit(u); err != nil {
			return fail("%w", err)
		}
		m.sparte, m.unit, m.sp, m.ok = r.Sparte, r.Unit, sp, m.ok|okSparteUnit
	}
	if m.ok&okQuality == 0 || r.Quality != m.quality {
		m.ok &^= okQuality
		if _, err := metering.ParseQuality(r.Quality); err != nil {
			return fail("%w", err)
		}
		m.quality, m.ok = r.Quality, m.ok|okQuality
	}
	if r.Resolution != nil && (m.ok&okResolution == 0 || *r.Resolution != m.resolution) {
		m.ok &^= okResolution
		if _, err := metering.ParseResolution(*r.Resolution); err != nil {
			return fail("%w", err)
		}
		m.resolution, m.ok = *r.Resolution, m.ok|okResolution
	}
	if r.MeloID != nil {
		if m.ok&okMelo == 0 || *r.MeloID != m.melo {
			m.ok &^= okMelo
			id, err := metering.ParseMeloID(*r.MeloID)
			if err != nil {
				return fail("%w", err)
			}
			if id.String() != *r.MeloID {
				return fail("melo_id %q is not canonical; store %q", *r.MeloID, id.String())
			}
			m.melo, m.ok = *r.MeloID, m.ok|okMelo
		}
	} else if s.cfg.IdentifyByMelo() {
		return fail("table identifies a reading by its Messlokation (identify_by_melo), so every row needs a melo_id")
	}
	if r.From.IsZero() {
		return fail("from is unset")
	}
	r.From = r.From.UTC().Truncate(time.Microsecond)
	if m.ok&okScope == 0 || r.VersionScope != m.scope {
		m.ok &^= okScope
		scope, err := metering.ParseVersionScope(r.VersionScope)
		if err != nil {
			return fail("%w", err)
		}
		m.scope, m.vs, m.ok = r.VersionScope, scope, m.ok|okScope
	}
	if !m.vs.Covers(r.From, m.sp) {
		return fail("%w: version_scope %s does not cover %s (its %s Bilanzierungsmonat is %s)", metering.ErrScopeMismatch,
			r.VersionScope, r.From.Format(time.RFC3339), m.sp, metering.BalancingMonth(r.From, m.sp).String()[:7])
	}
	if r.Version == 0 {
		return fail("version is unset; use the MSCONS label or metering.VersionArrival")
	}
	switch s.cfg.TimeModel() {
	case meterstore.Interval:
		if r.To == nil {
			return fail("an interval table needs \"to\" on every row (register readings go to a point table)")
		}
		to := r.To.UTC().Truncate(time.Microsecond)
		if !to.After(r.From) {
			return fail("\"to\" %s is not after \"from\"", to.Format(time.RFC3339))
		}
		if len(m.times) == 0 {
			m.times = make([]time.Time, 1024)
		}
		m.times[0] = to
		r.To, m.times = &m.times[0], m.times[1:]
	case meterstore.Point:
		if r.To != nil {
			return fail("a point table holds register readings at an instant: \"to\" must be null (intervals go to an interval table)")
		}
	}
	if r.RecordedAt.IsZero() {
		return fail("recorded_at is unset")
	}
	r.RecordedAt = r.RecordedAt.UTC().Truncate(time.Microsecond)
	if r.SourceKind == "" {
		return fail("source_kind is unset")
	}
	r.BalancingDay = metering.BalancingDay(r.From, m.sp).Time()
	cols := m.extra
	if len(r.Extra) != len(cols) {
		if !(r.Extra == nil && allNullable(cols)) {
			return fail("%d extra values for %d declared columns", len(r.Extra), len(cols))
		}
	}
	extra := make([]*string, len(cols))
	for i, col := range cols {
		var v *string
		if i < len(r.Extra) {
			v = r.Extra[i]
		}
		cv, err := col.Canonical(v)
		if err != nil {
			return fail("%w", err)
		}
		extra[i] = cv
	}
	r.Extra = extra
	return nil
}

func allNullable(cols []meterstore.Column) bool {
	for _, c := range cols {
		if !c.Nullable {
			return false
		}
	}
	return true
}
