// Command benchmarks measures MeterStore side by side with the references the
// design page names, in one run on one machine, and writes the ratios to
// benchmarks/RESULTS.md (measure | against | target | figure | met).
//
//	go tool task bench                   # default sizes: fits 2 cores / 24 GiB in about ten minutes
//	go run ./benchmarks -malos 500 -days 180   # the design page's realistic fixture
//	go run ./benchmarks -malos 500 -days 365 -clean-days 365 -reference=false -rss-rows '' -out benchmarks/RESULTS-large.md
//	                                           # 34 M archived rows, streamed into Iceberg; no PostgreSQL copy
//	go run ./benchmarks -objectstore only -out benchmarks/RESULTS-objectstore.md
//	                                           # file:// against s3:// on a private SeaweedFS
//	go run ./benchmarks -only history -malos 20 -reps 5 -out /tmp/history.md
//	                                           # 1, 3 and 10 years of daily archival side by side
//	                                           # (RESULTS.md's history section)
//	go run ./benchmarks -only pgbench -compacted -pgbench-duration 2m -out /tmp/load.md
//	                                           # msql serve and PostgreSQL's current values under pgbench at
//	                                           # 1, 4 and 16 clients, 30 minutes of load on msql serve
//	                                           # (RESULTS.md's load section)
//	go run ./benchmarks -only import -out /tmp/import.md
//	                                           # MSCONS parsing, a year of history from Parquet against archival,
//	                                           # a hot day against COPY, import peak RSS (RESULTS.md's import section;
//	                                           # -import-malos 1000 -import-day-malos 1000 -import-rss-rows '1000000,30000000' is the scale)
//	go run ./benchmarks -only confinement -malos 100 -days 365 -out /tmp/confinement.md
//	                                           # a tenant-scoped session against the same statement unscoped
//	                                           # (RESULTS.md's confinement section)
//	go run ./benchmarks -only compaction-hold -malos 20 -days 370 -reference=false -rss-rows '' -out /tmp/hold.md
//	                                           # what compacting one month holds (the archiver lease, the commit)
//	                                           # and hot writes during it (RESULTS.md's compaction-hold section)
//
// Everything runs against real components: a private PostgreSQL started from
// the system binaries, a file:// Iceberg warehouse with its SQL catalog in that
// PostgreSQL, and the embedded DuckDB engine. Timings are medians of -reps runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/internal/pglocal"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

type options struct {
	malos, days, reps int
	cleanDays         int
	reference         bool
	seed              uint64
	corrections       float64
	out               string
	rss               string // -rss-rows as given
	rssRows           []int
	child             string
	extensions        string         // DuckDB extension directory for the extension-path measures ("" skips them)
	only              string         // -only as given: measure names to run (ingest always runs: it writes the hot week)
	objectStore       string         // "", "also" or "only"
	history           string         // -history-years as given
	historyYears      []int          // the history lengths -only history compares, shortest first
	memoryLimit       string         // DuckDB's memory_limit for the measured store's engine ("" is DuckDB's default)
	compacted         bool           // compact the closed months before measuring
	cpuProfile        string         // where to write a CPU profile of the measures ("" for none)
	serveCPUProfile   string         // where msql serve writes its CPU profile under -only pgbench ("" for none)
	pgbenchSingle     bool           // -only pgbench: only the single-meter reads
	pgbenchBase       string         // -only pgbench: an msql binary run alternately with this tree's ("" for none)
	pgbenchIdle       time.Duration  // -only pgbench: how long msql serve idles after the runs before its RSS is read again
	keep              bool           // leave the fixture directory (PostgreSQL's data, the warehouse) in place
	peersExplain      string         // where -only peers writes each question's EXPLAIN ANALYZE, ours and DuckLake's ("" for none)
	peersQuestions    *regexp.Regexp // -only peers: the questions timed (their names match it)
	fixtureDir        string         // -only peers: build the fixture here once and reuse it ("" for a temporary one)
	buildOnly         bool           // with -fixture-dir: stop once the fixture is built, before any question is timed
	pgbenchDuration   time.Duration  // each pgbench run's length
	pgbenchClients    string         // -pgbench-clients as given
	pgbenchProtocol   string         // pgbench -M
	importMalos       int            // -only import: MaLo of the history year and the MSCONS month
	importDays        int            // -only import: days of the history
	importDayMalos    int            // -only import: MaLo of the hot day
	importRSS         string         // -import-rss-rows as given
	importRSSRows     []int          // -only import: Parquet sizes of the peak-RSS comparison
	importRSSFormats  []string       // -only import: file formats of the peak-RSS comparison
}

