package hot

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"meterstore"
	"meterstore/internal/pglock"
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

// lockBuckets is the number of advisory-lock buckets readings hash into: writers
// of the same readings serialise, so the prior state each reads is the state its
// insert lands on.
const lockBuckets = 64

// Write stores rows in one transaction and reports each row's effect.
//
// Every row is validated with metering first (identifiers, canonical codes,
// sparte↔unit, version scope covering "from" for the Sparte, "to" per time model,
// extra columns canonicalised); balancing_day is derived from the calendar, never
// taken from the caller. Partitions for the rows' range are ensured (in their own
// short transaction). Then, in one transaction: the readings' advisory locks are
// taken, the prior state of the rows' readings is read, each row is classified
// (Inserted, Superseded, Shadowed, Duplicate), and exactly the rows classified
// new go in with one binary COPY into the parent (numbers as binary numerics).
// Nothing is ever updated: a duplicate is never sent, and a new row whose primary
// key appeared meanwhile (a writer bypassing the locks) fails the COPY with a
// unique violation, reported as ErrConcurrentWrite — what the former INSERT …
// ON CONFLICT DO NOTHING reported as a short count. Intervals crossing a
// partition boundary are then checked against the neighbouring partitions
// (checkAcrossPartitions).
//
// A row restating a different assertion under a stored (merge key, version) fails
// the whole call with *RestatementError; an exclusion violation fails it with
// *OverlapError or *SecondOperatorError. On any error nothing is written.
// Redelivering the same rows is a no-op reported as Duplicate. Write is
// tier-agnostic: routing rows below the tiering watermark is the caller's job.
func (s *Store) Write(ctx context.Context, rows []meterstore.Row) ([]Displacement, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	rows = slices.Clone(rows)
	for i := range rows {
		if err := s.validate(&rows[i]); err != nil {
			return nil, err
		}
	}
	lo, hi := fromRange(rows)
	if err := s.EnsurePartitions(ctx, lo, hi.Add(time.Microsecond)); err != nil {
		return nil, fmt.Errorf("write %s: %w", s.cfg.Name(), err)
	}

	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", s.cfg.Name(), err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if err := s.lockReadings(ctx, tx, rows); err != nil {
		return nil, err
	}
	prior, err := s.lookup(ctx, tx, rows, lo, hi)
	if err != nil {
		return nil, err
	}
	state := make(map[string][]meterstore.Row, len(rows))
	var kb []byte
	for i := range prior {
		kb = s.appendMergeKey(kb[:0], &prior[i])
		k := string(kb)
		state[k] = append(state[k], prior[i])
	}
	ds := make([]Displacement, len(rows))
	var fresh []meterstore.Row
	for i, r := range rows {
		kb = s.appendMergeKey(kb[:0], &rows[i])
		k := string(kb)
		ds[i].Row = r
		var cur *meterstore.Row
		dup := false
		for j := range state[k] {
			st := &state[k][j]
			if st.Version == r.Version {
				if !meterstore.SameAssertion(*st, r) {
					return nil, s.restatement(*st, r)
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
			c := *cur
			ds[i].Superseded = &c
		default:
			ds[i].Effect = Shadowed
		}
		state[k] = append(state[k], r)
		fresh = append(fresh, r)
	}
	if len(fresh) > 0 {
		n, err := tx.CopyFrom(ctx, pgx.Identifier{s.cfg.Name()}, s.cfg.ColumnNames(), s.copySource(fresh))
		if err != nil {
			if isUniqueViolation(err) {
				return nil, fmt.Errorf("write %s: %w: %w", s.cfg.Name(), ErrConcurrentWrite, err)
			}
			return nil, fmt.Errorf("write %s: %w", s.cfg.Name(), s.mapWriteError(err))
		}
		if n != int64(len(fresh)) {
			return nil, fmt.Errorf("write %s: %d of %d new rows stored: %w", s.cfg.Name(), n, len(fresh), ErrConcurrentWrite)
		}
		if err := s.checkAcrossPartitions(ctx, tx, fresh); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("write %s: commit: %w", s.cfg.Name(), s.mapWriteError(err))
	}
	return ds, nil
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

// validate checks a row with metering and normalises it in place: UTC µs
// instants, canonical extra columns, balancing_day from the calendar.
func (s *Store) validate(r *meterstore.Row) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: table %s: row malo %s obis %s from %s: %w", ErrInvalidRow, s.cfg.Name(),
			r.MaloID, r.ObisCode, r.From.UTC().Format(time.RFC3339), fmt.Errorf(format, args...))
	}
	if m, err := metering.ParseMaloID(r.MaloID); err != nil {
		return fail("%w", err)
	} else if m.String() != r.MaloID {
		return fail("malo_id %q is not canonical; store %q", r.MaloID, m.String())
	}
	if o, err := metering.ParseObis(r.ObisCode); err != nil {
		return fail("%w", err)
	} else if o.String() != r.ObisCode {
		return fail("obis_code %q is not canonical; store %q", r.ObisCode, o.String())
	}
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
	if _, err := metering.ParseQuality(r.Quality); err != nil {
		return fail("%w", err)
	}
	if r.Resolution != nil {
		if _, err := metering.ParseResolution(*r.Resolution); err != nil {
			return fail("%w", err)
		}
	}
	if r.MeloID != nil {
		m, err := metering.ParseMeloID(*r.MeloID)
		if err != nil {
			return fail("%w", err)
		}
		if m.String() != *r.MeloID {
			return fail("melo_id %q is not canonical; store %q", *r.MeloID, m.String())
		}
	} else if s.cfg.IdentifyByMelo() {
		return fail("table identifies a reading by its Messlokation (identify_by_melo), so every row needs a melo_id")
	}
	if r.From.IsZero() {
		return fail("from is unset")
	}
	r.From = r.From.UTC().Truncate(time.Microsecond)
	scope, err := metering.ParseVersionScope(r.VersionScope)
	if err != nil {
		return fail("%w", err)
	}
	if !scope.Covers(r.From, sp) {
		return fail("%w: version_scope %s does not cover %s (its %s Bilanzierungsmonat is %s)", metering.ErrScopeMismatch,
			r.VersionScope, r.From.Format(time.RFC3339), sp, metering.BalancingMonth(r.From, sp).String()[:7])
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
		r.To = &to
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
	r.BalancingDay = metering.BalancingDay(r.From, sp).Time()
	cols := s.cfg.ExtraColumns()
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

// mergeKey renders a row's merge key as a map key.
func (s *Store) mergeKey(r meterstore.Row) string {
	return string(s.appendMergeKey(make([]byte, 0, 64), &r))
}

func (s *Store) appendMergeKey(b []byte, r *meterstore.Row) []byte {
	b = append(b, r.MaloID...)
	b = append(b, 0)
	b = append(b, r.ObisCode...)
	b = append(b, 0)
	b = strconv.AppendInt(b, r.From.UnixMicro(), 10)
	if s.cfg.IdentifyByMelo() {
		b = append(b, 0)
		if r.MeloID != nil {
			b = append(b, *r.MeloID...)
		}
	}
	for i, col := range s.cfg.ExtraColumns() {
		if col.Kind == meterstore.Identity {
			b = append(b, 0)
			if i < len(r.Extra) && r.Extra[i] != nil {
				b = append(b, *r.Extra[i]...)
			}
		}
	}
	return b
}

// lockReadings takes transaction-scoped advisory locks on the buckets the rows'
// readings hash into, in ascending order (no deadlock between writers).
func (s *Store) lockReadings(ctx context.Context, tx pgx.Tx, rows []meterstore.Row) error {
	seen := map[int32]bool{}
	var buckets []int32
	for _, r := range rows {
		h := fnv.New32a()
		_, _ = h.Write([]byte(r.MaloID + "\x00" + r.ObisCode))
		b := int32(h.Sum32() % lockBuckets)
		if !seen[b] {
			seen[b] = true
			buckets = append(buckets, b)
		}
	}
	slices.Sort(buckets)
	class := int32(pglock.Key("readings:" + s.cfg.Name()))
	if _, err := tx.Exec(ctx, "SELECT count(pg_advisory_xact_lock($1::int4, b)) FROM unnest($2::int4[]) AS b", class, buckets); err != nil {
		return fmt.Errorf("write %s: lock readings: %w", s.cfg.Name(), err)
	}
	return nil
}

// Lookup returns every stored row (all versions) of the readings the given rows
// belong to, in no particular order. It reads the parent table.
func (s *Store) Lookup(ctx context.Context, rows []meterstore.Row) ([]meterstore.Row, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	lo, hi := fromRange(rows)
	return s.lookup(ctx, s.pool, rows, lo, hi)
}

// fromRange is the earliest and latest "from" of non-empty rows.
func fromRange(rows []meterstore.Row) (lo, hi time.Time) {
	lo, hi = rows[0].From, rows[0].From
	for _, r := range rows[1:] {
		if r.From.Before(lo) {
			lo = r.From
		}
		if r.From.After(hi) {
			hi = r.From
		}
	}
	return lo, hi
}

func (s *Store) lookup(ctx context.Context, q querier, rows []meterstore.Row, lo, hi time.Time) ([]meterstore.Row, error) {
	key := s.cfg.MergeKey()
	extraIdx := map[string]int{}
	for i, c := range s.cfg.ExtraColumns() {
		extraIdx[c.Name] = i
	}
	seen := map[string]bool{}
	args := make([]any, 0, len(key)+2)
	cols := make([]any, len(key))
	for i, k := range key {
		if k == "from" {
			cols[i] = make([]time.Time, 0, len(rows))
		} else {
			cols[i] = make([]*string, 0, len(rows))
		}
	}
	for _, r := range rows {
		mk := s.mergeKey(r)
		if seen[mk] {
			continue
		}
		seen[mk] = true
		for i, k := range key {
			switch k {
			case "from":
				cols[i] = append(cols[i].([]time.Time), r.From)
			case "malo_id":
				cols[i] = append(cols[i].([]*string), &r.MaloID)
			case "obis_code":
				cols[i] = append(cols[i].([]*string), &r.ObisCode)
			case "melo_id":
				cols[i] = append(cols[i].([]*string), r.MeloID)
			default:
				var v *string
				if j := extraIdx[k]; j < len(r.Extra) {
					v = r.Extra[j]
				}
				cols[i] = append(cols[i].([]*string), v)
			}
		}
	}
	var unnest, on []string
	for i, k := range key {
		typ := "text[]"
		if k == "from" {
			typ = "timestamptz[]"
		}
		unnest = append(unnest, fmt.Sprintf("$%d::%s", i+1, typ))
		on = append(on, fmt.Sprintf("s.%s = k.%s", meterstore.QuoteIdent(k), meterstore.QuoteIdent(k)))
	}
	args = append(args, cols...)
	args = append(args, lo, hi)
	dec := s.newDecoder(s.cfg.ColumnNames())
	sql := fmt.Sprintf(`SELECT %s FROM %s AS s JOIN unnest(%s) AS k(%s) ON %s WHERE s."from" >= $%d AND s."from" <= $%d`,
		dec.selectList("s."), meterstore.QuoteIdent(s.cfg.Name()), strings.Join(unnest, ", "), meterstore.QuoteIdents(key),
		strings.Join(on, " AND "), len(key)+1, len(key)+2)
	res, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("read prior state of %s: %w", s.cfg.Name(), err)
	}
	out, err := dec.readAll(res, make([]meterstore.Row, 0, len(rows)))
	if err != nil {
		return nil, fmt.Errorf("read prior state of %s: %w", s.cfg.Name(), err)
	}
	return out, nil
}

