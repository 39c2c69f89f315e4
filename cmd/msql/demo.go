package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/embedded"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

func init() {
	subcommands["demo"] = subcommand{"load the demo portfolio and open the shell", runDemo}
}

const demoUsage = `msql demo [--malos N] [--days N] [--large] [--no-shell] — load a synthetic but realistic
portfolio into readings_versions (resolved as readings; identity column tenant,
two tenants): all four Sparten, two electricity channels, 15- and 1-minute
series, days spanning the October DST change, gaps, identical redeliveries and
late corrections. The settled history (all but the last week) is committed
straight to Iceberg, one archival window per day, after the checks the write
path makes (store.Backfill); the last week goes through the write path
(store.Append) into PostgreSQL; the corrections of the last two settled days
arrive after their day was archived and the store routes them to Iceberg below
the watermark. Then the shell opens with a short tour.

The default portfolio is 100 MaLo × 45 days (about 0.9 million rows), sized
to reach the prompt within a minute; --large loads 150 MaLo × 60 days (4 of
them metered every minute; about 1.7 million rows). --malos 60 --days 20 is a
quick one.

Without --dsn/--warehouse/--config it loads the embedded default (reusing a
portfolio already loaded there). Into a given deployment it refuses a database
that already holds MeterStore tables: synthetic readings with valid-looking
identifiers must never mix with real ones.`

type demoOptions struct {
	malos, days int
	seed        uint64
	minuteShare float64
	batchRows   int
	corrections float64
}

func runDemo(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var opt demoOptions
	var noShell, large bool
	fs := newFlagSet("msql demo", demoUsage, io)
	deploy.register(fs)
	fs.BoolVar(&large, "large", false, "the large portfolio, 150 MaLo × 60 days (unless --malos/--days say otherwise)")
	fs.IntVar(&opt.malos, "malos", 100, "Marktlokationen in the portfolio (all four Sparten)")
	fs.IntVar(&opt.days, "days", 45, "days of data, from 23 Sep 2025 (≥ 34 to include the DST change)")
	fs.Uint64Var(&opt.seed, "seed", 0xDE30, "workload seed; the same seed loads the same portfolio")
	fs.Float64Var(&opt.minuteShare, "minute-share", 0.025, "fraction of MaLos metered every minute instead of every 15 minutes (with --large the default seed makes 4 of 150 PT1M: 1 electricity with two channels, 2 gas, 1 water)")
	fs.IntVar(&opt.batchRows, "batch-rows", 20_000, "rows per Append call")
	fs.Float64Var(&opt.corrections, "correction-rate", 0.01, "fraction of (MaLo, channel, day) groups restated later")
	fs.BoolVar(&noShell, "no-shell", false, "load and exit")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	if large {
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		if !given["malos"] {
			opt.malos = 150
		}
		if !given["days"] {
			opt.days = 60
		}
	}
	if opt.malos < 4 || opt.days < 8 {
		return fmt.Errorf("%w: --malos must be ≥ 4 (one per Sparte) and --days ≥ 8 (a week stays hot)", errUsage)
	}
	d, err := deploy.connect(ctx, io)
	if err != nil {
		return err
	}
	defer d.Close()
	existing, err := d.existingTables(ctx)
	if err != nil {
		return err
	}
	load := true
	if len(existing) > 0 {
		if !d.embedded {
			return withHint(fmt.Errorf("refusing to load the demo: the database %s already holds MeterStore tables (%s); synthetic readings must never mix with real ones",
				redact(d.dsn), strings.Join(existing, ", ")), "point --dsn at an empty database (CREATE DATABASE msql_demo)")
		}
		d.tables = []meterstore.TableConfig{embedded.Table()}
		if err := d.openStore(ctx, nil); err != nil {
			return err
		}
		var n int64
		if err := d.pool.QueryRow(ctx, "SELECT count(*) FROM (SELECT 1 FROM "+meterstore.QuoteIdent(embedded.Table().Name())+" LIMIT 1) x").Scan(&n); err != nil {
			return err
		}
		w, _ := d.store.Tables()[0].Watermark(ctx)
		if n > 0 || !w.IsZero() {
			fmt.Fprintf(io.err, "msql demo: the portfolio is already loaded in %s; opening it (delete that directory to load afresh)\n", d.home)
			load = false
		}
	}
	if load {
		start := time.Now()
		if err := loadDemo(ctx, d, opt, io); err != nil {
			return err
		}
		fmt.Fprintf(io.err, "msql demo: ready in %s\n", time.Since(start).Round(100*time.Millisecond))
	}
	if noShell {
		return nil
	}
	fmt.Fprint(io.out, demoTour)
	es, err := newEngineSession(ctx, d, nil)
	if err != nil {
		return err
	}
	p := &printer{out: io.out, errOut: io.err, format: "table", maxWidth: 40, provenance: true, nullText: "NULL", tty: io.tty, values: valueFormatter(ctx, d.engine.DB())}
	if !io.tty {
		return newShell(ctx, es, p, io).runText(mustRead(io))
	}
	p.progress = true
	return interactive(ctx, es, p, io)
}