func main() {
	var o options
	flag.IntVar(&o.malos, "malos", 100, "measuring points in the fixture (the design page's is 500)")
	flag.IntVar(&o.days, "days", 120, "days in the fixture (the design page's is 180; ≥ 365 gives a full year for the single-meter read)")
	flag.IntVar(&o.reps, "reps", 5, "repetitions per timed query (median reported)")
	flag.Uint64Var(&o.seed, "seed", 1, "workload seed")
	flag.Float64Var(&o.corrections, "corrections", 0.01, "share of (MaLo, channel, day) groups restated at the next version")
	flag.IntVar(&o.cleanDays, "clean-days", 30, "days at the start kept correction-free, so the elided path can be measured (≥ -days: the whole history)")
	flag.StringVar(&o.memoryLimit, "memory-limit", "", "DuckDB memory_limit of the measured engine, e.g. 6GB (default: DuckDB's, 80 % of RAM)")
	flag.BoolVar(&o.compacted, "compacted", false, "compact the closed months before measuring, so storage, the cold aggregates, the single meter and the monthly sum read what a maintained store holds (the compaction measure, which starts from daily files, is skipped)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the measures (after the fixture loads) to this file; DuckDB's own threads show as cgo calls")
	flag.StringVar(&o.serveCPUProfile, "serve-cpuprofile", "", "-only pgbench: msql serve writes a CPU profile of its whole run to this file (msql serve --cpuprofile)")
	flag.BoolVar(&o.pgbenchSingle, "pgbench-single", false, "-only pgbench: run only the single-meter reads (one meter's day and month)")
	flag.DurationVar(&o.pgbenchIdle, "pgbench-idle", 0, "-only pgbench: after the runs, let msql serve idle this long and report its resident memory then as well (kept statements close after a minute untaken; 0 skips)")
	flag.StringVar(&o.pgbenchBase, "pgbench-base", "", "-only pgbench: an msql binary built from the base revision (git worktree add … && go build -o FILE ./cmd/msql); its msql serve runs the same scripts over the same store, alternating with this tree's, and each pair is compared by CPU per transaction and p99")
	flag.BoolVar(&o.keep, "keep", false, "leave the fixture directory (PostgreSQL's data directory, the warehouse, msql) in place and log where, to run msql serve and pgbench against it by hand")
	flag.StringVar(&o.peersExplain, "peers-explain", "", "after the peers' timings, write each question's EXPLAIN ANALYZE — ours (the split, files, resolution, DuckDB's profile) and DuckLake's — to this file")
	peersQuestions := flag.String("peers-questions", "", "-only peers: a regular expression; only the questions whose names match it are timed and explained (empty: every question)")
	flag.StringVar(&o.fixtureDir, "fixture-dir", "", "-only peers: build the fixture (PostgreSQL's data, the warehouse, both peers) in this directory and record each finished build phase in its fixture.json; a later run with the same fixture flags skips what is built and times the questions")
	flag.BoolVar(&o.buildOnly, "build-only", false, "with -fixture-dir: stop once the fixture and both peers are built and checked to agree, before any question is timed (build on a loaded machine, time on a quiet one)")
	flag.BoolVar(&o.reference, "reference", true, "also load every row into PostgreSQL for the row-store comparisons (storage, single meter, monthly sum); off for very large fixtures")
	flag.StringVar(&o.out, "out", "benchmarks/RESULTS.md", "where to write the results table")
	flag.StringVar(&o.rss, "rss-rows", "1000000,5000000", "window sizes (rows) for the archival peak-RSS comparison; empty skips it")
	flag.StringVar(&o.child, "child", "", "internal: run one measurement in a child process")
	flag.StringVar(&o.extensions, "extensions", ".cache/duckdb-extensions", "DuckDB extension directory (go tool task extensions) for the extension-path measures; empty or missing skips them")
	flag.StringVar(&o.only, "only", "", "comma-separated measures to run (ingest, storage, cold, balancing-day, hot, single-meter, monthly, udf, archival, extensions, compaction, compaction-hold, peers, pgbench, fed-bind, objectstore; history alone: the history-length series, without the main fixture; import alone: the import measures; confinement alone: scoped against unscoped on a fixture with tenants); empty runs all")
	flag.StringVar(&o.history, "history-years", "1,3,10", "history lengths (years of daily archival, shortest first) -only history compares")
	flag.StringVar(&o.objectStore, "objectstore", "", "also (or only) compare an s3:// warehouse on a private SeaweedFS (go tool task s3server) with file://: archival, cold aggregate, single meter")
	flag.DurationVar(&o.pgbenchDuration, "pgbench-duration", 10*time.Second, "length of each pgbench run (-only pgbench runs 5 questions × each client count × 2 sides; 2m gives msql serve 30 minutes of load at 1,4,16 clients)")
	flag.StringVar(&o.pgbenchClients, "pgbench-clients", "1,4,16", "pgbench client counts")
	flag.StringVar(&o.pgbenchProtocol, "pgbench-protocol", "extended", "pgbench -M: extended or prepared (the scripts bind parameters)")
	flag.IntVar(&o.importMalos, "import-malos", 20, "-only import: MaLo × 2 channels of the history year (the issue's scale is 1000) and of the MSCONS month")
	flag.IntVar(&o.importDays, "import-days", 365, "-only import: days of the history")
	flag.IntVar(&o.importDayMalos, "import-day-malos", 200, "-only import: MaLo × 2 channels of the day imported into the hot tier (the issue's scale is 1000)")
	flag.StringVar(&o.importRSS, "import-rss-rows", "1000000,3000000", "-only import: Parquet sizes (rows, a year each) whose import peak RSS is compared (the issue's are 1000000,30000000); empty skips it")
	importRSSFormats := flag.String("import-rss-formats", "parquet", "-only import: file formats (parquet, csv) of the peak-RSS comparison, each measured at -import-rss-rows")
	flag.Parse()
	var err error
	if o.peersQuestions, err = regexp.Compile(*peersQuestions); err != nil {
		fmt.Fprintf(os.Stderr, "-peers-questions %q: not a regular expression (%v); give one that matches the question names, such as 'portfolio|lastpoint'\n", *peersQuestions, err)
		os.Exit(2)
	}
	for _, s := range strings.Split(*importRSSFormats, ",") {
		switch f := strings.TrimSpace(s); f {
		case "parquet", "csv":
			o.importRSSFormats = append(o.importRSSFormats, f)
		default:
			fmt.Fprintf(os.Stderr, "-import-rss-formats %s: not a format; use parquet, csv or parquet,csv\n", s)
			os.Exit(2)
		}
	}
	for _, s := range strings.Split(o.importRSS, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(s), &n); err == nil && n > 0 {
			o.importRSSRows = append(o.importRSSRows, n)
		}
	}
	for _, s := range strings.Split(o.rss, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(s), &n); err == nil && n > 0 {
			o.rssRows = append(o.rssRows, n)
		}
	}
	for _, s := range strings.Split(o.history, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(s), &n); err == nil && n > 0 {
			o.historyYears = append(o.historyYears, n)
		}
	}
	ctx := context.Background()
	if o.child != "" {
		if err := runChild(ctx, o.child); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		return
	}
	if _, err := os.Stat(filepath.Join(o.extensions, "installed")); o.extensions != "" && err != nil {
		o.extensions = ""
	} else if o.extensions != "" {
		o.extensions, _ = filepath.Abs(o.extensions)
	}
	if (o.fixtureDir != "" || o.buildOnly) && (o.only != "peers" || o.fixtureDir == "") {
		fmt.Fprintf(os.Stderr, "-fixture-dir %q -build-only=%v -only %q: a fixture directory is for -only peers (the other measures change the fixture they measure), and -build-only needs one\n", o.fixtureDir, o.buildOnly, o.only)
		os.Exit(2)
	}
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "benchmarks:", err)
		os.Exit(1)
	}
}

