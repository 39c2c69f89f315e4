package main

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
)

// holdMonths is how many closed months the compaction-hold measure compacts,
// one at a time (the first, a middle and the last closed month).
const holdMonths = 3

// holdWriteRows is the size of the hot writer's batch during the
// compaction-hold measure.
const holdWriteRows = 960

// compactionHold measures what compacting one month (msql compact --month)
// holds, month by month: the archiver lease for the whole run (archival's
// tick during it returns "contended" and archives at the next tick), the
// cold-append lease only from the written files to the end (stage and
// commit: a late correction below the watermark waits that long at most),
// and whether hot writes, which take neither, wait: a writer rewrites the
// newest hot rows at a new version back to back during the compaction, then
// for as long again right after it.
func (b *bench) compactionHold() ([]result, error) {
	months, err := b.holdMonths()
	if err != nil {
		return nil, err
	}
	if len(months) == 0 {
		logf("compaction-hold: skipped (no closed month below the watermark)")
		return nil, nil
	}
	w, err := b.newHoldWriter()
	if err != nil {
		return nil, err
	}
	var out []result
	var during, after []time.Duration
	for _, m := range months {
		h, err := b.holdOneMonth(m, w)
		if err != nil {
			return nil, err
		}
		during, after = append(during, h.during...), append(after, h.after...)
		out = append(out, h.result(m))
	}
	d, a := percentile(during, 0.5), percentile(after, 0.5)
	out = append(out, result{
		measure: fmt.Sprintf("hot writes during those compactions (%d rows a write, %d months)", holdWriteRows, len(months)),
		against: "the same writes right after each, for as long", target: "reported", met: true,
		figure: fmt.Sprintf("%.2f× median (%s vs %s, n=%d/%d); p90 %s vs %s", float64(d)/float64(a),
			d.Round(time.Millisecond), a.Round(time.Millisecond), len(during), len(after),
			percentile(during, 0.9).Round(time.Millisecond), percentile(after, 0.9).Round(time.Millisecond))})
	return out, nil
}

// holdMonths are the first, a middle and the last closed month (wholly
// below the watermark) holding at least half the rows of the largest: the
// fixture's first and last days make partial months.
func (b *bench) holdMonths() ([]time.Time, error) {
	parts, err := b.table().Cold().Partitions(b.ctx)
	if err != nil {
		return nil, err
	}
	rows := map[time.Time]int64{}
	var most int64
	for _, p := range parts {
		if p.Closed {
			rows[p.Month] += p.Rows
			most = max(most, rows[p.Month])
		}
	}
	var full []time.Time
	for m, n := range rows {
		if 2*n >= most {
			full = append(full, m)
		}
	}
	slices.SortFunc(full, func(a, b time.Time) int { return a.Compare(b) })
	if len(full) <= holdMonths {
		return full, nil
	}
	return []time.Time{full[0], full[len(full)/2], full[len(full)-1]}, nil
}

// holdWriter rewrites the newest hot rows at a higher version each call.
type holdWriter struct {
	b       *bench
	rows    []meterstore.Row
	version uint64 // the last written
}

func (b *bench) newHoldWriter() (*holdWriter, error) {
	if len(b.fx.hot) == 0 {
		return nil, fmt.Errorf("compaction-hold: the fixture has no hot rows to write")
	}
	rows := b.fx.hot[max(0, len(b.fx.hot)-holdWriteRows):]
	w := &holdWriter{b: b, rows: rows}
	for _, r := range rows {
		w.version = max(w.version, r.Version)
	}
	return w, nil
}

// write writes the batch once at the next version and returns how long it took.
func (w *holdWriter) write() (time.Duration, error) {
	w.version++
	rows := make([]meterstore.Row, len(w.rows))
	for i, r := range w.rows {
		r.Version, r.RecordedAt = w.version, time.Now().UTC()
		rows[i] = r
	}
	start := time.Now()
	if _, err := w.b.table().Hot().Write(w.b.ctx, rows); err != nil {
		return 0, fmt.Errorf("compaction-hold: hot write: %w", err)
	}
	return time.Since(start), nil
}

