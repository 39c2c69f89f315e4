package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"meterstore"
	"meterstore/archive"
	"meterstore/metering"
	"meterstore/testkit"
)

func init() {
	subcommands["demo"] = subcommand{"load the demo portfolio and open the shell", runDemo}
}

const demoUsage = `msql demo [--malos N] [--days N] [--no-shell] — load a synthetic but realistic
portfolio into readings_versions (resolved as readings; identity column tenant,
two tenants): all four Sparten, two electricity channels, 15- and 1-minute
series, days spanning the October DST change, gaps, identical redeliveries and
late corrections. Everything goes through the write path (store.Append); all
but the last week is archived to Iceberg, so the watermark sits inside the
data, and the corrections arrive after that archival, so most land in Iceberg.
Then the shell opens with a short tour.

The default portfolio, 150 MaLo × 60 days (4 of them metered every minute;
about 1.7 million rows), is the largest that loads in about 5 minutes on a
2-core machine: measured 3m15s end to end (go run, first start of PostgreSQL
included) at 14 k rows/s. --malos 200 (2.4 million rows) took 6–7.5 minutes
at 9 k rows/s; --malos 60 --days 20 loads in well under a minute.

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
	var noShell bool
	fs := newFlagSet("msql demo", demoUsage, io)
	deploy.register(fs)
	fs.IntVar(&opt.malos, "malos", 150, "Marktlokationen in the portfolio (all four Sparten)")
	fs.IntVar(&opt.days, "days", 60, "days of data, from 23 Sep 2025 (≥ 34 to include the DST change)")
	fs.Uint64Var(&opt.seed, "seed", 0xDE30, "workload seed; the same seed loads the same portfolio")
	fs.Float64Var(&opt.minuteShare, "minute-share", 0.025, "fraction of MaLos metered every minute instead of every 15 minutes (the default seed makes 4 of 150 PT1M: 1 electricity with two channels, 2 gas, 1 water)")
	fs.IntVar(&opt.batchRows, "batch-rows", 20_000, "rows per Append call")
	fs.Float64Var(&opt.corrections, "correction-rate", 0.01, "fraction of (MaLo, channel, day) groups restated later")
	fs.BoolVar(&noShell, "no-shell", false, "load and exit")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
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
		d.tables = []meterstore.TableConfig{demoTable()}
		if err := d.openStore(ctx, nil); err != nil {
			return err
		}
		var n int64
		if err := d.pool.QueryRow(ctx, "SELECT count(*) FROM (SELECT 1 FROM "+meterstore.QuoteIdent(demoTable().Name())+" LIMIT 1) x").Scan(&n); err != nil {
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

// loadDemo generates the portfolio and writes it through the store: originals
// and redeliveries first, archival of all but the last week, then the
// corrections, which the store routes to Iceberg below the watermark.
func loadDemo(ctx context.Context, d *deployment, opt demoOptions, io stdio) error {
	w := testkit.Demo(opt.seed, opt.malos, opt.days, opt.minuteShare, opt.corrections)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	d.tables = []meterstore.TableConfig{cfg}
	if d.store != nil {
		_ = d.store.Close()
		d.store, d.engine = nil, nil
	}
	var lastWindow time.Time
	if err := d.openStore(ctx, func(p archive.Progress) {
		if p.Done && !p.Window.Equal(lastWindow) {
			lastWindow = p.Window
			fmt.Fprintf(io.err, "\r  archived %s (%d rows)      ", p.Window.UTC().Format("2006-01-02"), p.Rows)
		}
	}); err != nil {
		return err
	}
	tb := d.store.Tables()[0]
	fmt.Fprintf(io.err, "msql demo: loading %d MaLo × %d days (two tenants, four Sparten) into %s\n", opt.malos, opt.days, cfg.Name())

	var (
		batch       []meterstore.StoredSeries
		batchRows   int
		corrections []meterstore.StoredSeries
		loaded      int64
		dupes       int
		started     = time.Now()
		lastReport  = time.Now()
		last        time.Time
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		out, err := tb.Append(ctx, batch...)
		if err != nil {
			return fmt.Errorf("demo: append: %w", err)
		}
		for _, x := range out.Displacements {
			if x.Effect == meterstore.Duplicate {
				dupes++
			}
		}
		loaded += int64(batchRows)
		batch, batchRows = batch[:0], 0
		if time.Since(lastReport) > 2*time.Second {
			lastReport = time.Now()
			el := time.Since(started).Seconds()
			fmt.Fprintf(io.err, "\r  %s rows written (%s rows/s), up to %s      ", groupDigits(loaded), groupDigits(int64(float64(loaded)/el)), last.UTC().Format("2006-01-02"))
		}
		return nil
	}
	err := w.Stream(func(dl testkit.Delivery) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if dl.Point {
			return nil
		}
		if dl.Kind == testkit.Correction {
			corrections = append(corrections, dl.Series)
			return nil
		}
		batch = append(batch, dl.Series)
		batchRows += len(dl.Series.Intervals)
		if n := len(dl.Series.Intervals); n > 0 {
			last = dl.Series.Intervals[n-1].From
		}
		if batchRows >= opt.batchRows {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	el := time.Since(started)
	fmt.Fprintf(io.err, "\r  %s rows written in %s (%s rows/s); %d redelivered rows were no-ops\n", groupDigits(loaded), el.Round(100*time.Millisecond),
		groupDigits(int64(float64(loaded)/el.Seconds())), dupes)

	// Archive all but the last week: windows ending by the end of the data
	// minus the settlement lag (7 days).
	lastDay := metering.LocalDay(w.Start).AddDays(opt.days)
	end, _ := metering.DayBounds(lastDay, metering.SparteStrom)
	t0 := time.Now()
	out, err := tb.Archive(ctx, end, 0)
	fmt.Fprint(io.err, "\r")
	if err != nil {
		return fmt.Errorf("demo: archive: %w", err)
	}
	if out.LeaseContended {
		return errors.New("demo: archive: lease contended (another msql is archiving this table)")
	}
	var archived int64
	for _, win := range out.Windows {
		archived += win.Rows
	}
	fmt.Fprintf(io.err, "  archived %d windows (%s rows) to Iceberg in %s; watermark %s\n", len(out.Windows), groupDigits(archived),
		time.Since(t0).Round(100*time.Millisecond), out.Watermark.UTC().Format(time.RFC3339))

	if len(corrections) > 0 {
		t1 := time.Now()
		co, err := tb.Append(ctx, corrections...)
		if err != nil {
			return fmt.Errorf("demo: late corrections: %w", err)
		}
		fmt.Fprintf(io.err, "  late corrections: %d rows to Iceberg (below the watermark), %d to PostgreSQL, in %s\n",
			co.ColdRows, co.HotRows, time.Since(t1).Round(100*time.Millisecond))
	}
	return nil
}
