package hot

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meterstore/meterstore"
)

// checksAcrossPartitions reports whether Write checks intervals across partition
// boundaries on this table: an interval table with integrity constraints.
func (s *Store) checksAcrossPartitions() bool {
	return s.cfg.IntegrityConstraints() && s.cfg.TimeModel() == meterstore.Interval
}

// checkAcrossPartitions closes the gap the per-partition exclusion constraints
// leave: an interval whose "to" reaches past its partition's end (a P1D value on
// UTC-day partitions, or an hourly one at 23:30–00:30 UTC) is not compared by
// any constraint with the rows of the partitions it reaches into. Intervals that
// cross a boundary are legal — refusing them would make daily and monthly grids
// unwritable — so Write checks them here, after its COPY, in its transaction and
// under its reading locks (concurrent writers of one reading are serialised, so
// none can slip a conflicting row past this check):
//
//	(a) a fresh row crossing its partition's end against the stored rows of the
//	    same reading and version that start inside its span, in later partitions;
//	(b) every fresh row against the crossing rows of earlier partitions (found
//	    through each partition's small <partition>_straddle partial index) of the
//	    same reading and version that reach into it.
//
// Within one partition the no_overlap constraint has already answered. A
// conflict is an *OverlapError (wrapping ErrOverlap) naming both rows; nothing is
// written. The check covers writes through this package; a row inserted with
// raw SQL across a boundary is checked by its own partition only.
//
// oids is the partition fingerprint the write read under its locks; the fresh
// rows are ds[i] for i in fresh.
func (s *Store) checkAcrossPartitions(ctx context.Context, tx pgx.Tx, oids []int64, ds []meterstore.Displacement, fresh []int) error {
	if !s.checksAcrossPartitions() {
		return nil
	}
	pk, err := s.primaryKey(ctx, tx)
	if err != nil {
		return err
	}
	id := s.identityOf(identityOf(pk))
	step := s.cfg.PartitionStep()
	rows := make([]*meterstore.Row, len(fresh))
	var crossing []*meterstore.Row
	maxStart := time.Time{}
	for j, i := range fresh {
		r := &ds[i].Row
		rows[j] = r
		start := s.PartitionStart(r.From)
		if start.After(maxStart) {
			maxStart = start
		}
		if r.To != nil && r.To.After(start.Add(step)) {
			crossing = append(crossing, r)
		}
	}
	if len(crossing) > 0 {
		if err := s.checkForward(ctx, tx, id, crossing); err != nil {
			return err
		}
	}
	return s.checkBackward(ctx, tx, id, oids, rows, maxStart)
}

// keyArrays renders the identity columns and version of rows as array
// parameters (text[] each, version as numeric[]), then one timestamptz[] per
// function in more, with the unnest arguments and the column names to give
// them: c0, c1, … for the identity, v for the version, t0, t1, … for more —
// names no identity column can collide with.
func keyArrays(id identity, rows []*meterstore.Row, more ...func(*meterstore.Row) time.Time) (args []any, unnest, alias []string) {
	for i := range id.cols {
		vals := make([]*string, len(rows))
		for j, r := range rows {
			vals[j] = id.value(r, i)
		}
		args = append(args, vals)
		unnest = append(unnest, fmt.Sprintf("$%d::text[]", len(args)))
		alias = append(alias, fmt.Sprintf("c%d", i))
	}
	vers := make([]string, len(rows))
	for j, r := range rows {
		vers[j] = strconv.FormatUint(r.Version, 10)
	}
	args = append(args, vers)
	unnest = append(unnest, fmt.Sprintf("$%d::numeric[]", len(args)))
	alias = append(alias, "v")
	for i, f := range more {
		vals := make([]time.Time, len(rows))
		for j, r := range rows {
			vals[j] = f(r)
		}
		args = append(args, vals)
		unnest = append(unnest, fmt.Sprintf("$%d::timestamptz[]", len(args)))
		alias = append(alias, fmt.Sprintf("t%d", i))
	}
	return args, unnest, alias
}

// joinOn matches table alias s against the key arrays k (see keyArrays) on the
// identity and the version.
func joinOn(id identity) string {
	on := make([]string, 0, len(id.cols)+1)
	for i, c := range id.cols {
		on = append(on, fmt.Sprintf("s.%s = k.c%d", meterstore.QuoteIdent(c), i))
	}
	return strings.Join(append(on, "s.version = k.v"), " AND ")
}

