package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/internal/telemetry"
	"github.com/meterstore/meterstore/internal/testhooks"
)

// Tier says where a row was written.
type Tier uint8

// The two tiers.
const (
	// HotTier is PostgreSQL: rows at or above the watermark.
	HotTier Tier = iota + 1
	// ColdTier is Iceberg: rows below the watermark (late corrections).
	ColdTier
)

// String names the tier.
func (t Tier) String() string {
	if t == ColdTier {
		return "cold"
	}
	return "hot"
}

// Displacement is one written row as its tier reported it, and where it went.
type Displacement struct {
	meterstore.Displacement
	Tier Tier
	// Round is 1 for the first routing pass, 2 for a row the second boundary read
	// re-routed to Iceberg because an archival moved the boundary in between. For
	// such a row the round-2 displacement is the authoritative one.
	Round int
}

// AppendOutcome is the result of Append, covering both tiers and both routing passes.
type AppendOutcome struct {
	HotRows       int // rows sent to PostgreSQL (Duplicates included)
	ColdRows      int // rows sent to Iceberg: late corrections (Duplicates included)
	Rerouted      int // rows the second pass re-sent to Iceberg because an archival ran in between
	Displacements []Displacement
	// Stamps has one entry per series given, in their order: the recorded_at
	// its rows were written with, and whether the store's clock stamped it
	// (the series carried none) or it is the caller's.
	Stamps []Stamp
	// effects tallies the written rows by tier and effect for the metrics,
	// where the displacement reports are built.
	effects telemetry.Effects
}

// HadLateCorrections reports whether any interval was below the boundary and went to Iceberg.
func (o AppendOutcome) HadLateCorrections() bool { return o.ColdRows > 0 }

func (t *Table) hook(s testhooks.AppendStep) {
	if f := t.st.hooks.Append; f != nil {
		f(s)
	}
}

// detachedRetries bounds how often Append waits for an archival run that holds
// the partition a row belongs to detached (between its detach and its commit).
const detachedRetries = 20

// Append writes interval deliveries (Lastgänge), routing every interval to the
// tier that owns it: a row below the watermark is a late correction and goes to
// Iceberg, where queries look for it, never to PostgreSQL, where it would be
// invisible (invariant 7). It reads the boundary, writes (cold first, so a
// cold-append lease timeout — ErrLockTimeout — leaves nothing changed), then
// reads the boundary again: if an archival moved it since the first read (a
// hot write refused by the archival's claim — a detached partition, the
// archived range — is retried and routes by a read in between), the rows
// written to PostgreSQL below the new boundary are appended to Iceberg too
// (both passes are idempotent, so a row the archival already moved is a
// Duplicate), and the archiver reconciles (archive.Archiver.Reconcile).
//
// A row restating a different value under a stored version, and a second network
// operator for a reading, are refused in both tiers (wrapping meterstore.ErrConflict). A
// table declaring a subject column refuses a subject reference the store's
// registry does not back (ErrUnknownSubject). Append is refused on a point table:
// register readings go through AppendReadings.
func (t *Table) Append(ctx context.Context, series ...meterstore.StoredSeries) (out AppendOutcome, err error) {
	m := t.writeMetrics()
	defer func() { m.add(out); m.done(ctx, err) }()
	if t.cfg.TimeModel() == meterstore.Point {
		return AppendOutcome{}, fmt.Errorf("append to %s: %w: it holds register readings (a Zählerstandsgang); use AppendReadings, or Append on an interval table",
			t.cfg.Name(), ErrWrongTimeModel)
	}
	rows, stamps, err := t.encode(series)
	if err != nil {
		return AppendOutcome{}, err
	}
	if err := t.checkSubjects(ctx, rows); err != nil {
		return AppendOutcome{}, err
	}
	out, err = t.appendRows(ctx, rows, t.HotBatchRows())
	out.Stamps = stamps
	return out, err
}

// AppendWhole is Append — AppendReadings on a point table — for a delivery
// that must go in whole (an MSCONS message, an import's batch): its rows at or
// above the watermark are written in one PostgreSQL transaction whatever their
// number, where Append cuts them into transactions of HotBatchRows, so a
// refusal in its last rows leaves none of the first. The transaction, its
// locks and its memory grow with the delivery. Rows below the watermark go to
// Iceberg in one commit either way; no write spans both tiers atomically, so
// a delivery across the watermark is whole per tier only.
func (t *Table) AppendWhole(ctx context.Context, series ...meterstore.StoredSeries) (out AppendOutcome, err error) {
	m := t.writeMetrics()
	defer func() { m.add(out); m.done(ctx, err) }()
	rows, stamps, err := t.encode(series)
	if err != nil {
		return AppendOutcome{}, err
	}
	if err := t.checkSubjects(ctx, rows); err != nil {
		return AppendOutcome{}, err
	}
	out, err = t.appendRows(ctx, rows, max(len(rows), 1))
	out.Stamps = stamps
	return out, err
}