// copySource feeds fresh rows to COPY (binary) in Columns() order. Numbers go
// as binary numerics, never through a text cast.
func (s *Store) copySource(rows []meterstore.Row) pgx.CopyFromSource {
	cols := s.cfg.Columns()
	src := &copyRows{rows: rows, idx: -1, vals: make([]any, len(cols)), kinds: make([]colKind, len(cols)), extra: make([]int, len(cols))}
	d := s.newDecoder(s.cfg.ColumnNames())
	copy(src.kinds, d.kinds)
	copy(src.extra, d.extraIdx)
	return src
}

type copyRows struct {
	rows  []meterstore.Row
	idx   int
	vals  []any
	kinds []colKind
	extra []int
}

func (c *copyRows) Next() bool { c.idx++; return c.idx < len(c.rows) }
func (c *copyRows) Err() error { return nil }

func (c *copyRows) Values() ([]any, error) {
	r := &c.rows[c.idx]
	for i, k := range c.kinds {
		var v any
		switch k {
		case kMalo:
			v = r.MaloID
		case kMelo:
			v = r.MeloID
		case kObis:
			v = r.ObisCode
		case kSparte:
			v = r.Sparte
		case kFrom:
			v = r.From
		case kTo:
			v = r.To
		case kValue:
			v = pgtype.Numeric{Int: r.Value.Coefficient(), Exp: r.Value.Exponent(), Valid: true}
		case kUnit:
			v = r.Unit
		case kQuality:
			v = r.Quality
		case kResolution:
			v = r.Resolution
		case kSourceKind:
			v = r.SourceKind
		case kSourceDetail:
			v = r.SourceDetail
		case kProvenance:
			v = r.Provenance
		case kVersion:
			v = pgtype.Numeric{Int: new(big.Int).SetUint64(r.Version), Valid: true}
		case kVersionScope:
			v = r.VersionScope
		case kRecordedAt:
			v = r.RecordedAt
		case kBalancingDay:
			v = pgtype.Date{Time: r.BalancingDay, Valid: true}
		case kExtra:
			var e *string
			if j := c.extra[i]; j < len(r.Extra) {
				e = r.Extra[j]
			}
			v = e
		}
		c.vals[i] = v
	}
	return c.vals, nil
}
