// Package soak runs MeterStore as an operator does — PostgreSQL, a file
// warehouse, msql serve and msql maintenance as separate processes — under
// writers, readers checked against the oracle and faults injected at random
// points (kill -9, PostgreSQL immediate restarts, cut connections, a full
// warehouse disk, a slow one), then checks that nothing was lost, doubled or
// misreported.
// Everything random is drawn from one seed.
package soak

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/settings"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// Options configure one soak run.
type Options struct {
	Duration time.Duration
	Seed     uint64
	Work     string    // an empty directory for the deployment
	Root     string    // the repository (to build cmd/msql)
	Log      io.Writer // progress and the build's output
}

const writers = 3

// Result is a finished run: its Markdown summary and every failed check.
type Result struct {
	Summary  string
	Failures []string
}

// Run deploys, loads, injects faults for o.Duration, recovers and checks.
func Run(ctx context.Context, o Options) (res Result, err error) {
	start := time.Now()
	d, err := o.deploy(ctx, o.Root)
	defer func() {
		if terr := d.tearDown(); terr != nil && err == nil {
			err = fmt.Errorf("tear down: %w", terr)
		}
	}()
	if err != nil {
		return res, err
	}
	defer d.slow.install()()
	s, tbl, err := d.openStore(ctx)
	if err != nil {
		return res, err
	}
	defer s.Close()
	st := newStats()
	w, today := workload(o, start)
	var generated []testkit.Delivery
	if err := w.Stream(func(x testkit.Delivery) error { generated = append(generated, x); return nil }); err != nil {
		return res, err
	}
	ds, err := withAuthored(generated, o.Seed)
	if err != nil {
		return res, err
	}
	late, err := newClosedMonth(w)
	if err != nil {
		return res, err
	}
	load, err := newPgbenchLoad(o.Work, d.pgwire, portfolio(w))
	if err != nil {
		return res, err
	}
	l := newLedger(tbl.Config(), writers)
	fmt.Fprintf(o.Log, "soak: deployed in %s; %d deliveries over %d days and %d of a day in %s, %d writers, faults for %s\n",
		time.Since(start).Round(time.Second), len(ds), w.Days, len(late.deliveries), late.month.Format("2006-01"), writers, o.Duration)
	start = time.Now()

	runCtx, stop := context.WithTimeout(ctx, o.Duration)
	defer stop()
	var wg sync.WaitGroup
	shares := make([][]delivery, writers)
	for _, x := range ds {
		i := l.owner(x.Series.MaloID.String())
		shares[i] = append(shares[i], x)
	}
	for i := range writers {
		// Deliver a share over 80 % of the run; the rest is catch-up.
		pace := time.Duration(float64(o.Duration) * 0.8 / float64(max(1, len(shares[i]))))
		wr := &writer{id: i, tbl: tbl, ledger: l, today: today, pace: pace, stats: st}
		wg.Go(func() { wr.run(runCtx, shares[i]) })
	}
	rng := newRand(o.Seed)
	for _, r := range d.readers(l, w, st, rng) {
		wg.Go(func() { r.run(runCtx) })
	}
	wg.Go(func() { load.run(runCtx) })
	bounded := &boundedWork{addr: d.pgwire}
	wg.Go(func() { bounded.run(runCtx, start) })
	wms := &watermarks{tbl: tbl, stats: st}
	wg.Go(func() { wms.sample(runCtx) })
	wg.Go(func() { late.deliver(runCtx, tbl, l, today, st) })
	wg.Go(func() { d.injectFaults(runCtx, o, rng, st, start) })
	wg.Wait()

	elapsed := time.Since(start)
	checks := d.finish(ctx, o, s, tbl, l, st, w, late, load, bounded, start)
	checks = append(checks, fmt.Sprintf("the watermark moved %d times and never back (sampled every 500 ms), last %s", wms.moves, wms.last.Format(time.RFC3339)))
	var buf bytes.Buffer
	st.summary(&buf, o, elapsed, d, checks)
	return Result{Summary: buf.String(), Failures: st.failed()}, nil
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x50A4)) }

// workload is the seed's portfolio: its last day is today (Berlin), so the
// days before it settle and are archived while the soak runs, and today's
// originals are current (HotWriter). More days for a longer run.
func workload(o Options, now time.Time) (testkit.Workload, time.Time) {
	days := max(3, int(o.Duration/(45*time.Second)))
	today := metering.LocalDay(now)
	first, _ := metering.DayBounds(today.AddDays(-(days - 1)), metering.SparteStrom)
	w := testkit.NewWorkload(o.Seed)
	w.MaLos, w.Days, w.Start, w.Tenants, w.SharedMaLoShare = 10, days, first, 2, 0.2
	w.MinuteShare, w.CorrectionRate, w.CorrectionDelay, w.RedeliveryRate, w.GapRate = 0.1, 0.2, 30*time.Hour, 0.1, 0.005
	todayFrom, _ := metering.DayBounds(today, metering.SparteStrom)
	return w, todayFrom
}

// openStore opens the soak's own store over the deployment (through the
// proxy, like the servers): the writers' library and the end checks'.
func (d *deployment) openStore(ctx context.Context) (*store.Store, *store.Table, error) {
	conf, err := settings.LoadSettings(d.config)
	if err != nil {
		return nil, nil, err
	}
	pool, err := pgxpool.New(ctx, d.dsn())
	if err != nil {
		return nil, nil, err
	}
	cat, err := catalog.Open(ctx, catalog.Options{DSN: d.dsn(), Warehouse: "file://" + d.warehouse, Pool: pool})
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	// The workload's corrections carry the recorded_at of their arrival —
	// up to a day after the run, since today's readings are corrected
	// CorrectionDelay later — and the writers deliver them during the run:
	// the store's future-dated check is off, as in testkit/storetest.
	s, err := store.Open(ctx, store.Config{Pool: pool, Catalog: cat, Tables: conf.Tables, RecordedAtSkew: -1})
	if err != nil {
		cat.Close()
		pool.Close()
		return nil, nil, err
	}
	tbl, _ := s.Table(conf.Tables[0].Name())
	return s, tbl, nil
}

