package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"meterstore"
	"meterstore/catalog"
	"meterstore/hot"
)

// Effect is what a write did to one reading; the same four in both tiers.
type Effect = hot.Effect

const (
	Inserted   = hot.Inserted
	Superseded = hot.Superseded
	Shadowed   = hot.Shadowed
	Duplicate  = hot.Duplicate
)

// Tier says where a row was written.
type Tier uint8

const (
	HotTier Tier = iota + 1
	ColdTier
)

func (t Tier) String() string {
	if t == ColdTier {
		return "cold"
	}
	return "hot"
}

// Displacement is one written row, where it went, what it did, and the row that
// stopped being current (for Superseded).
type Displacement struct {
	Row        meterstore.Row
	Tier       Tier
	Effect     Effect
	Superseded *meterstore.Row
}

// AppendOutcome is the result of Append, covering both tiers and both routing passes.
type AppendOutcome struct {
	HotRows       int // rows written to PostgreSQL (Duplicates included)
	ColdRows      int // rows written to Iceberg: late corrections
	Rerouted      int // rows the second pass moved because an archival ran in between
	Displacements []Displacement
}

// HadLateCorrections reports whether any interval was below the boundary and went to Iceberg.
func (o AppendOutcome) HadLateCorrections() bool { return o.ColdRows > 0 }

// Append writes deliveries, routing every interval to the tier that owns it: a
// row below the watermark is a late correction and goes to Iceberg, where
// queries look for it, never to PostgreSQL, where it would be invisible
// (invariant 7). It reads the boundary, writes, then reads the boundary again:
// if an archival moved it in between, the rows written to PostgreSQL below the
// new boundary are appended to Iceberg too (both passes are idempotent, so a
// row already archived is a Duplicate) and the partition the write recreated
// below the watermark is dropped once its rows are verified in Iceberg.
func (t *Table) Append(ctx context.Context, series ...meterstore.StoredSeries) (AppendOutcome, error) {
	var rows []meterstore.Row
	for _, s := range series {
		r, err := t.cfg.Encode(s)
		if err != nil {
			return AppendOutcome{}, err
		}
		rows = append(rows, r...)
	}
	return t.appendRows(ctx, rows)
}

func (t *Table) appendRows(ctx context.Context, rows []meterstore.Row) (AppendOutcome, error) {
	var out AppendOutcome
	w1, err := t.Watermark(ctx)
	if err != nil {
		return out, err
	}
	hotRows, coldRows := split(rows, w1)
	if err := t.writeHot(ctx, hotRows, &out); err != nil {
		return out, err
	}
	if err := t.writeCold(ctx, coldRows, &out); err != nil {
		return out, err
	}
	if f := t.st.cfg.BetweenBoundaryReads; f != nil {
		f()
	}
	w2, err := t.Watermark(ctx)
	if err != nil {
		return out, err
	}
	if w2.After(w1) {
		_, below := split(hotRows, w2)
		if len(below) > 0 {
			second := AppendOutcome{}
			if err := t.writeCold(ctx, below, &second); err != nil {
				return out, fmt.Errorf("append: re-route %d rows after the watermark moved to %s: %w", len(below), w2.Format(time.RFC3339), err)
			}
			out.Rerouted = len(below)
			out.Displacements = append(out.Displacements, second.Displacements...)
			if err := t.dropRecreatedBelow(ctx, w2); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// split cuts rows at the watermark w: below goes cold, the rest hot.
func split(rows []meterstore.Row, w time.Time) (hotRows, coldRows []meterstore.Row) {
	for _, r := range rows {
		if !w.IsZero() && r.From.Before(w) {
			coldRows = append(coldRows, r)
		} else {
			hotRows = append(hotRows, r)
		}
	}
	return hotRows, coldRows
}

// writeBatch bounds one hot transaction.
const writeBatch = 20_000

func (t *Table) writeHot(ctx context.Context, rows []meterstore.Row, out *AppendOutcome) error {
	for len(rows) > 0 {
		n := min(len(rows), writeBatch)
		ds, err := t.hot.Write(ctx, rows[:n])
		if err != nil {
			return err
		}
		for _, d := range ds {
			out.Displacements = append(out.Displacements, Displacement{Row: d.Row, Tier: HotTier, Effect: d.Effect, Superseded: d.Superseded})
		}
		out.HotRows += n
		rows = rows[n:]
	}
	return nil
}

func (t *Table) writeCold(ctx context.Context, rows []meterstore.Row, out *AppendOutcome) error {
	if len(rows) == 0 {
		return nil
	}
	ds, err := t.cold.AppendCold(ctx, rows)
	if err != nil {
		return err
	}
	for _, d := range ds {
		out.Displacements = append(out.Displacements, Displacement{Row: d.Row, Tier: ColdTier, Effect: Effect(d.Effect), Superseded: d.Displaced})
	}
	out.ColdRows += len(rows)
	return nil
}

// dropRecreatedBelow removes hot partitions entirely below w whose rows the
// re-route put in Iceberg: a write that landed after archival dropped a window
// recreated its partition below the watermark, where no query reads.
func (t *Table) dropRecreatedBelow(ctx context.Context, w time.Time) error {
	parts, err := t.hot.Partitions(ctx)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if p.To.After(w) {
			continue
		}
		n, err := t.hot.CountRows(ctx, p.Name)
		if err != nil {
			return err
		}
		stored, err := t.cold.ReadRows(ctx, catalog.PlanRequest{From: p.From, To: p.To})
		if err != nil {
			return err
		}
		if int64(len(stored)) < n {
			return fmt.Errorf("append: partition %s below the watermark holds %d rows, Iceberg %d; kept for an operator", p.Name, n, len(stored))
		}
		if err := t.hot.Detach(ctx, p); err != nil {
			return err
		}
		if err := t.hot.Drop(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// ErrBelowBoundary is returned by a HotWriter for an interval below the boundary it
// was opened at.
var ErrBelowBoundary = errors.New("interval below the tiering boundary")

// HotWriter is the bulk path for steady-state ingest of current data. It reads
// the boundary once and refuses — never routes — any interval below it: routing
// on a stale boundary could place a row below the true watermark, refusing
// cannot. Reopen one per ingest run; the margin is the settlement lag.
type HotWriter struct {
	t        *Table
	boundary time.Time
}

// HotWriter opens a writer at the current boundary.
func (t *Table) HotWriter(ctx context.Context) (*HotWriter, error) {
	w, err := t.Watermark(ctx)
	if err != nil {
		return nil, err
	}
	return &HotWriter{t: t, boundary: w}, nil
}

// Boundary is the watermark the writer was opened at.
func (w *HotWriter) Boundary() time.Time { return w.boundary }

// Append writes deliveries to PostgreSQL; nothing is written if any interval is
// below the boundary.
func (w *HotWriter) Append(ctx context.Context, series ...meterstore.StoredSeries) (AppendOutcome, error) {
	var rows []meterstore.Row
	for _, s := range series {
		r, err := w.t.cfg.Encode(s)
		if err != nil {
			return AppendOutcome{}, err
		}
		for _, x := range r {
			if !w.boundary.IsZero() && x.From.Before(w.boundary) {
				return AppendOutcome{}, fmt.Errorf("malo %s %s interval at %s: %w %s; late corrections must go through Append, which routes them to Iceberg",
					x.MaloID, x.ObisCode, x.From.Format(time.RFC3339), ErrBelowBoundary, w.boundary.Format(time.RFC3339))
			}
		}
		rows = append(rows, r...)
	}
	var out AppendOutcome
	err := w.t.writeHot(ctx, rows, &out)
	return out, err
}
