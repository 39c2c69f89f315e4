package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"meterstore"
	"meterstore/catalog"
)

// AuthoritativeAttempts bounds the rounds of AppendAuthoritative. Past it,
// another writer is authoring the same reading continuously: a conflict for an
// operator, not something to retry through.
const AuthoritativeAttempts = 5

// AuthoritativeOutcome is the result of AppendAuthoritative.
type AuthoritativeOutcome struct {
	// Displacements has one entry per row that changed the current value, each
	// Inserted or Superseded, with Row.Version the version it landed at (which
	// may be above the one delivered). Anything else was retried.
	Displacements []Displacement
	// AlreadyInForce lists rows whose value (with quality and unit) was already
	// the current one: a no-op, not a version bump.
	AlreadyInForce []meterstore.Row
	// Rounds is the number of write rounds it took.
	Rounds int
}

// AppendAuthoritative writes values the operator authored — a § 60 Abs. 2 MsbG
// Ersatzwert, a correction after a dispute, a manual entry after a meter
// exchange — and makes them current. The version each row carries is a floor:
// where a higher version already holds the reading, the row is re-appended at
// the next version of the one in force, in that version's scope (a version is
// comparable only within its own scope, and both tiers refuse a second network
// operator). The decision comes from the write's own displacement report, not
// a separate read of the prior state. A value already in force is a no-op.
// After AuthoritativeAttempts rounds it gives up with ErrAuthoritativeConflict.
//
// It is routed like Append (both tiers, both boundary reads) and refused on a
// point table.
func (t *Table) AppendAuthoritative(ctx context.Context, series ...meterstore.StoredSeries) (res AuthoritativeOutcome, err error) {
	m := t.writeMetrics()
	defer func() { m.done(ctx, err) }()
	if t.cfg.TimeModel() == meterstore.Point {
		return res, fmt.Errorf("append authoritative to %s: %w: it holds register readings; authored register values are not supported", t.cfg.Name(), ErrWrongTimeModel)
	}
	pending, err := t.encode(series)
	if err != nil {
		return res, err
	}
	if err := t.checkSubjects(ctx, pending); err != nil {
		return res, err
	}
	for round := 1; round <= AuthoritativeAttempts && len(pending) > 0; round++ {
		res.Rounds = round
		out, err := t.appendRows(ctx, pending)
		m.add(out)
		if err != nil {
			return res, err
		}
		final := finalDisplacements(out.Displacements)
		var retry []meterstore.Row
		var outranked []meterstore.Row
		for _, d := range final {
			if d.Effect.ChangedCurrentValue() {
				res.Displacements = append(res.Displacements, d)
				continue
			}
			outranked = append(outranked, d.Row) // Shadowed, or a Duplicate that may be outranked
		}
		if len(outranked) > 0 {
			winners, err := t.winners(ctx, outranked)
			if err != nil {
				return res, err
			}
			for _, r := range outranked {
				w, ok := winners[t.mergeKey(r)]
				switch {
				case !ok: // cannot happen: the write just reported the reading stored
					return res, fmt.Errorf("append authoritative to %s: malo %s %s at %s: no stored version found after the write",
						t.cfg.Name(), r.MaloID, r.ObisCode, r.From.Format(time.RFC3339))
				case w.Version == r.Version || sameValue(w, r):
					res.AlreadyInForce = append(res.AlreadyInForce, r)
				default:
					next := r
					next.Version = w.Version + 1
					next.VersionScope = w.VersionScope
					retry = append(retry, next)
				}
			}
		}
		pending = retry
	}
	if len(pending) > 0 {
		r := pending[0]
		return res, fmt.Errorf("append authoritative to %s: malo %s %s at %s still outranked after %d rounds (%d rows): %w",
			t.cfg.Name(), r.MaloID, r.ObisCode, r.From.Format(time.RFC3339), AuthoritativeAttempts, len(pending), ErrAuthoritativeConflict)
	}
	return res, nil
}

// sameValue: the stored winner already says what the authored row says.
func sameValue(a, b meterstore.Row) bool {
	return a.Value.Equal(b.Value) && a.Quality == b.Quality && a.Unit == b.Unit
}

// finalDisplacements keeps, per row, the last round's displacement: a row the
// second boundary read re-routed to Iceberg is reported by its round-2 entry.
func finalDisplacements(ds []Displacement) []Displacement {
	idx := map[string]int{}
	var out []Displacement
	for _, d := range ds {
		k := rowKey(d.Row)
		if i, ok := idx[k]; ok {
			if d.Round >= out[i].Round {
				out[i] = d
			}
			continue
		}
		idx[k] = len(out)
		out = append(out, d)
	}
	return out
}

// rowKey identifies one stored row: every merge-key-relevant field and the version.
func rowKey(r meterstore.Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%d\x00%d", r.MaloID, r.ObisCode, r.From.UnixMicro(), r.Version)
	if r.MeloID != nil {
		b.WriteString("\x00" + *r.MeloID)
	}
	for _, x := range r.Extra {
		b.WriteByte(0)
		if x != nil {
			b.WriteString(*x)
		}
	}
	return b.String()
}

// mergeKey renders a row's merge key (TableConfig.MergeKey) as a map key.
func (t *Table) mergeKey(r meterstore.Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%d", r.MaloID, r.ObisCode, r.From.UnixMicro())
	if t.cfg.IdentifyByMelo() {
		b.WriteByte(0)
		if r.MeloID != nil {
			b.WriteString(*r.MeloID)
		}
	}
	for i, c := range t.cfg.ExtraColumns() {
		if c.Kind == meterstore.Identity {
			b.WriteByte(0)
			if i < len(r.Extra) && r.Extra[i] != nil {
				b.WriteString(*r.Extra[i])
			}
		}
	}
	return b.String()
}

// winners returns, per merge key of rows, the stored row with the highest
// version, reading the tier each row belongs to now (both, when the boundary
// lies inside the rows' range).
func (t *Table) winners(ctx context.Context, rows []meterstore.Row) (map[string]meterstore.Row, error) {
	want := map[string]bool{}
	lo, hi := rows[0].From, rows[0].From
	malos := map[string]bool{}
	for _, r := range rows {
		want[t.mergeKey(r)] = true
		malos[r.MaloID] = true
		if r.From.Before(lo) {
			lo = r.From
		}
		if r.From.After(hi) {
			hi = r.From
		}
	}
	var stored []meterstore.Row
	h, err := t.hot.Lookup(ctx, rows)
	if err != nil {
		return nil, err
	}
	stored = append(stored, h...)
	w, err := t.Watermark(ctx)
	if err != nil {
		return nil, err
	}
	if !w.IsZero() && lo.Before(w) {
		for m := range malos {
			c, err := t.cold.ReadRows(ctx, catalog.PlanRequest{From: lo, To: hi.Add(time.Microsecond), Eq: map[string]string{"malo_id": m}})
			if err != nil {
				return nil, err
			}
			stored = append(stored, c...)
		}
	}
	out := map[string]meterstore.Row{}
	for _, s := range stored {
		k := t.mergeKey(s)
		if !want[k] {
			continue
		}
		if cur, ok := out[k]; !ok || s.Version > cur.Version {
			out[k] = s
		}
	}
	return out, nil
}