func (s *Store) checkForward(ctx context.Context, tx pgx.Tx, id identity, crossing []*meterstore.Row) error {
	step := s.cfg.PartitionStep()
	args, unnest, alias := keyArrays(id, crossing,
		func(r *meterstore.Row) time.Time { return r.From },
		func(r *meterstore.Row) time.Time { return s.PartitionStart(r.From).Add(step) },
		func(r *meterstore.Row) time.Time { return *r.To })
	dec := s.newDecoder(s.cfg.ColumnNames())
	sql := fmt.Sprintf(`SELECT %s, k.t0, k.t2 FROM unnest(%s) AS k(%s) JOIN %s AS s ON %s
		WHERE s."from" >= k.t1 AND s."from" < k.t2 LIMIT 1`,
		dec.selectList("s."), strings.Join(unnest, ", "), strings.Join(alias, ", "),
		meterstore.QuoteIdent(s.cfg.Name()), joinOn(id))
	var hit []meterstore.Row
	var kFrom, kTo time.Time
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("write %s: check intervals across partitions: %w", s.cfg.Name(), err)
	}
	for rows.Next() {
		vals := rows.RawValues()
		var r meterstore.Row
		r.Extra = make([]*string, len(s.cfg.ExtraColumns()))
		for i := range dec.cols {
			if err := dec.decodeBinary(i, vals[i], &r); err != nil {
				rows.Close()
				return fmt.Errorf("write %s: check intervals across partitions: %w", s.cfg.Name(), err)
			}
		}
		n := len(dec.cols)
		if kFrom, err = decodeTimestamptz(vals[n]); err == nil {
			kTo, err = decodeTimestamptz(vals[n+1])
		}
		if err != nil {
			rows.Close()
			return fmt.Errorf("write %s: check intervals across partitions: %w", s.cfg.Name(), err)
		}
		hit = append(hit, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("write %s: check intervals across partitions: %w", s.cfg.Name(), err)
	}
	if len(hit) == 0 {
		return nil
	}
	h := hit[0]
	return s.crossOverlap(h.MaloID, h.ObisCode, h.Version, kFrom, kTo, h.From, *h.To)
}

func (s *Store) checkBackward(ctx context.Context, tx pgx.Tx, id identity, oids []int64, fresh []*meterstore.Row, maxStart time.Time) error {
	parts, err := s.attachedPartitions(ctx, tx, oids)
	if err != nil {
		return err
	}
	var earlier []Partition
	for _, p := range parts {
		if p.To.After(maxStart) { // a straddler must start before a fresh row's partition
			break
		}
		earlier = append(earlier, p)
	}
	if len(earlier) == 0 {
		return nil
	}
	// Distinct (identity, version) of the fresh rows.
	seen := map[string]bool{}
	var keys []*meterstore.Row
	var kb []byte
	for _, r := range fresh {
		if kb = identVersionKey(kb[:0], id, r); !seen[string(kb)] {
			seen[string(kb)] = true
			keys = append(keys, r)
		}
	}
	args, unnest, alias := keyArrays(id, keys)
	cols := append(slices.Clone(id.cols), "version", "from", "to")
	sel := meterstore.QuoteIdents(cols)
	var branches []string
	for _, p := range earlier {
		branches = append(branches, fmt.Sprintf(`SELECT %s FROM %s WHERE "to" > %s`, sel, meterstore.QuoteIdent(p.Name), pgTimestamp(p.To)))
	}
	sql := fmt.Sprintf(`SELECT %s FROM (%s) AS s JOIN unnest(%s) AS k(%s) ON %s`,
		prefixed("s.", cols), strings.Join(branches, " UNION ALL "), strings.Join(unnest, ", "), strings.Join(alias, ", "), joinOn(id))
	res, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("write %s: check intervals across partitions: %w", s.cfg.Name(), err)
	}
	straddlers, err := s.newDecoder(cols).readAll(res, nil)
	if err != nil {
		return fmt.Errorf("write %s: check intervals across partitions: %w", s.cfg.Name(), err)
	}
	if len(straddlers) == 0 {
		return nil
	}
	byKey := map[string][]*meterstore.Row{}
	for i := range straddlers {
		st := &straddlers[i]
		kb = identVersionKey(kb[:0], id, st)
		byKey[string(kb)] = append(byKey[string(kb)], st)
	}
	for _, r := range fresh {
		start := s.PartitionStart(r.From)
		kb = identVersionKey(kb[:0], id, r)
		for _, st := range byKey[string(kb)] {
			if st.From.Before(start) && st.To.After(r.From) {
				return s.crossOverlap(st.MaloID, st.ObisCode, st.Version, st.From, *st.To, r.From, *r.To)
			}
		}
	}
	return nil
}

