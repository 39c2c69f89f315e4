package archive

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/meterstore/meterstore/catalog"
)

// Scheduler runs archival (and, when enabled, compaction, orphan cleanup and
// snapshot expiry) for several tables on an interval. Every replica may run
// one: each table's lease decides who works, and the others see
// LeaseContended and wait for the next tick.
type Scheduler struct {
	archivers []*Archiver
	follow    func(context.Context) []*Archiver // nil: archivers
	interval  time.Duration
	expire    bool
	compact   bool
	quiet     time.Duration // 0: each table's settlement lag
	orphanAge time.Duration // 0: no orphan cleanup
	windows   int
	now       func() time.Time
	report    func(Outcome, error)
}

// MinOrphanAge is the shortest safety age orphan cleanup accepts: a file
// younger than that may belong to a commit in flight (an archival window, a
// cold append, a compaction writes its files before it commits them).
const MinOrphanAge = time.Hour

// Maintenance returns a scheduler over the archivers: every 15 minutes, no
// expiry (retention is a compliance decision), up to 32 windows per run.
func Maintenance(archivers ...*Archiver) *Scheduler {
	return &Scheduler{archivers: archivers, interval: 15 * time.Minute, windows: 32, now: time.Now}
}

// Interval sets the pause between runs (≤ 0 keeps the default).
func (s *Scheduler) Interval(d time.Duration) *Scheduler {
	if d > 0 {
		s.interval = d
	}
	return s
}

// ExpireSnapshots turns snapshot expiry on or off (off by default). Expiry uses
// each table's configured retention and minimum, and refuses a retention below
// the compliance floor.
func (s *Scheduler) ExpireSnapshots(on bool) *Scheduler { s.expire = on; return s }

// Compact turns compaction on or off (off by default): after archival, each
// table's closed months (entirely below the watermark) are compacted once the
// newest of their files that no compaction wrote was committed at least quiet
// ago on the wall clock (≤ 0: the table's settlement lag) — a month when its
// late corrections have gone quiet, again after a late correction landed in it
// — and the open month as its archived days accumulate
// (catalog.DefaultOpenMonthFiles).
func (s *Scheduler) Compact(on bool, quiet time.Duration) *Scheduler {
	s.compact, s.quiet = on, quiet
	return s
}

// DeleteOrphans turns orphan cleanup on for files older than age (≤ 0: off):
// files no snapshot references — left by a crash between writing files and
// committing them. Files of unexpired snapshots are never orphans; age spares
// the files of commits in flight. An age under MinOrphanAge is refused by
// RunOnce.
func (s *Scheduler) DeleteOrphans(age time.Duration) *Scheduler { s.orphanAge = age; return s }

// Clock sets the clock archival measures settlement on (nil keeps time.Now).
func (s *Scheduler) Clock(now func() time.Time) *Scheduler {
	if now != nil {
		s.now = now
	}
	return s
}

// MaxWindows bounds the windows one run archives per table (≤ 0: no limit).
func (s *Scheduler) MaxWindows(n int) *Scheduler { s.windows = n; return s }

// Follow makes each run take its archivers from tables, called at the run's
// start, instead of the fixed list: a store that re-declared a table (a column
// added while it runs) replaces the table's archiver, and the old one's
// declaration no longer matches the cold table, so its archival halts.
func (s *Scheduler) Follow(tables func(context.Context) []*Archiver) *Scheduler {
	s.follow = tables
	return s
}

// Report receives every table's outcome of every run.
func (s *Scheduler) Report(f func(Outcome, error)) *Scheduler { s.report = f; return s }

// RunOnce archives (compacts, cleans and expires) every table once; one
// table's failure does not stop the others. It returns the errors joined.
func (s *Scheduler) RunOnce(ctx context.Context) error {
	if s.orphanAge > 0 && s.orphanAge < MinOrphanAge {
		return fmt.Errorf("orphan cleanup: safety age %s is under %s: a commit in flight could lose its files", s.orphanAge, MinOrphanAge)
	}
	archivers := s.archivers
	if s.follow != nil {
		archivers = s.follow(ctx)
	}
	var errs []error
	for _, a := range archivers {
		out, err := a.Archive(ctx, s.now(), s.windows)
		if err == nil && s.compact && !out.LeaseContended {
			err = s.compactTable(ctx, a, &out)
		}
		if err == nil && s.orphanAge > 0 && !out.LeaseContended {
			out.OrphansDeleted, err = a.cold.DeleteOrphanFiles(ctx, s.orphanAge, false)
		}
		if err == nil && s.expire && !out.LeaseContended {
			_, err = a.cold.ExpireSnapshots(ctx, a.cfg.SnapshotRetention(), a.cfg.MinSnapshotsToKeep(), false)
		}
		if s.report != nil {
			s.report(out, err)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// compactTable compacts a's due months into out.
func (s *Scheduler) compactTable(ctx context.Context, a *Archiver, out *Outcome) error {
	quiet := s.quiet
	if quiet <= 0 {
		quiet = a.cfg.SettlementLag()
	}
	// Quiet is measured on the wall clock the commits were stamped with.
	res, contended, err := a.Compact(ctx, catalog.CompactOptions{QuietFor: quiet})
	out.Compacted = res.Partitions
	out.CompactionContended = contended
	return err
}

// Start runs until ctx ends; the returned channel closes when it has stopped.
func (s *Scheduler) Start(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(s.interval)
		defer t.Stop()
		for {
			_ = s.RunOnce(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return done
}
