// Package archive moves settled windows from PostgreSQL to Iceberg, one
// partition per window, ordered so that no step can lose or double a row:
//
//	claim every range below W+step      (hot.ClaimBelow: the window's partition is
//	                                      detached, a row or a new partition below
//	                                      W+step now fails instead of landing unseen)
//	  → stream it, keyset-paged, into Parquet files      (durable, not yet visible)
//	  → one Iceberg commit: the files + watermark W+step  (visible, atomically)
//	  → DROP TABLE the detached partition                 (never DELETE)
//
// Exactly one process archives a table at a time (a PostgreSQL advisory-lock
// lease); a contended lease is a normal outcome, not an error. A holder whose
// session ended unnoticed is fenced off: each claim checks the lease's token in
// its own transaction, and each commit lands only if no window was committed
// since the run read the watermark (catalog.Fence) — so a window is never
// committed twice, whoever holds the lease when. A crash at any
// step is recovered by the next run: a detached partition whose window the
// committed watermark covers is dropped once its rows are verified in Iceberg;
// one it does not cover is archived again. Uncommitted files are never
// referenced (orphan cleanup reclaims them). Invariants 1, 2 and 9 of the design.
package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/internal/pglock"
)

// ErrInvariant means the store is in a state archival must not touch: rows below
// the watermark still in PostgreSQL, or a detached partition whose rows are not
// in Iceberg. Nothing is dropped; an operator has to look.
var ErrInvariant = errors.New("tiering invariant violated")

// ErrQuarantined means the configured schema narrows the cold table's: archival
// of the table stops (the watermark freezes) until the configuration agrees.
var ErrQuarantined = errors.New("table quarantined")

// Step names the points a crash test can stop the job at.
type Step string

const (
	AfterDetach Step = "after-detach"
	AfterWrite  Step = "after-write" // every row read into the files being written, commit not yet made
	AfterCommit Step = "after-commit"
	AfterDrop   Step = "after-drop"
)

// Progress is reported while a window streams.
type Progress struct {
	Window    time.Time // the window's start
	Rows      int64     // rows streamed so far
	Done      bool
	Recovered bool // a window found detached by an earlier, interrupted run
}

// Options configure an Archiver. Zero values mean: no progress, no hooks.
type Options struct {
	// Progress is called as rows stream (about once per keyset page, from the
	// goroutine reading PostgreSQL, never two calls at once) and at the end of
	// each window.
	Progress func(Progress)
	// Hook, for crash tests, is called at each Step; a non-nil error stops the
	// job there, as a crash would.
	Hook func(Step) error
	// Declared is the table's configuration as the deployment declares it:
	// before every run the cold schema is checked against it, and a narrowing
	// change quarantines the table. Zero is the hot tier's configuration — a
	// table runs in its declared layout unless it is quarantined, when its
	// tiers run in the stored one (catalog.Table.StoredLayout).
	Declared meterstore.TableConfig
}

// Archiver archives one table.
type Archiver struct {
	hot      *hot.Store
	cold     *catalog.Table
	cfg      meterstore.TableConfig
	declared meterstore.TableConfig
	opt      Options
}

// New returns an archiver for one table's two tiers.
func New(h *hot.Store, c *catalog.Table, opt Options) *Archiver {
	declared := opt.Declared
	if declared.Name() == "" {
		declared = h.Config()
	}
	return &Archiver{hot: h, cold: c, cfg: h.Config(), declared: declared, opt: opt}
}

// Window is one archived window.
type Window struct {
	From, To  time.Time
	Rows      int64
	Files     int
	Bytes     int64
	Watermark time.Time // after this window
	Duration  time.Duration
	Recovered bool // finished for an earlier, interrupted run
}

