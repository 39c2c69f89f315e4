package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
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
// operator). The version in force comes from the write's own displacement
// report (Displacement.Outranking), never from a separate read another writer
// could race. When another author takes the version a round computed, the next
// round writes the floor again (a Duplicate) and continues from what that
// write sees. A value already in force is a no-op. After AuthoritativeAttempts
// rounds it gives up with ErrAuthoritativeConflict.
//
// It is routed like Append (both tiers, both boundary reads) and refused on a
// point table.
func (t *Table) AppendAuthoritative(ctx context.Context, series ...meterstore.StoredSeries) (res AuthoritativeOutcome, err error) {
	m := t.writeMetrics()
	defer func() { m.done(ctx, err) }()
	if t.cfg.TimeModel() == meterstore.Point {
		return res, fmt.Errorf("append authoritative to %s: %w: it holds register readings; authored register values are not supported", t.cfg.Name(), ErrWrongTimeModel)
	}
	pending, _, err := t.encode(series)
	if err != nil {
		return res, err
	}
	if err := t.checkSubjects(ctx, pending); err != nil {
		return res, err
	}
	floors := map[string]meterstore.Row{}
	for _, r := range pending {
		floors[t.mergeKey(r)] = r
	}
	for round := 1; round <= AuthoritativeAttempts && len(pending) > 0; round++ {
		res.Rounds = round
		out, err := t.appendRows(ctx, pending, t.HotBatchRows())
		m.add(out)
		if err != nil && (round == 1 || !isRestatement(err)) {
			return res, err
		}
		var retry []meterstore.Row
		for _, d := range finalDisplacements(out.Displacements) {
			switch {
			case d.Effect.ChangedCurrentValue():
				res.Displacements = append(res.Displacements, d)
			case err != nil: // the round failed; what it left unsettled is retried below
			case d.Outranking == nil || sameValue(*d.Outranking, d.Row):
				res.AlreadyInForce = append(res.AlreadyInForce, d.Row)
			default:
				next := d.Row
				next.Version = d.Outranking.Version + 1
				next.VersionScope = d.Outranking.VersionScope
				retry = append(retry, next)
			}
		}
		if err != nil {
			// Another author took a version this round computed: write the
			// floors of what is not yet current again and continue from what
			// those writes see.
			retry = t.unsettledFloors(pending, res.Displacements, floors)
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

// isRestatement: a tier refused a different assertion under a stored version.
func isRestatement(err error) bool {
	return errors.Is(err, meterstore.ErrRestatement)
}

// unsettledFloors returns the floor rows of pending's readings that no
// displacement in done made current.
func (t *Table) unsettledFloors(pending []meterstore.Row, done []Displacement, floors map[string]meterstore.Row) []meterstore.Row {
	settled := map[string]bool{}
	for _, d := range done {
		settled[t.mergeKey(d.Row)] = true
	}
	var out []meterstore.Row
	for _, r := range pending {
		if k := t.mergeKey(r); !settled[k] {
			out = append(out, floors[k])
		}
	}
	return out
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