// encode stamps the series (stamp) and encodes their rows.
func (t *Table) encode(series []meterstore.StoredSeries) ([]meterstore.Row, []Stamp, error) {
	if err := t.writable(); err != nil {
		return nil, nil, err
	}
	series, stamps, err := t.stamp(series)
	if err != nil {
		return nil, nil, err
	}
	var rows []meterstore.Row
	for _, s := range series {
		r, err := t.cfg.Encode(s)
		if err != nil {
			return nil, nil, fmt.Errorf("append to %s: %w", t.cfg.Name(), err)
		}
		rows = append(rows, r...)
	}
	return rows, stamps, nil
}

// appendRows routes rows and writes them, at most perTx rows in one hot transaction.
func (t *Table) appendRows(ctx context.Context, rows []meterstore.Row, perTx int) (AppendOutcome, error) {
	var out AppendOutcome
	if len(rows) == 0 {
		return out, nil
	}
	// w1 is the first boundary read: every row written to PostgreSQL was routed
	// against it or a later read, so a boundary past w1 at the end may have moved
	// over rows of any attempt — a retry's own read does not clear earlier batches.
	var w1 time.Time
	var hotRows []meterstore.Row // every row this call wrote to PostgreSQL
	pending := rows
	for attempt := 0; ; attempt++ {
		w, err := t.Watermark(ctx)
		if err != nil {
			return out, err
		}
		if attempt == 0 {
			w1 = w
		}
		h, c := split(pending, w)
		// Cold first: the lease may time out, and then nothing has changed.
		if err := t.writeCold(ctx, c, w, 1, &out); err != nil {
			return out, err
		}
		n, err := t.writeHot(ctx, h, perTx, 1, &out)
		hotRows = append(hotRows, h[:n]...)
		if err == nil {
			break
		}
		if !errors.Is(err, hot.ErrPartitionDetached) || attempt >= detachedRetries {
			return out, err
		}
		// An archival holds a window detached: its commit moves the boundary past
		// these rows shortly. Route what is left again against the new boundary.
		pending = h[n:]
		t.hook(testhooks.BeforeDetachedRetry)
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 25 * time.Millisecond):
		}
	}
	t.hook(testhooks.BeforeBoundaryRecheck)
	// The hot rows are committed: the recheck finishes the write — a cancel
	// now would report committed rows as not written, and leave rows an
	// archival moved below the boundary unrouted.
	ctx = context.WithoutCancel(ctx)
	w2, err := t.Watermark(ctx)
	if err != nil {
		return out, err
	}
	if w2.After(w1) {
		_, below := split(hotRows, w2)
		if len(below) > 0 {
			var second AppendOutcome
			if err := t.writeCold(ctx, below, w2, 2, &second); err != nil {
				return out, fmt.Errorf("append to %s: re-route %d rows after the watermark moved to %s: %w",
					t.cfg.Name(), len(below), w2.Format(time.RFC3339), err)
			}
			out.Rerouted = len(below)
			out.ColdRows += second.ColdRows
			out.Displacements = append(out.Displacements, second.Displacements...)
			out.effects.Add(second.effects)
		}
		if _, err := t.archiver.Reconcile(ctx); err != nil {
			return out, err
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

// defaultHotBatchRows bounds one hot transaction unless Config.HotBatchRows does.
const defaultHotBatchRows = 20_000

// HotBatchRows is the most rows one hot write transaction holds
// (Config.HotBatchRows): an Append of at most that many rows, all at or
// above the watermark, is written to PostgreSQL whole or not at all.
func (t *Table) HotBatchRows() int {
	if n := t.st.cfg.HotBatchRows; n > 0 {
		return n
	}
	return defaultHotBatchRows
}

// writeHot writes rows in transactions of at most batch rows and returns how
// many were written before an error.
func (t *Table) writeHot(ctx context.Context, rows []meterstore.Row, batch, round int, out *AppendOutcome) (int, error) {
	written := 0
	for len(rows) > 0 {
		n := min(len(rows), batch)
		t.hook(testhooks.BeforeHotBatch)
		ds, err := t.hot.Write(ctx, rows[:n])
		if err != nil {
			return written, fmt.Errorf("append to %s: %w", t.cfg.Name(), err)
		}
		written += n
		for _, d := range ds {
			out.Displacements = append(out.Displacements, Displacement{Displacement: d, Tier: HotTier, Round: round})
			out.effects.Hot[d.Effect]++
		}
		out.HotRows += n
		rows = rows[n:]
	}
	return written, nil
}

// writeCold appends rows, all below the watermark w, to Iceberg. Rows whose
// interval reaches above w are checked against PostgreSQL's rows first, under
// the readings' locks held through the commit (hot.Store.HoldReadings): the
// cold tier's own checks see Iceberg's rows only.
func (t *Table) writeCold(ctx context.Context, rows []meterstore.Row, w time.Time, round int, out *AppendOutcome) error {
	if len(rows) == 0 {
		return nil
	}
	var ds []meterstore.Displacement
	err := t.hot.HoldReadings(ctx, catalog.ReachingAbove(rows, w), w, func(ctx context.Context) (err error) {
		ds, err = t.cold.AppendCold(ctx, rows)
		return err
	})
	if err != nil {
		return fmt.Errorf("append to %s: %w", t.cfg.Name(), err)
	}
	for _, d := range ds {
		out.Displacements = append(out.Displacements, Displacement{Displacement: d, Tier: ColdTier, Round: round})
		out.effects.Cold[d.Effect]++
	}
	out.ColdRows += len(rows)
	return nil
}

// coldReaching reads the cold rows a hot write compares its intervals with
// (hot.ColdRows), from the catalog's current state.
func (t *Table) coldReaching(ctx context.Context, malos []string, lo, hi time.Time) (time.Time, []meterstore.Row, error) {
	if err := t.cold.Refresh(ctx); err != nil {
		return time.Time{}, nil, err
	}
	return t.cold.Reaching(ctx, malos, lo, hi)
}

// HotWriter is the bulk path for steady-state ingest of current data. It reads
// the boundary once and refuses — never routes — any interval below it: routing
// on a stale boundary could place a row below the true watermark, refusing
// cannot. Reopen one per ingest run; the margin is the settlement lag. Use
// Append for a backfill or a catch-up. A HotWriter is safe for concurrent use.
type HotWriter struct {
	t        *Table
	boundary time.Time
}

// HotWriter opens a writer at the current boundary.
func (t *Table) HotWriter(ctx context.Context) (*HotWriter, error) {
	if err := t.writable(); err != nil {
		return nil, err
	}
	w, err := t.Watermark(ctx)
	if err != nil {
		return nil, err
	}
	return &HotWriter{t: t, boundary: w}, nil
}

// Boundary is the watermark the writer was opened at (zero: nothing archived).
func (w *HotWriter) Boundary() time.Time { return w.boundary }

// Append writes deliveries to PostgreSQL. If any interval is below the boundary
// the whole call is refused with ErrBelowBoundary, naming the interval and
// pointing at Table.Append, and nothing is written. A batch holding an interval
// an archival has claimed since the writer opened (the watermark passed its
// boundary) fails with hot.ErrArchivedRange rather than landing where no query
// reads it: reopen the writer, or send the delivery through Table.Append.
// Displacements are as for Table.Append (all HotTier, Round 1).
func (w *HotWriter) Append(ctx context.Context, series ...meterstore.StoredSeries) (out AppendOutcome, err error) {
	m := w.t.writeMetrics()
	defer func() { m.add(out); m.done(ctx, err) }()
	rows, stamps, err := w.t.encode(series)
	if err != nil {
		return AppendOutcome{}, err
	}
	out.Stamps = stamps
	for _, x := range rows {
		if !w.boundary.IsZero() && x.From.Before(w.boundary) {
			return AppendOutcome{}, fmt.Errorf("hot writer for %s: malo %s %s interval at %s: %w %s; late corrections must go through Append, which routes them to Iceberg",
				w.t.cfg.Name(), x.MaloID, x.ObisCode, x.From.Format(time.RFC3339), ErrBelowBoundary, w.boundary.Format(time.RFC3339))
		}
	}
	if err := w.t.checkSubjects(ctx, rows); err != nil {
		return AppendOutcome{}, err
	}
	_, err = w.t.writeHot(ctx, rows, w.t.HotBatchRows(), 1, &out)
	return out, err
}