// Outcome is what one run did.
type Outcome struct {
	Table          string
	LeaseContended bool // another process holds the lease; nothing was done
	Windows        []Window
	Dropped        []string // detached partitions of an interrupted run, verified and dropped
	Watermark      time.Time
	Duration       time.Duration // the run's, lease to release
	// Compacted lists the partitions a scheduled compaction rewrote;
	// CompactionContended says another process held the lease then.
	Compacted           []catalog.CompactedPartition
	CompactionContended bool
	// OrphansDeleted lists the files a scheduled orphan cleanup removed.
	OrphansDeleted []string
	// Quarantine names each narrowing change that halted the run
	// (ErrQuarantined); empty when archival could proceed.
	Quarantine []string
}

// ArchivedAnything reports whether the run moved any window.
func (o Outcome) ArchivedAnything() bool { return len(o.Windows) > 0 }

func (a *Archiver) hook(s Step) error {
	if a.opt.Hook == nil {
		return nil
	}
	if err := a.opt.Hook(s); err != nil {
		return fmt.Errorf("archive %s stopped %s: %w", a.cfg.Name(), s, err)
	}
	return nil
}

// Archive moves up to maxWindows settled windows, oldest first: each window
// [W, W+step) with W+step ≤ now − settlement_lag. maxWindows ≤ 0 means no limit.
func (a *Archiver) Archive(ctx context.Context, now time.Time, maxWindows int) (Outcome, error) {
	start := time.Now()
	out, err := a.underLease(ctx, func(r *run, out *Outcome) error { return a.archive(ctx, r, now, maxWindows, out) })
	out.Duration = time.Since(start)
	a.recordArchival(ctx, out, err)
	return out, err
}

// ErrLeaseLost: the run's archiver lease ended under it (its PostgreSQL
// session was cut) or another process took it; the run stopped, and what it
// left is the next run's to finish.
var ErrLeaseLost = pglock.ErrLeaseLost

// ErrFenced: a window's commit found the watermark set by another archiver
// since the run read it (catalog.ErrFenced); the window is that archiver's.
var ErrFenced = catalog.ErrFenced

// run is what one run under the lease carries: the lease, which every claim
// checks, and the fence its next commit rests on.
type run struct {
	lease *pglock.Lease
	fence catalog.Fence
}

// underLease runs fn holding the table's archiver lease, with the cold table
// refreshed, the run's fence read and the committed watermark in the outcome.
// A lease held by another process is the normal outcome LeaseContended, and fn
// does not run.
func (a *Archiver) underLease(ctx context.Context, fn func(r *run, out *Outcome) error) (Outcome, error) {
	out := Outcome{Table: a.cfg.Name()}
	lease, ok, err := a.hot.TryArchiveLease(ctx)
	if err != nil {
		return out, err
	}
	if !ok {
		out.LeaseContended = true
		return out, nil
	}
	defer lease.Release()
	if err := a.cold.Refresh(ctx); err != nil {
		return out, err
	}
	r := &run{lease: lease}
	if r.fence, err = a.cold.Fence(ctx, lease); err != nil {
		return out, err
	}
	out.Watermark = r.fence.Watermark
	err = fn(r, &out)
	return out, err
}

