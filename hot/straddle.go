package hot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"meterstore"
)

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
func (s *Store) checkAcrossPartitions(ctx context.Context, tx pgx.Tx, fresh []meterstore.Row) error {
	if !s.cfg.IntegrityConstraints() || s.cfg.TimeModel() != meterstore.Interval {
		return nil
	}
	pk, err := s.primaryKey(ctx, tx)
	if err != nil {
		return err
	}
	ident := identityOf(pk)
	step := s.cfg.PartitionStep()
	var crossing []meterstore.Row
	maxStart := time.Time{}
	for _, r := range fresh {
		start := s.PartitionStart(r.From)
		if start.After(maxStart) {
			maxStart = start
		}
		if r.To != nil && r.To.After(start.Add(step)) {
			crossing = append(crossing, r)
		}
	}
	if len(crossing) > 0 {
		if err := s.checkForward(ctx, tx, ident, crossing); err != nil {
			return err
		}
	}
	return s.checkBackward(ctx, tx, ident, fresh, maxStart)
}

// keyArrays renders the identity columns and version of rows as array
// parameters (text[] each, version as text) plus the unnest column list.
func (s *Store) keyArrays(ident []string, rows []meterstore.Row, more ...func(meterstore.Row) any) ([]any, []string) {
	args := make([]any, 0, len(ident)+1+len(more))
	var unnest []string
	for _, c := range ident {
		vals := make([]*string, len(rows))
		for i := range rows {
			vals[i] = s.identValue(&rows[i], c)
		}
		args = append(args, vals)
		unnest = append(unnest, fmt.Sprintf("$%d::text[]", len(args)))
	}
	vers := make([]string, len(rows))
	for i, r := range rows {
		vers[i] = fmt.Sprint(r.Version)
	}
	args = append(args, vers)
	unnest = append(unnest, fmt.Sprintf("$%d::numeric[]", len(args)))
	for _, f := range more {
		vals := make([]time.Time, len(rows))
		for i, r := range rows {
			vals[i] = f(r).(time.Time)
		}
		args = append(args, vals)
		unnest = append(unnest, fmt.Sprintf("$%d::timestamptz[]", len(args)))
	}
	return args, unnest
}

func (s *Store) identValue(r *meterstore.Row, col string) *string {
	switch col {
	case "malo_id":
		return &r.MaloID
	case "obis_code":
		return &r.ObisCode
	case "melo_id":
		return r.MeloID
	}
	for i, c := range s.cfg.ExtraColumns() {
		if c.Name == col && i < len(r.Extra) {
			return r.Extra[i]
		}
	}
	return nil
}

func joinOn(ident []string, left, right string) string {
	var on []string
	for _, c := range append(append([]string(nil), ident...), "version") {
		q := meterstore.QuoteIdent(c)
		on = append(on, fmt.Sprintf("%s.%s = %s.%s", left, q, right, q))
	}
	return strings.Join(on, " AND ")
}