func mustRead(io stdio) string {
	s, _ := readAll(io.in)
	return s
}

const demoTour = `
Tour — three queries to start with (Tab completes, .help lists the dot-commands):

  -- 1. energy per Sparte and balancing month (gas months start 06:00 local)
  SELECT sparte, meter_balancing_month("from", sparte) AS month, round(sum(value), 1) AS total, count(DISTINCT malo_id) AS malos
  FROM readings GROUP BY ALL ORDER BY ALL;

  -- 2. the DST change: 26 Oct 2025 has 100 quarter-hours (and 1500 minutes)
  SELECT meter_local_day("from") AS day, resolution, count(*) AS rows, count(DISTINCT (malo_id, obis_code, tenant)) AS series
  FROM readings WHERE "from" >= '2025-10-25' AND "from" < '2025-10-28' GROUP BY ALL ORDER BY ALL;

  -- 3. late corrections: readings restated after archival (resolved vs every version)
  SELECT tenant, count(*) AS restated_intervals FROM readings WHERE version % 1000000 > 1 GROUP BY ALL ORDER BY ALL;

Then try .explain on one of them, .watermark, .snapshots, .mode historical, .asof <snapshot>.

`

// loadDemo generates the portfolio and writes it through the store: settled
// history straight to Iceberg (store.Backfill, one archival window per UTC
// day, checked by the write path's rules, its corrections and redeliveries in
// the same window), the last week through Append, then the corrections of the
// last settled days through Append, which routes them to Iceberg below the
// watermark. The history thus costs what the Parquet writer costs, not a
// constrained PostgreSQL write of every row and then an archival of nearly
// all of them; and a correction batch spread over every settled day would
// make the cold append read nearly all of Iceberg to check it.
func loadDemo(ctx context.Context, d *deployment, opt demoOptions, io stdio) error {
	w := testkit.Demo(opt.seed, opt.malos, opt.days, opt.minuteShare, opt.corrections)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	d.tables = []meterstore.TableConfig{cfg}
	if d.store != nil {
		_ = d.store.Close()
		d.store, d.engine = nil, nil
	}
	if err := d.openStore(ctx, nil); err != nil {
		return err
	}
	tb := d.store.Tables()[0]
	fmt.Fprintf(io.err, "msql demo: loading %d MaLo × %d days (two tenants, four Sparten) into %s\n", opt.malos, opt.days, cfg.Name())

	// The watermark archival would reach: windows ending by the end of the
	// data less the settlement lag (7 days) are settled.
	lastDay := metering.LocalDay(w.Start).AddDays(opt.days)
	end, _ := metering.DayBounds(lastDay, metering.SparteStrom)
	settled := tb.Hot().PartitionStart(end.Add(-cfg.SettlementLag()))
	l := &demoLoad{ctx: ctx, tb: tb, opt: opt, settled: settled, step: cfg.PartitionStep(), status: newStatusLine(io.err),
		history: map[time.Time][]meterstore.StoredSeries{}, corrections: map[time.Time][]meterstore.StoredSeries{}, started: time.Now(),
		lateFrom: settled.Add(-demoLateDays * 24 * time.Hour), commitLag: max(w.CorrectionDelay, 72*time.Hour) + 24*time.Hour}
	err := w.Stream(func(dl testkit.Delivery) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return l.add(dl)
	})
	if err == nil {
		err = l.commitHistory(settled)
	}
	if err == nil {
		err = l.flushHot()
	}
	if err != nil {
		return err
	}
	l.status.done("history: %d days, %s rows committed to Iceberg in %s (%s rows/s); %d identical redeliveries were no-ops",
		l.days, groupDigits(l.historyRows), l.historyTime.Round(100*time.Millisecond), perSecond(l.historyRows, l.historyTime), l.dupes)
	l.status.done("last week: %s rows written to PostgreSQL in %s (%s rows/s)", groupDigits(l.hotRows), l.hotTime.Round(100*time.Millisecond),
		perSecond(l.hotRows, l.hotTime))
	if len(l.late) > 0 {
		t0 := time.Now()
		co, err := tb.Append(ctx, l.late...)
		if err != nil {
			return fmt.Errorf("demo: late corrections: %w", err)
		}
		l.status.done("late corrections and redeliveries: %d rows to Iceberg (below the watermark), %d to PostgreSQL, in %s",
			co.ColdRows, co.HotRows, time.Since(t0).Round(100*time.Millisecond))
	}
	wm, err := tb.Watermark(ctx)
	if err != nil {
		return err
	}
	l.status.done("watermark %s", wm.UTC().Format(time.RFC3339))
	return nil
}