// archive is Archive under the lease.
func (a *Archiver) archive(ctx context.Context, r *run, now time.Time, maxWindows int, out *Outcome) error {
	if err := a.checkSchema(ctx, out); err != nil {
		return err
	}
	if err := a.reconcileBelow(ctx, r, out.Watermark, out); err != nil {
		return err
	}
	if err := a.recover(ctx, r, out); err != nil {
		return err
	}
	w := out.Watermark
	step := a.cfg.ArchivalStep()
	limit := now.Add(-a.cfg.SettlementLag())
	if w.IsZero() {
		// Nothing archived yet: start at the oldest partition holding rows.
		// The first window's claim takes every range below it too.
		var err error
		if w, err = a.oldestWithRows(ctx); err != nil || w.IsZero() {
			return err
		}
	}
	for maxWindows <= 0 || len(out.Windows) < maxWindows {
		end := w.Add(step)
		if end.After(limit) {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		win, err := a.archiveWindow(ctx, r, nil, w, end)
		if err != nil {
			return err
		}
		out.Windows = append(out.Windows, win)
		out.Watermark = win.Watermark
		w = end
	}
	return nil
}

// checkSchema compares the cold table's schema with the declared one before
// a run: a narrowing change halts it (ErrQuarantined, each reason in the
// outcome) — the watermark freezes, and nothing leaves PostgreSQL, where it
// can still be corrected, for a layout nobody agreed on; an additive change
// not yet in the cold table is applied first, so the files written carry it.
func (a *Archiver) checkSchema(ctx context.Context, out *Outcome) error {
	check, err := a.cold.CheckSchema(a.declared)
	if err != nil {
		return err
	}
	if err := check.Err(); err != nil {
		out.Quarantine = check.Reasons()
		return fmt.Errorf("archive %s: %w: %w", a.cfg.Name(), ErrQuarantined, err)
	}
	if len(check.Changes) > 0 {
		if _, err := a.cold.Evolve(ctx); err != nil {
			return fmt.Errorf("archive %s: %w", a.cfg.Name(), err)
		}
	}
	return nil
}

// Quarantine names each narrowing change between the declared configuration
// and the cold table as the handle last read it; empty when there is none.
func (a *Archiver) Quarantine() []string {
	check, err := a.cold.CheckSchema(a.declared)
	if err != nil {
		return []string{err.Error()}
	}
	return check.Reasons()
}

// oldestWithRows is the start of the oldest partition holding a row (zero:
// none). Each is probed with a keyset page of one row, not a count of them all
// — the first archival of a table meets full partitions.
func (a *Archiver) oldestWithRows(ctx context.Context) (time.Time, error) {
	parts, err := a.hot.Partitions(ctx)
	if err != nil {
		return time.Time{}, err
	}
	for _, p := range parts {
		pager, err := a.hot.Pager(hot.ScanRequest{Table: p.Name, PageRows: 1})
		if err != nil {
			return time.Time{}, err
		}
		page, err := pager.Next(ctx, nil)
		if err != nil {
			return time.Time{}, err
		}
		if len(page) > 0 {
			return p.From, nil
		}
	}
	return time.Time{}, nil
}

// archiveWindow runs the four steps for [from, to): claim every range below
// to (hot.ClaimBelow: the window's partition and, on a table's first window,
// any below it are detached, and no row can land below to any more), stream
// the claimed partitions and those an interrupted run left detached into one
// commit with watermark to, then drop them. The claim comes before the commit
// whether or not the window has a partition: a writer that routed by the old
// watermark is refused from then on instead of writing where the commit hides
// its rows.
func (a *Archiver) archiveWindow(ctx context.Context, r *run, detached []hot.Partition, from, to time.Time) (Window, error) {
	start := time.Now()
	recovered := len(detached) > 0
	win := Window{From: from, To: to, Recovered: recovered}
	claimed, err := a.hot.ClaimBelow(ctx, r.lease, to)
	if err != nil {
		return win, fmt.Errorf("archive %s window %s: %w", a.cfg.Name(), from.Format(time.RFC3339), err)
	}
	if len(claimed) > 0 {
		if err := a.hook(AfterDetach); err != nil {
			return win, err
		}
	}
	parts := append(slices.Clone(detached), claimed...)
	slices.SortFunc(parts, func(x, y hot.Partition) int { return x.From.Compare(y.From) })
	src, err := a.partitionsSource(parts, from)
	if err != nil {
		return win, err
	}
	res, err := a.cold.CommitFenced(ctx, r.fence, hookedSource{src, a}, to)
	if err != nil {
		return win, fmt.Errorf("archive %s window %s: %w", a.cfg.Name(), from.Format(time.RFC3339), err)
	}
	r.fence = r.fence.After(res)
	win.Rows, win.Files, win.Bytes, win.Watermark = res.Rows, res.Files, res.Bytes, res.Watermark
	if err := a.hook(AfterCommit); err != nil {
		return win, err
	}
	if len(parts) > 0 {
		if err := a.dropCommitted(ctx, parts, res.Rows); err != nil {
			return win, err
		}
		if err := a.hook(AfterDrop); err != nil {
			return win, err
		}
	}
	win.Duration = time.Since(start)
	if a.opt.Progress != nil {
		a.opt.Progress(Progress{Window: from, Rows: win.Rows, Done: true, Recovered: recovered})
	}
	return win, nil
}

// dropCommitted drops the detached partitions a window's commit streamed,
// once their rows add up to the rows committed; otherwise they are kept.
func (a *Archiver) dropCommitted(ctx context.Context, parts []hot.Partition, committed int64) error {
	var n int64
	names := make([]string, len(parts))
	for i, p := range parts {
		c, err := a.hot.CountRows(ctx, p.Name)
		if err != nil {
			return err
		}
		n += c
		names[i] = p.Name
	}
	if n != committed {
		return fmt.Errorf("archive %s: partitions %v hold %d rows but %d were committed; they are kept: %w",
			a.cfg.Name(), names, n, committed, ErrInvariant)
	}
	for _, p := range parts {
		if err := a.hot.Drop(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// Compact compacts the table's due months (catalog.Table.Compact) under the
// archiver's lease, so that of several replicas one compacts a table at a
// time; the others get contended = true and nothing is done. Holding it keeps
// archival of the table off for the run, which is the next tick's work then.
func (a *Archiver) Compact(ctx context.Context, opt catalog.CompactOptions) (res catalog.CompactResult, contended bool, err error) {
	out, err := a.underLease(ctx, func(*run, *Outcome) error {
		var cerr error
		res, cerr = a.cold.Compact(ctx, opt)
		return cerr
	})
	return res, out.LeaseContended, err
}

// Reconcile restores invariant 1 outside a scheduled run, under the archiver's
// lease: an attached partition below the watermark, where no query reads — one
// a build that did not claim the archived range let a stale writer recreate —
// has its rows offered to Iceberg (already there = Duplicate) and is dropped,
// and the range below the watermark is claimed again.
// Partitions an interrupted run left detached are recovered as Archive does.
// store.Append calls it when the watermark moved during a write, after it has
// re-routed its own rows to Iceberg. When another process holds the lease it
// returns LeaseContended and does nothing: every archival run reconciles first.
func (a *Archiver) Reconcile(ctx context.Context) (Outcome, error) {
	return a.underLease(ctx, func(r *run, out *Outcome) error {
		if err := a.reconcileBelow(ctx, r, out.Watermark, out); err != nil {
			return err
		}
		return a.recover(ctx, r, out)
	})
}

// reconcileBelow claims the range below the committed watermark w again
// (hot.ClaimBelow), which withdraws the claim of a window whose commit never
// happened, and moves every attached partition it detaches there — one a write
// recreated below the watermark — to Iceberg: its rows are offered (already
// there = Duplicate) and it is dropped. The caller holds the lease.
func (a *Archiver) reconcileBelow(ctx context.Context, r *run, w time.Time, out *Outcome) error {
	claimed, err := a.hot.ClaimBelow(ctx, r.lease, w)
	if err != nil {
		return err
	}
	for _, p := range claimed {
		if err := a.reoffer(ctx, p); err != nil {
			return fmt.Errorf("archive %s: move partition %s below the watermark %s to Iceberg (it stays detached; the next run retries): %w",
				a.cfg.Name(), p.Name, w.Format(time.RFC3339), err)
		}
		if err := a.hot.Drop(ctx, p); err != nil {
			return err
		}
		out.Dropped = append(out.Dropped, p.Name)
	}
	return nil
}

// recover finishes what an interrupted run left: detached partitions.
func (a *Archiver) recover(ctx context.Context, r *run, out *Outcome) error {
	det, err := a.hot.DetachedPartitions(ctx)
	if err != nil {
		return err
	}
	w := out.Watermark
	var pending []hot.Partition
	for _, p := range det {
		if p.To.After(w) {
			pending = append(pending, p)
			continue
		}
		// Committed: its rows should be in Iceberg. A count proves nothing (a
		// window also holds late corrections), so every row is offered to
		// Iceberg again, page by page: one already there is a Duplicate, one
		// missing is appended. Only then is the partition dropped.
		if err := a.reoffer(ctx, p); err != nil {
			return fmt.Errorf("archive %s: verify detached partition %s before dropping it: %w", a.cfg.Name(), p.Name, err)
		}
		if err := a.hot.Drop(ctx, p); err != nil {
			return err
		}
		out.Dropped = append(out.Dropped, p.Name)
	}
	if len(pending) == 0 {
		return nil
	}
	// Detached, never committed: archive them again. A window claims one
	// partition, the next after the watermark; only a table's first window
	// claims the partitions below it too, and nothing is archived then.
	if !w.IsZero() && (len(pending) > 1 || !pending[0].From.Equal(w)) {
		p := pending[0]
		if p.From.Equal(w) {
			p = pending[1]
		}
		return fmt.Errorf("archive %s: detached partition %s [%s, %s) is not the next window after watermark %s: %w",
			a.cfg.Name(), p.Name, p.From.Format(time.RFC3339), p.To.Format(time.RFC3339), w.Format(time.RFC3339), ErrInvariant)
	}
	last := pending[len(pending)-1]
	win, err := a.archiveWindow(ctx, r, pending, last.From, last.To)
	if err != nil {
		return err
	}
	out.Windows = append(out.Windows, win)
	out.Watermark = win.Watermark
	return nil
}

// reoffer appends every row of a detached partition to Iceberg, idempotently.
// AppendCold checks them against every cold row overlapping them. They need
// no check against the hot tier's rows: they were PostgreSQL's, compared with
// the rows of the attached partitions by its constraints and Write's check
// across partitions when the later of each pair was written. A row refused
// here stays in the detached partition, and the run fails naming it.
func (a *Archiver) reoffer(ctx context.Context, p hot.Partition) error {
	return a.eachPage(ctx, p, func(page []meterstore.Row) error {
		_, err := a.cold.AppendCold(ctx, page)
		return err
	})
}

// eachPage calls fn with every keyset page of a partition's rows; fn must not
// keep the page, whose buffer the next page reuses.
func (a *Archiver) eachPage(ctx context.Context, p hot.Partition, fn func([]meterstore.Row) error) error {
	pager, err := a.hot.Pager(hot.ScanRequest{Table: p.Name})
	if err != nil {
		return err
	}
	var page []meterstore.Row
	for {
		if page, err = pager.Next(ctx, page); err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		if err := fn(page); err != nil {
			return err
		}
	}
}

// partitionsSource reads the detached partitions a window commits: one is
// paged as it is, several are merged (mergedPages) — each is in the order the
// commit writes files in, one after the other is not.
func (a *Archiver) partitionsSource(parts []hot.Partition, window time.Time) (*partitionSource, error) {
	pagers := make([]*hot.Pager, len(parts))
	for i, p := range parts {
		pager, err := a.hot.Pager(hot.ScanRequest{Table: p.Name})
		if err != nil {
			return nil, err
		}
		pagers[i] = pager
	}
	src := &partitionSource{a: a, window: window}
	switch len(pagers) {
	case 0: // an empty window
	case 1:
		src.next = pagers[0].Next
	default:
		m := &mergedPages{pageRows: a.cfg.ScanChunkRows()}
		for _, p := range pagers {
			m.inputs = append(m.inputs, &pageCursor{pager: p})
		}
		src.next = m.Next
	}
	return src, nil
}

// partitionSource pages detached partitions by their full primary key (none:
// an empty window). It decodes into two page buffers in turn: CommitWindow
// fetches the next page while it still encodes the current one, and is done
// with a page before it asks for the one after next (catalog.RowSource).
type partitionSource struct {
	a      *Archiver
	next   func(ctx context.Context, buf []meterstore.Row) ([]meterstore.Row, error) // nil: no rows
	window time.Time
	bufs   [2][]meterstore.Row
	pages  int
	rows   int64
}

func (s *partitionSource) Next(ctx context.Context) ([]meterstore.Row, error) {
	if s.next == nil {
		return nil, io.EOF
	}
	buf := &s.bufs[s.pages%2]
	page, err := s.next(ctx, *buf)
	if err != nil {
		return nil, err
	}
	if len(page) == 0 {
		return nil, io.EOF
	}
	*buf = page
	s.pages++
	s.rows += int64(len(page))
	if s.a.opt.Progress != nil {
		s.a.opt.Progress(Progress{Window: s.window, Rows: s.rows})
	}
	return page, nil
}

// mergedPages pages several partitions as one stream in (malo_id, obis_code,
// from) order — the order CommitWindow requires within a month, which a table's
// first window can span with the partitions below it.
type mergedPages struct {
	inputs   []*pageCursor
	pageRows int
}

type pageCursor struct {
	pager *hot.Pager
	page  []meterstore.Row
	i     int
	done  bool
}

// Next fills buf with the next rows in order; an empty page is the end.
func (m *mergedPages) Next(ctx context.Context, buf []meterstore.Row) ([]meterstore.Row, error) {
	out := buf[:0]
	for len(out) < m.pageRows {
		var best *pageCursor
		for _, c := range m.inputs {
			if c.i == len(c.page) && !c.done {
				page, err := c.pager.Next(ctx, c.page)
				if err != nil {
					return nil, err
				}
				c.page, c.i, c.done = page, 0, len(page) == 0
			}
			if !c.done && (best == nil || rowBefore(&c.page[c.i], &best.page[best.i])) {
				best = c
			}
		}
		if best == nil {
			break
		}
		out = append(out, best.page[best.i])
		best.i++
	}
	return out, nil
}

func rowBefore(a, b *meterstore.Row) bool {
	if a.MaloID != b.MaloID {
		return a.MaloID < b.MaloID
	}
	if a.ObisCode != b.ObisCode {
		return a.ObisCode < b.ObisCode
	}
	return a.From.Before(b.From)
}

// hookedSource fires AfterWrite when the source is drained: every row has been
// read, the last page is being encoded, the commit is not yet made.
type hookedSource struct {
	catalog.RowSource
	a *Archiver
}

func (h hookedSource) Next(ctx context.Context) ([]meterstore.Row, error) {
	page, err := h.RowSource.Next(ctx)
	if errors.Is(err, io.EOF) {
		if herr := h.a.hook(AfterWrite); herr != nil {
			return nil, herr
		}
	}
	return page, err
}

// Report is the result of VerifyInvariant.
type Report struct {
	Table     string
	Watermark time.Time
	RowsBelow int64    // rows with from < watermark still in the PostgreSQL parent
	Detached  []string // partitions detached and not dropped (an interrupted run)
	Healthy   bool
	// Quarantine names each narrowing schema change that halts the table's
	// archival (not an invariant violation: nothing is where no query looks).
	Quarantine []string
}

func (r Report) String() string {
	s := fmt.Sprintf("%s: %d rows below watermark %s still in PostgreSQL, detached partitions %v",
		r.Table, r.RowsBelow, r.Watermark.Format(time.RFC3339), r.Detached)
	if r.Healthy {
		s = fmt.Sprintf("%s: healthy, watermark %s", r.Table, r.Watermark.Format(time.RFC3339))
	}
	if len(r.Quarantine) > 0 {
		s += "; quarantined, archival halted: " + strings.Join(r.Quarantine, "; ")
	}
	return s
}

// VerifyInvariant checks invariant 1: no row below the watermark is still in
// PostgreSQL, where no query looks for it.
func (a *Archiver) VerifyInvariant(ctx context.Context) (Report, error) {
	r := Report{Table: a.cfg.Name()}
	if err := a.cold.Refresh(ctx); err != nil {
		return r, err
	}
	w, err := a.cold.Watermark(ctx)
	if err != nil {
		return r, err
	}
	r.Watermark = w
	if !w.IsZero() {
		if r.RowsBelow, err = a.hot.RowsBelow(ctx, w); err != nil {
			return r, err
		}
	}
	det, err := a.hot.DetachedPartitions(ctx)
	if err != nil {
		return r, err
	}
	for _, p := range det {
		r.Detached = append(r.Detached, p.Name)
	}
	r.Healthy = r.RowsBelow == 0
	r.Quarantine = a.Quarantine()
	return r, nil
}

// ContradictionAcrossTiers compares the cold rows reaching above the
// watermark with PostgreSQL's (hot.Store.HoldReadings, which takes the
// readings' locks for the comparison and writes nothing here): conflict is
// the hot tier's refusal of the intervals hot rows contradict (overlap at one
// version, a second operator) — one pair's refusal, or a
// *hot.TierConflictsError naming the first 20 and counting all — nil when
// none does. No write
// path stores such a pair, so a writer around the store left it (a file
// committed to Iceberg out of band), and sums over the overlap count both.
// It reads the files that may hold such an interval: msql verify runs it,
// not the readiness probe.
func (a *Archiver) ContradictionAcrossTiers(ctx context.Context) (conflict, err error) {
	if err := a.cold.Refresh(ctx); err != nil {
		return nil, err
	}
	w, rows, err := a.cold.Straddling(ctx)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	err = a.hot.HoldReadings(ctx, rows, w, func(context.Context) error { return nil })
	if errors.Is(err, meterstore.ErrOverlap) || errors.Is(err, meterstore.ErrSecondOperator) {
		return err, nil
	}
	return nil, err
}

// ErrLeaseHeld: another process holds the table's archiver lease; an operation
// that must not run beside an archival did nothing. Retry when it is done.
var ErrLeaseHeld = errors.New("archiver lease held by another process")

// RestoreWatermark commits the tiering watermark again to a table that lost it
// (catalog.ErrWatermarkMissing: an out-of-band commit whose MeterStore
// ancestors were expired). at zero derives it (derivedWatermark). The value is
// refused unless it is a partition boundary, every cold row lies
// below it and no hot row does; then queries split at it again and archival
// resumes there. It returns the watermark committed.
func (a *Archiver) RestoreWatermark(ctx context.Context, at time.Time) (time.Time, error) {
	lease, ok, err := a.hot.TryArchiveLease(ctx)
	if err != nil {
		return time.Time{}, err
	}
	if !ok {
		return time.Time{}, fmt.Errorf("restore watermark of %s: %w; retry when the archival run is done", a.cfg.Name(), ErrLeaseHeld)
	}
	defer lease.Release()
	if at.IsZero() {
		if at, err = a.derivedWatermark(ctx); err != nil {
			return time.Time{}, err
		}
	}
	at = at.UTC()
	if !a.hot.PartitionStart(at).Equal(at) {
		return time.Time{}, fmt.Errorf("restore watermark of %s: %s is not a partition boundary (the next is %s); archival windows start at one",
			a.cfg.Name(), at.Format(time.RFC3339), a.hot.PartitionStart(at).Add(a.cfg.PartitionStep()).Format(time.RFC3339))
	}
	below, err := a.hot.RowsBelow(ctx, at)
	if err != nil {
		return time.Time{}, err
	}
	if below > 0 {
		return time.Time{}, fmt.Errorf("restore watermark of %s at %s: PostgreSQL holds %d rows below it; choose the start of the oldest hot partition holding rows",
			a.cfg.Name(), at.Format(time.RFC3339), below)
	}
	if err := a.cold.RestoreWatermark(ctx, at); err != nil {
		return time.Time{}, err
	}
	return at, nil
}

// derivedWatermark is RestoreWatermark's value when none is given: the end of
// the partition holding the newest cold row. The lost watermark is at or above
// it (cold rows lie below the watermark) and at or below the oldest hot row;
// any boundary between splits the rows alike, and windows between it and the
// lost value held no rows.
func (a *Archiver) derivedWatermark(ctx context.Context) (time.Time, error) {
	if err := a.cold.Refresh(ctx); err != nil {
		return time.Time{}, err
	}
	hi, err := a.cold.ColdFromMax(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("restore watermark of %s: %w", a.cfg.Name(), err)
	}
	return a.hot.PartitionStart(hi).Add(a.cfg.PartitionStep()), nil
}