// env is the running deployment the benchmarks measure.
type env struct {
	dir       string
	server    *pglocal.Server
	dsn       string
	pool      *pgxpool.Pool
	cat       *catalog.Catalog
	warehouse string
	keep      bool // leave dir in place on close
}

// startEnv starts the deployment in dir, a temporary directory if dir is
// empty; a PostgreSQL data directory already in dir is started as it is.
func startEnv(ctx context.Context, dir string) (*env, error) {
	bin, err := pglocal.FindBinaries()
	if err != nil {
		return nil, err
	}
	if dir == "" {
		dir, err = os.MkdirTemp("", "meterstore-bench-")
	} else {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return nil, err
	}
	e := &env{dir: dir}
	if _, err := os.Stat(filepath.Join(dir, "pg", "PG_VERSION")); err != nil {
		if err := pglocal.Init(ctx, bin, filepath.Join(dir, "pg"), pglocal.Durable); err != nil {
			return nil, err
		}
	}
	e.server, err = pglocal.Start(ctx, bin, filepath.Join(dir, "pg"), pglocal.Options{})
	if err != nil {
		return nil, err
	}
	e.dsn = e.server.DSN("postgres")
	e.pool, err = pgxpool.New(ctx, e.dsn)
	if err != nil {
		return nil, err
	}
	wh := filepath.Join(dir, "warehouse")
	if err := os.MkdirAll(wh, 0o755); err != nil {
		return nil, err
	}
	e.warehouse = "file://" + wh
	e.cat, err = catalog.Open(ctx, catalog.Options{DSN: e.dsn, Warehouse: e.warehouse, Pool: e.pool})
	return e, err
}