// demoLateDays: the corrections of the last settled days reach the store
// after their day was archived (through Append, to Iceberg below the
// watermark), as they do in production.
const demoLateDays = 2

// demoLoad routes the stream of deliveries: intervals of settled days into
// per-day windows committed to Iceberg in order once everything for the day
// has arrived, the rest into Append batches; the corrections of the last
// settled days, and whatever arrives for a day already committed, to the late
// batch.
type demoLoad struct {
	ctx         context.Context
	tb          *store.Table
	opt         demoOptions
	settled     time.Time // the watermark the history reaches
	lateFrom    time.Time // windows from here to settled get their corrections late
	commitLag   time.Duration
	step        time.Duration
	status      *statusLine
	history     map[time.Time][]meterstore.StoredSeries // by window start
	corrections map[time.Time][]meterstore.StoredSeries // by window start
	next        time.Time                               // the next window to commit
	hot, late   []meterstore.StoredSeries
	hotPending  int

	started              time.Time
	days, dupes          int
	historyRows, hotRows int64
	historyTime, hotTime time.Duration
}

func (l *demoLoad) add(dl testkit.Delivery) error {
	if dl.Point {
		return nil
	}
	var newest time.Time
	for _, part := range splitByWindow(dl.Series, l.tb.Hot().PartitionStart) {
		win := l.tb.Hot().PartitionStart(part.Intervals[0].From)
		newest = win
		switch {
		case !win.Before(l.settled):
			l.hot = append(l.hot, part)
			l.hotPending += len(part.Intervals)
		case (l.next.IsZero() || !win.Before(l.next)) && dl.Kind == testkit.Correction:
			l.corrections[win] = append(l.corrections[win], part)
		case l.next.IsZero() || !win.Before(l.next):
			l.history[win] = append(l.history[win], part)
			if l.next.IsZero() {
				l.next = win
			}
		default:
			l.late = append(l.late, part) // its day is committed already
		}
	}
	if l.hotPending >= l.opt.batchRows {
		if err := l.flushHot(); err != nil {
			return err
		}
	}
	// Everything for a day — its originals, redeliveries and corrections — has
	// arrived commitLag after it (the generator emits in arrival order):
	// commit the windows older than that.
	return l.commitHistory(newest.Add(-l.commitLag))
}

// commitHistory commits the windows before until, oldest first.
func (l *demoLoad) commitHistory(until time.Time) error {
	until = minTime(until, l.settled)
	for !l.next.IsZero() && l.next.Before(until) {
		t0, day := time.Now(), l.next
		rows := l.history[l.next]
		if l.next.Before(l.lateFrom) {
			rows = append(rows, l.corrections[l.next]...)
		} else {
			l.late = append(l.late, l.corrections[l.next]...)
		}
		win, dups, err := l.tb.Backfill(l.ctx, l.next.Add(l.step), rows...)
		if err != nil {
			return fmt.Errorf("demo: history: %w", err)
		}
		delete(l.history, l.next)
		delete(l.corrections, l.next)
		l.next = l.next.Add(l.step)
		l.days++
		l.dupes += dups
		l.historyRows += win.Rows
		l.historyTime += time.Since(t0)
		l.status.update("history: %s committed to Iceberg (%s rows, %s rows/s)", day.UTC().Format("2006-01-02"),
			groupDigits(l.historyRows), perSecond(l.historyRows, l.historyTime))
	}
	return nil
}

func (l *demoLoad) flushHot() error {
	if len(l.hot) == 0 {
		return nil
	}
	t0 := time.Now()
	if _, err := l.tb.Append(l.ctx, l.hot...); err != nil {
		return fmt.Errorf("demo: append: %w", err)
	}
	l.hotTime += time.Since(t0)
	l.hotRows += int64(l.hotPending)
	l.hot, l.hotPending = l.hot[:0], 0
	l.status.update("last week: %s rows written to PostgreSQL (%s rows/s)", groupDigits(l.hotRows), perSecond(l.hotRows, l.hotTime))
	return nil
}

// splitByWindow cuts a delivery into one delivery per window its intervals
// start in (a gas day spans two UTC days).
func splitByWindow(s meterstore.StoredSeries, windowOf func(time.Time) time.Time) []meterstore.StoredSeries {
	var out []meterstore.StoredSeries
	ivs := s.Intervals
	for len(ivs) > 0 {
		win := windowOf(ivs[0].From)
		n := 1
		for n < len(ivs) && windowOf(ivs[n].From).Equal(win) {
			n++
		}
		part := s
		part.Intervals = ivs[:n:n]
		out = append(out, part)
		ivs = ivs[n:]
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func perSecond(n int64, d time.Duration) string {
	if d <= 0 {
		return "–"
	}
	return groupDigits(int64(float64(n) / d.Seconds()))
}