// portfolio is the workload's MaLos.
func portfolio(w testkit.Workload) []string {
	b, _ := w.Generate()
	var malos []string
	for _, m := range b.Meters {
		malos = append(malos, m.MaloID.String())
	}
	return malos
}

func (d *deployment) readers(l *ledger, w testkit.Workload, st *stats, rng *rand.Rand) []*reader {
	b, _ := w.Generate()
	malos := portfolio(w)
	days := [2]metering.Date{b.Days[0], b.Days[len(b.Days)-1].AddDays(1)}
	mk := func(name, tenant string, dial func(context.Context) (client, error)) *reader {
		return &reader{name: name, dial: dial, tenant: tenant, ledger: l, malos: malos, days: days,
			rng: rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())), stats: st}
	}
	return []*reader{
		mk("pgwire analyst", "", dialPG(d.pgwire, analyst, analystPassword)),
		mk("pgwire scoped", scopedTenant, dialPG(d.pgwire, scoped, scopedPassword)),
		mk("flight analyst", "", dialFlight(d.flight, analyst, analystPassword)),
		mk("flight scoped", scopedTenant, dialFlight(d.flight, scoped, scopedPassword)),
	}
}

// watermarks samples the committed watermark: it must never move back.
type watermarks struct {
	tbl   *store.Table
	stats *stats
	last  time.Time
	moves int
}

func (w *watermarks) sample(ctx context.Context) {
	for ctx.Err() == nil {
		if wm, err := w.tbl.Watermark(ctx); err == nil {
			if wm.Before(w.last) {
				w.stats.fail(fmt.Sprintf("the watermark moved back from %s to %s", w.last.Format(time.RFC3339), wm.Format(time.RFC3339)))
			}
			if wm.After(w.last) {
				w.moves++
			}
			w.last = wm
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

var faultKinds = []string{"kill -9 msql maintenance", "kill -9 msql serve", "pg_ctl restart -m immediate", "cut PostgreSQL connections", "fill the warehouse disk", "slow warehouse"}

// slowWarehouseDelay is the latency the slow-warehouse fault puts before every
// file operation of the writers' cold tier, for slowWarehouseHold.
const slowWarehouseDelay, slowWarehouseHold = 200 * time.Millisecond, 10 * time.Second

// injectFaults injects one fault every few seconds — every kind once in a
// seeded order first, then kinds at random — until a fifth of the run is left.
func (d *deployment) injectFaults(ctx context.Context, o Options, rng *rand.Rand, st *stats, start time.Time) {
	order := rng.Perm(len(faultKinds))
	gap := max(5*time.Second, o.Duration*4/5/time.Duration(2*len(faultKinds)))
	end := start.Add(o.Duration * 4 / 5)
	for i := 0; ; i++ {
		sleep(ctx, gap/2+time.Duration(rng.Int64N(int64(gap))))
		if ctx.Err() != nil || time.Now().After(end) {
			return
		}
		kind := faultKinds[rng.IntN(len(faultKinds))]
		if i < len(order) {
			kind = faultKinds[order[i]]
		}
		f := fault{kind: kind, at: time.Since(start)}
		f.recovery, f.note, f.err = d.inject(ctx, kind)
		st.addFault(f)
		fmt.Fprintf(o.Log, "soak: %s at %s: %s %s, error %v\n", kind, f.at.Round(time.Second), f.recovery.Round(time.Millisecond), f.note, f.err)
		for _, p := range []*process{d.serve, d.maintenance} {
			if err := p.restartIfDead(ctx); err != nil {
				st.fail(fmt.Sprintf("restart %s after it died: %v", p.name, err))
			}
		}
	}
}

// inject runs one fault and returns how long the deployment took to serve again.
func (d *deployment) inject(ctx context.Context, kind string) (time.Duration, string, error) {
	switch kind {
	case faultKinds[0]:
		took, err := d.maintenance.kill9(ctx)
		return took, "until /readyz", err
	case faultKinds[1]:
		took, err := d.serve.kill9(ctx)
		return took, "until /readyz", err
	case faultKinds[2]:
		t0 := time.Now()
		err := d.pg.RestartImmediate(ctx)
		return time.Since(t0), "crash recovery until pg_ctl -w saw it accept connections", err
	case faultKinds[3]:
		return 0, fmt.Sprintf("%d connections cut", d.proxy.cut()), nil
	case faultKinds[4]:
		if !d.mounted {
			return 0, "skipped", fmt.Errorf("no tmpfs: %w", d.mountErr)
		}
		t0 := time.Now()
		path, err := d.fill()
		if err != nil {
			return 0, "", err
		}
		sleep(ctx, 5*time.Second)
		return time.Since(t0), "held full for 5 s, then freed", os.Remove(path)
	case faultKinds[5]:
		t0 := time.Now()
		d.slow.delay.Store(int64(slowWarehouseDelay))
		sleep(ctx, slowWarehouseHold)
		d.slow.delay.Store(0)
		return time.Since(t0), fmt.Sprintf("%s before every file operation of the writers' cold tier", slowWarehouseDelay), nil
	}
	return 0, "", fmt.Errorf("unknown fault %q", kind)
}