// identVersionKey appends r's identity and version: the equality columns of the
// no_overlap rule.
func identVersionKey(b []byte, id identity, r *meterstore.Row) []byte {
	return strconv.AppendUint(id.appendKey(b, r), r.Version, 10)
}

func prefixed(prefix string, cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = prefix + meterstore.QuoteIdent(c)
	}
	return strings.Join(q, ", ")
}

func (s *Store) crossOverlap(malo, obis string, version uint64, aFrom, aTo, bFrom, bTo time.Time) error {
	f := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	return &OverlapError{Table: s.cfg.Name(), Constraint: "no_overlap across partitions",
		Detail: fmt.Sprintf("malo %s obis %s version %d: [%s, %s) crosses a partition boundary (partition_step %s) and overlaps [%s, %s)",
			malo, obis, version, f(aFrom), f(aTo), s.cfg.PartitionStep(), f(bFrom), f(bTo))}
}

// partitionOIDsSQL fingerprints the parent's partition list: the OIDs of every
// table attached to it, ascending. Write reads it in its first round trip, under
// its reading locks.
const partitionOIDsSQL = `SELECT coalesce(array_agg(inhrelid::int8 ORDER BY inhrelid), '{}') FROM pg_inherits WHERE inhparent = to_regclass($1)`

// partitionList is the attached partitions as last listed, with the fingerprint
// (partitionOIDsSQL) they were listed at.
type partitionList struct {
	oids []int64
	list []Partition
}

// attachedPartitions returns the attached partitions with bounds, ordered by
// From. The list is cached: listing bounds costs a catalogue query per write
// that the fingerprint, read with the prior state, makes unnecessary while the
// partitions have not changed. Partitions are only ever attached by creating
// them empty (EnsurePartitions), and one attached after the fingerprint was
// read — after the write took its reading locks — can hold none of the write's
// readings until the write commits (their writers wait for those locks), so a
// list as of the fingerprint is complete for the check.
func (s *Store) attachedPartitions(ctx context.Context, q querier, oids []int64) ([]Partition, error) {
	s.mu.Lock()
	cached := s.parts
	s.mu.Unlock()
	if cached.oids != nil && slices.Equal(cached.oids, oids) {
		return cached.list, nil
	}
	// The fingerprint and the bounds in one statement: a cache entry must
	// describe exactly the partitions its fingerprint names.
	rows, err := q.Query(ctx, `SELECT i.inhrelid::int8, c.relname, b.m[1]::timestamptz, b.m[2]::timestamptz
		FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid
		CROSS JOIN LATERAL (SELECT regexp_match(pg_get_expr(c.relpartbound, c.oid), $2) AS m) b
		WHERE i.inhparent = to_regclass($1)`, meterstore.QuoteIdent(s.cfg.Name()), `FROM \('([^']*)'\) TO \('([^']*)'\)`)
	if err != nil {
		return nil, fmt.Errorf("list partitions of %s: %w", s.cfg.Name(), err)
	}
	fresh := partitionList{oids: []int64{}}
	for rows.Next() {
		var oid int64
		var p Partition
		var from, to *time.Time
		if err := rows.Scan(&oid, &p.Name, &from, &to); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list partitions of %s: %w", s.cfg.Name(), err)
		}
		fresh.oids = append(fresh.oids, oid)
		if from != nil && to != nil { // a DEFAULT or unbounded partition is not one of ours
			p.From, p.To, p.Attached = from.UTC(), to.UTC(), true
			fresh.list = append(fresh.list, p)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list partitions of %s: %w", s.cfg.Name(), err)
	}
	slices.Sort(fresh.oids)
	sortPartitions(fresh.list)
	s.mu.Lock()
	s.parts = fresh
	s.mu.Unlock()
	return fresh.list, nil
}
