package soak

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// ledger is the oracle every answer is checked against, and the locks that
// make a check exact: each writer owns a share of the MaLos and holds its
// lock while a write is in flight, so a reader holding it (or all of them)
// knows the oracle holds exactly what the store does.
type ledger struct {
	mu     sync.Mutex // guards oracle
	oracle *testkit.Oracle
	owners []sync.Mutex
}

func newLedger(cfg meterstore.TableConfig, writers int) *ledger {
	return &ledger{oracle: testkit.NewOracle(cfg), owners: make([]sync.Mutex, writers)}
}

func (l *ledger) owner(malo string) int {
	h := fnv.New32a()
	h.Write([]byte(malo))
	return int(h.Sum32() % uint32(len(l.owners)))
}

// holdAll locks every writer out until the returned function is called.
func (l *ledger) holdAll() func() {
	for i := range l.owners {
		l.owners[i].Lock()
	}
	return func() {
		for i := range l.owners {
			l.owners[i].Unlock()
		}
	}
}

func (l *ledger) view(f func(o *testkit.Oracle)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(l.oracle)
}

// writer delivers its MaLos' share of the workload in arrival order: the
// current day through a HotWriter, operator-authored values through
// AppendAuthoritative, everything else (history, late corrections,
// redeliveries) through Append. A failed write is retried until it succeeds —
// every delivery is idempotent, so a write that committed before its error
// was reported is a duplicate the second time (an authored value already in
// force is a no-op).
type writer struct {
	id     int
	tbl    *store.Table
	ledger *ledger
	today  time.Time // deliveries from here on are current: HotWriter
	pace   time.Duration
	stats  *stats
}

func (w *writer) run(ctx context.Context, ds []delivery) {
	for _, d := range ds {
		if ctx.Err() != nil {
			return
		}
		w.deliver(ctx, d)
		select {
		case <-ctx.Done():
			return
		case <-time.After(w.pace):
		}
	}
}

// finishWrites bounds how long a delivery in flight when the run ends is
// retried, and attemptTimeout one attempt.
const finishWrites, attemptTimeout = 2 * time.Minute, time.Minute

// deliver writes d until the store confirms it, holding its MaLos' lock
// throughout: a failed attempt may have written part of the delivery (a hot
// batch committed before a later step failed), and no reader may compare the
// store with an oracle that does not hold it yet. A delivery once started is
// finished past the run's end: a write the deadline cut off may have
// committed, and the oracle must hold what the store holds.
func (w *writer) deliver(ctx context.Context, d delivery) {
	lock := &w.ledger.owners[w.id]
	lock.Lock()
	defer lock.Unlock()
	var giveUp time.Time
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), attemptTimeout)
		kind, err := w.write(actx, d)
		cancel()
		if err == nil {
			w.ledger.view(func(o *testkit.Oracle) { err = record(o, d) })
			if err != nil {
				w.stats.fail("oracle refused a delivery the store took: " + err.Error())
			}
			w.stats.op(kind, attempt)
			return
		}
		w.stats.writeError(kind, err)
		if ctx.Err() != nil {
			if giveUp.IsZero() {
				giveUp = time.Now().Add(finishWrites)
			}
			if time.Now().After(giveUp) {
				w.stats.fail(fmt.Sprintf("%s delivery %s, started before the run ended, still failed %s after: %v", kind, readingKey(d.Series), finishWrites, err))
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// record folds a delivery the store took into the oracle.
func record(o *testkit.Oracle, d delivery) error {
	if !d.authored {
		_, err := o.RecordDeliveries(d.Delivery)
		return err
	}
	rows, err := authoredRows(o.Config(), d)
	if err == nil {
		_, err = o.Record(rows...)
	}
	return err
}

// write sends one delivery; a HotWriter refusing an interval the watermark
// has passed since it opened sends it through Append, as its error says to.
func (w *writer) write(ctx context.Context, d delivery) (string, error) {
	if d.authored {
		_, err := w.tbl.AppendAuthoritative(ctx, d.Series)
		return "authoritative", err
	}
	kind := d.Kind.String()
	if d.Kind == testkit.Original && !d.Series.Intervals[0].From.Before(w.today) {
		hw, err := w.tbl.HotWriter(ctx)
		if err != nil {
			return "hotwriter", err
		}
		_, err = hw.Append(ctx, d.Series)
		if !errors.Is(err, store.ErrBelowBoundary) {
			return "hotwriter", err
		}
		kind = "hotwriter refused, appended"
	}
	_, err := w.tbl.Append(ctx, d.Series)
	return kind, err
}