func (s *Store) checkForward(ctx context.Context, tx pgx.Tx, ident []string, crossing []meterstore.Row) error {
	step := s.cfg.PartitionStep()
	args, unnest := s.keyArrays(ident, crossing,
		func(r meterstore.Row) any { return r.From },
		func(r meterstore.Row) any { return s.PartitionStart(r.From).Add(step) },
		func(r meterstore.Row) any { return *r.To })
	kcols := append(append([]string(nil), ident...), "version", "k_from", "k_end", "k_to")
	dec := s.newDecoder(s.cfg.ColumnNames())
	sql := fmt.Sprintf(`SELECT %s, k.k_from, k.k_to FROM unnest(%s) AS k(%s) JOIN %s AS s ON %s
		WHERE s."from" >= k.k_end AND s."from" < k.k_to LIMIT 1`,
		dec.selectList("s."), strings.Join(unnest, ", "), meterstore.QuoteIdents(kcols),
		meterstore.QuoteIdent(s.cfg.Name()), joinOn(ident, "s", "k"))
	var hit []meterstore.Row
	var kFrom, kTo time.Time
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("write %s: check intervals across partitions: %w", s.cfg.Name(), err)
	}
	for rows.Next() {
		vals := rows.RawValues()
		d := s.newDecoder(s.cfg.ColumnNames())
		var r meterstore.Row
		r.Extra = make([]*string, len(s.cfg.ExtraColumns()))
		for i := range d.cols {
			if err := d.decodeBinary(i, vals[i], &r); err != nil {
				rows.Close()
				return fmt.Errorf("write %s: check intervals across partitions: %w", s.cfg.Name(), err)
			}
		}
		n := len(d.cols)
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

func (s *Store) checkBackward(ctx context.Context, tx pgx.Tx, ident []string, fresh []meterstore.Row, maxStart time.Time) error {
	parts, err := s.partitions(ctx, tx)
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
	var keys []meterstore.Row
	for _, r := range fresh {
		k := s.identKey(r, ident)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, r)
		}
	}
	args, unnest := s.keyArrays(ident, keys)
	kcols := append(append([]string(nil), ident...), "version")
	sel := meterstore.QuoteIdents(append(append([]string(nil), ident...), "version", "from", "to"))
	var branches []string
	for _, p := range earlier {
		branches = append(branches, fmt.Sprintf(`SELECT %s FROM %s WHERE "to" > %s`, sel, meterstore.QuoteIdent(p.Name), pgTimestamp(p.To)))
	}
	sql := fmt.Sprintf(`SELECT %s FROM (%s) AS s JOIN unnest(%s) AS k(%s) ON %s`,
		prefixed("s.", append(append([]string(nil), ident...), "version", "from", "to")),
		strings.Join(branches, " UNION ALL "), strings.Join(unnest, ", "), meterstore.QuoteIdents(kcols), joinOn(ident, "s", "k"))
	dec := s.newDecoder(append(append([]string(nil), ident...), "version", "from", "to"))
	res, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("write %s: check intervals across partitions: %w", s.cfg.Name(), err)
	}
	straddlers, err := dec.readAll(res, nil)
	if err != nil {
		return fmt.Errorf("write %s: check intervals across partitions: %w", s.cfg.Name(), err)
	}
	if len(straddlers) == 0 {
		return nil
	}
	byKey := map[string][]meterstore.Row{}
	for _, st := range straddlers {
		k := s.identKey(st, ident)
		byKey[k] = append(byKey[k], st)
	}
	for _, r := range fresh {
		start := s.PartitionStart(r.From)
		for _, st := range byKey[s.identKey(r, ident)] {
			if st.From.Before(start) && st.To.After(r.From) {
				return s.crossOverlap(st.MaloID, st.ObisCode, st.Version, st.From, *st.To, r.From, *r.To)
			}
		}
	}
	return nil
}

func prefixed(prefix string, cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = prefix + meterstore.QuoteIdent(c)
	}
	return strings.Join(q, ", ")
}

func (s *Store) identKey(r meterstore.Row, ident []string) string {
	var b strings.Builder
	for _, c := range ident {
		if v := s.identValue(&r, c); v != nil {
			b.WriteString(*v)
		}
		b.WriteByte(0)
	}
	fmt.Fprint(&b, r.Version)
	return b.String()
}

func (s *Store) crossOverlap(malo, obis string, version uint64, aFrom, aTo, bFrom, bTo time.Time) error {
	f := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	return &OverlapError{Table: s.cfg.Name(), Constraint: "no_overlap across partitions",
		Detail: fmt.Sprintf("malo %s obis %s version %d: [%s, %s) crosses a partition boundary (partition_step %s) and overlaps [%s, %s)",
			malo, obis, version, f(aFrom), f(aTo), s.cfg.PartitionStep(), f(bFrom), f(bTo))}
}