// writeUntil writes back to back, at least once, until stop is closed.
func (w *holdWriter) writeUntil(stop <-chan struct{}) ([]time.Duration, error) {
	var out []time.Duration
	for {
		d, err := w.write()
		if err != nil {
			return out, err
		}
		out = append(out, d)
		select {
		case <-stop:
			return out, nil
		default:
		}
	}
}

// writeFor writes back to back for at least d.
func (w *holdWriter) writeFor(d time.Duration) ([]time.Duration, error) {
	var out []time.Duration
	for end := time.Now().Add(d); time.Now().Before(end); {
		took, err := w.write()
		if err != nil {
			return out, err
		}
		out = append(out, took)
	}
	return out, nil
}

// monthHold is what one month's compaction held.
type monthHold struct {
	rows          int64
	lease, commit time.Duration // the archiver lease; the written files to the end (the cold-append lease at most)
	tick          string        // archival's tick during the compaction
	during, after []time.Duration
}

func (h monthHold) result(m time.Time) result {
	return result{
		measure: fmt.Sprintf("compaction hold, month %s (%d rows)", m.Format("2006-01"), h.rows),
		against: "hot writes during it and right after", target: "reported", met: true,
		figure: fmt.Sprintf("archiver lease %s, cold-append lease ≤ %s (%.0f rows/s); archival's tick %s; hot write median %s during / %s after (n=%d/%d)",
			h.lease.Round(10*time.Millisecond), h.commit.Round(10*time.Millisecond), float64(h.rows)/h.lease.Seconds(), h.tick,
			percentile(h.during, 0.5).Round(time.Millisecond), percentile(h.after, 0.5).Round(time.Millisecond), len(h.during), len(h.after))}
}

// holdOneMonth compacts month m under the archiver's lease (rewriting it if
// it is compacted already) while w writes hot rows, runs archival's tick
// 300 ms into it, then lets w write as long again.
func (b *bench) holdOneMonth(m time.Time, w *holdWriter) (monthHold, error) {
	var h monthHold
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		h.during, werr = w.writeUntil(stop)
	}()
	var mu sync.Mutex
	var written time.Time
	opt := catalog.CompactOptions{Month: m, OpenMonthFiles: -1, Force: true, Hook: func(s catalog.CompactStep) error {
		mu.Lock()
		defer mu.Unlock()
		if s == catalog.CompactAfterWrite && written.IsZero() {
			written = time.Now()
		}
		return nil
	}}
	start := time.Now()
	done := make(chan error, 1)
	var res catalog.CompactResult
	go func() {
		var err error
		var contended bool
		res, contended, err = b.table().Archiver().Compact(b.ctx, opt)
		if err == nil && contended {
			err = fmt.Errorf("compaction-hold: the archiver lease of %s is held by another process", b.cfg.Name())
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	tick := time.Now()
	out, aerr := b.table().Archive(b.ctx, b.fx.now, 1)
	h.tick = fmt.Sprintf("contended=%t, %d windows, returned in %s", out.LeaseContended, len(out.Windows), time.Since(tick).Round(time.Millisecond))
	cerr := <-done
	end := time.Now()
	close(stop)
	wg.Wait()
	for _, err := range []error{cerr, aerr, werr} {
		if err != nil {
			return h, err
		}
	}
	h.lease = end.Sub(start)
	mu.Lock()
	if !written.IsZero() {
		h.commit = end.Sub(written)
	}
	mu.Unlock()
	for _, p := range res.Partitions {
		h.rows += p.Rows
	}
	var err error
	h.after, err = w.writeFor(h.lease)
	logf("compaction-hold: %s: %s", m.Format("2006-01"), h.result(m).figure)
	return h, err
}
