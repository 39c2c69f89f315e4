package archive

import (
	"context"
	"errors"
	"time"
)

// Scheduler runs archival (and, when enabled, snapshot expiry) for several
// tables on an interval. Every replica may run one: each table's lease decides
// who works, and the others see LeaseContended and wait for the next tick.
type Scheduler struct {
	archivers []*Archiver
	interval  time.Duration
	expire    bool
	windows   int
	now       func() time.Time
	report    func(Outcome, error)
}

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

// MaxWindows bounds the windows one run archives per table (≤ 0: no limit).
func (s *Scheduler) MaxWindows(n int) *Scheduler { s.windows = n; return s }

// Report receives every table's outcome of every run.
func (s *Scheduler) Report(f func(Outcome, error)) *Scheduler { s.report = f; return s }

// RunOnce archives (and expires) every table once; one table's failure does not
// stop the others. It returns the errors joined.
func (s *Scheduler) RunOnce(ctx context.Context) error {
	var errs []error
	for _, a := range s.archivers {
		out, err := a.Archive(ctx, s.now(), s.windows)
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