func (e *env) close() {
	if e.cat != nil {
		e.cat.Close()
	}
	if e.pool != nil {
		e.pool.Close()
	}
	if e.server != nil {
		e.server.Stop()
	}
	if e.keep {
		logf("kept %s (PostgreSQL data in pg/, warehouse in warehouse/)", e.dir)
		return
	}
	os.RemoveAll(e.dir)
}

// result is one row of RESULTS.md.
type result struct {
	measure, against, target, figure string
	met                              bool
	note                             string
}

func run(ctx context.Context, o options) error {
	start := time.Now()
	var built *builtFixture
	if o.fixtureDir != "" {
		var err error
		if built, err = openBuilt(o); err != nil {
			return err
		}
	}
	e, err := startEnv(ctx, o.fixtureDir)
	if err != nil {
		return err
	}
	e.keep = o.keep || built != nil
	defer e.close()
	if o.objectStore == "only" {
		b := &bench{ctx: ctx, o: o, e: e}
		rs, err := b.objectStore()
		if err != nil {
			return err
		}
		return writeResults(o, nil, rs, time.Since(start))
	}
	if o.only == "import" {
		if o.cpuProfile != "" {
			stop, err := startCPUProfile(o.cpuProfile)
			if err != nil {
				return err
			}
			defer stop()
		}
		rs, err := importBench(ctx, o, e)
		if err != nil {
			return err
		}
		return writeResults(o, nil, rs, time.Since(start))
	}
	if o.only == "confinement" {
		rs, fx, err := confinement(ctx, o, e)
		if err != nil {
			return err
		}
		return writeResults(o, fx, rs, time.Since(start))
	}
	if o.only == "history" {
		rs, err := history(ctx, o, e)
		if err != nil {
			return err
		}
		return writeResults(o, nil, rs, time.Since(start))
	}
	w := testkit.Fixture(o.seed)
	w.MaLos, w.Days, w.CorrectionRate = o.malos, o.days, o.corrections
	w.Start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	fx := built.fixture(o.reference)
	if fx == nil {
		logf("generating fixture: %d MaLo × %d days × 2 channels of 15-minute values, %.1f %% corrections", o.malos, o.days, 100*o.corrections)
		if fx, err = loadFixture(ctx, e, w, cfg, o.cleanDays, o.reference); err != nil {
			return err
		}
		logf("fixture: %d rows (%d cold in %d windows, %d hot), loaded in %s (load %s)", fx.rows, fx.coldRows, fx.windows, fx.hotRows, time.Since(start).Round(time.Second), loadAverage())
	}

	st, err := store.Open(ctx, store.Config{Pool: e.pool, Catalog: e.cat, Tables: []meterstore.TableConfig{cfg}, Now: func() time.Time { return fx.now },
		MemoryLimit: o.memoryLimit})
	if err != nil {
		return err
	}
	defer st.Close()
	b := &bench{ctx: ctx, o: o, e: e, st: st, cfg: cfg, w: w, fx: fx, built: built}
	if fx.coldFiles == nil {
		if fx.coldFiles, err = b.plannedPaths(); err != nil {
			return err
		}
	}
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	var results []result
	if built != nil {
		// The hot week is written once, with the fixture; ingest below is
		// then skipped.
		rs, _, err := b.phase(fixturePhase, b.ingest)
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	if o.compacted {
		rs, _, err := b.phase("compaction", func() ([]result, error) {
			r, err := b.compactClosedMonths()
			return []result{r}, err
		})
		if err != nil {
			return err
		}
		logf("%-55s %s", rs[0].measure, rs[0].figure)
		results = append(results, rs...)
	}
	type measure struct {
		name      string
		run       func() ([]result, error)
		reference bool // needs the PostgreSQL copy of every row
	}
	// The peers and pgbench run before compaction: compaction's measure
	// appends late corrections to the store, which PostgreSQL's current
	// values, built from the fixture's deliveries, would not hold (both
	// agreement checks refuse to time disagreeing sides).
	measures := []measure{{"ingest", b.ingest, false}, {"storage", b.storage, true}, {"cold", b.coldAggregate, false},
		{"balancing-day", b.balancingDay, false}, {"hot", b.hotScan, false}, {"single-meter", b.singleMeter, true},
		{"monthly", b.monthlySum, true}, {"udf", b.udfCost, false}, {"archival", b.archival, false}, {"extensions", b.extensionPaths, false},
		{"peers", b.peers, false}, {"pgbench", b.pgbench, false}, {"compaction", b.compaction, false}, {"compaction-hold", b.compactionHold, false},
		{"fed-bind", b.fedBind, false}}
	if o.objectStore == "also" {
		measures = append(measures, measure{"objectstore", b.objectStore, false})
	}
	only := map[string]bool{"ingest": true}
	for _, n := range strings.Split(o.only, ",") {
		only[strings.TrimSpace(n)] = true
	}
	for _, ms := range measures {
		if ms.reference && !o.reference || o.only != "" && !only[ms.name] || ms.name == "compaction" && o.compacted || ms.name == "ingest" && built != nil {
			continue
		}
		m := ms.run
		rs, err := m()
		if err != nil {
			return err
		}
		for _, r := range rs {
			logf("%-55s %s (target %s)", r.measure, r.figure, r.target)
		}
		results = append(results, rs...)
	}
	if o.buildOnly {
		logf("build: %s is built (%s): run again without -build-only to time the questions", o.fixtureDir, time.Since(start).Round(time.Second))
		return nil
	}
	if len(o.rssRows) >= 2 && (o.only == "" || only["archival"]) {
		rs, err := b.archivalRSS()
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	return writeResults(o, fx, results, time.Since(start))
}

// startCPUProfile profiles the process into path until the returned stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05")+" "+format+"\n", args...)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p)
	return s[i]
}

func machine() string {
	host, _ := os.Hostname()
	kernel, _ := exec.Command("uname", "-sr").Output()
	cpu := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				cpu = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		mem = strings.Fields(strings.SplitN(string(b), "\n", 2)[0])[1] + " kB"
	}
	return fmt.Sprintf("%s, %d cores (%s), %s RAM, %s, %s", host, runtime.NumCPU(), cpu, mem, strings.TrimSpace(string(kernel)), runtime.Version())
}

func writeResults(o options, fx *fixture, rs []result, took time.Duration) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmark results\n\nMachine: %s  \n", machine())
	fmt.Fprintf(&b, "Command: `go run ./benchmarks -malos %d -days %d -reps %d -seed %d -corrections %g -clean-days %d -reference=%v -compacted=%v -rss-rows '%s' -only '%s' -objectstore '%s' -history-years '%s' -memory-limit '%s' -pgbench-duration %s -pgbench-clients '%s' -pgbench-protocol %s -peers-questions '%s'` (took %s)  \n",
		o.malos, o.days, o.reps, o.seed, o.corrections, o.cleanDays, o.reference, o.compacted, o.rss, o.only, o.objectStore, o.history, o.memoryLimit,
		o.pgbenchDuration, o.pgbenchClients, o.pgbenchProtocol, o.peersQuestions, took.Round(time.Second))
	switch {
	case o.only == "history":
		fmt.Fprintf(&b, "Fixture: one table per history length (%s years), each %d MaLo × 2 channels of 15-minute values archived one UTC day per commit up to %s, %g corrections (none in the first %d days); queries read the last year.\n\n",
			o.history, o.malos, historyEnd.Format(time.DateOnly), o.corrections, o.cleanDays)
	case o.only == "import":
		fmt.Fprintf(&b, "Fixture (-only import, `-import-malos %d -import-days %d -import-day-malos %d -import-rss-rows '%s' -import-rss-formats %s`): generated quarter-hours on 1-0:1.29.0 and 1-0:2.29.0, one version, one network operator; the history a year from %s written as Parquet (DECIMAL values, TIMESTAMPTZ instants) — for -import-rss-formats csv as CSV (RFC 3339 with offsets, decimal text) —, the MSCONS interchange 31 days of the same MaLo count with a decimal comma.\n\n",
			o.importMalos, o.importDays, o.importDayMalos, o.importRSS, strings.Join(o.importRSSFormats, ","), importStart.Format(time.DateOnly))
	case fx == nil:
		fmt.Fprintf(&b, "Fixture: %d MaLo × 2 channels × %d days of 15-minute values, %g corrections, archived into each warehouse.\n\n", o.malos, objectStoreDays, o.corrections)
	default:
		fmt.Fprintf(&b, "Fixture: %d rows — %d cold in %d daily Iceberg commits, %d hot in PostgreSQL; household load on 1-0:1.29.0 and PV on 1-0:2.29.0, 6 significant decimals, 1 %% SUBSTITUTED, versions yyyymmdd000001 per balancing day; corrections restated at the next version ×1.05 three days later, except in the first %d days (kept correction-free so the elided path can be measured).",
			fx.rows, fx.coldRows, fx.windows, fx.hotRows, o.cleanDays)
		if o.compacted {
			b.WriteString(" The closed months were compacted before the measures (first row); the rest of the cold tier is daily files.")
		}
		if fx.staleLayout != "" {
			b.WriteString(" **Kept fixture, " + fx.staleLayout + ".**")
		}
		b.WriteString("\n\n")
	}
	b.WriteString("| measure | against | target | figure | met |\n|---|---|---|---|---|\n")
	for _, r := range rs {
		met := "no"
		if r.met {
			met = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.measure, r.against, r.target, r.figure, met)
	}
	var notes []string
	for _, r := range rs {
		if r.note != "" {
			notes = append(notes, "- **"+r.measure+"**: "+r.note)
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nNotes:\n\n" + strings.Join(notes, "\n") + "\n")
	}
	if err := os.WriteFile(o.out, []byte(b.String()), 0o644); err != nil {
		return err
	}
	logf("wrote %s", o.out)
	return nil
}
