package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meterstore/meterstore/internal/pglocal"
	"github.com/meterstore/meterstore/metering"
)

// The pgbench measure puts msql serve under load from PostgreSQL's own client
// and the PostgreSQL peer holding current values (peers.go) under the same
// scripts: each metering question is one pgbench script, run for
// -pgbench-duration at each client count on both sides in turn. msql serve is
// a child process built from cmd/msql over the benchmark's store; its resident
// memory is sampled every second.
//
// The meter is drawn per transaction (MaLo-IDs are numbers, so a pgbench
// CASE over the fixture's picks one); the day or month per run, given to
// pgbench with -D, because pgbench computes only numbers and neither side reads
// a number as a timestamp. The bounds are bare parameters, as a client binds
// them: PostgreSQL types them from the column, and readings prunes tiers,
// files and partitions by them — a computed bound such as to_timestamp($1)
// would read every file. Bare parameters need pgbench's extended or prepared
// protocol (simple substitutes the MaLo as a number).

// loadQuestion is one pgbench script: its SQL takes the relation as %s and the
// pgbench variables :m (a MaLo), :lo and :hi (timestamps, [lo, hi)).
type loadQuestion struct {
	name   string
	sql    string
	meter  bool   // draws :m
	span   string // what :lo and :hi bound: "day", "month" or "" (no bounds)
	single bool   // a single-meter read (target on p99), else an aggregate (target on throughput)
}

var loadQuestions = []loadQuestion{
	{"one meter's day", `SELECT "from", obis_code, value FROM %s WHERE malo_id = :m AND "from" >= :lo AND "from" < :hi ORDER BY "from", obis_code;`, true, "day", true},
	{"one meter's month", `SELECT "from", obis_code, value FROM %s WHERE malo_id = :m AND "from" >= :lo AND "from" < :hi ORDER BY "from", obis_code;`, true, "month", true},
	{"portfolio monthly sum by balancing month", `SELECT date_trunc('month', balancing_day) AS m, obis_code, sum(value) FROM %s WHERE "from" >= :lo AND "from" < :hi GROUP BY 1, 2 ORDER BY 1, 2;`, false, "month", false},
	{"latest reading per MaLo", `SELECT DISTINCT ON (malo_id) malo_id, "from", value FROM %s ORDER BY malo_id, "from" DESC, obis_code;`, false, "", false},
	{"completeness of a day", `SELECT malo_id, obis_code, count(*) FROM %s WHERE "from" >= :lo AND "from" < :hi GROUP BY 1, 2 ORDER BY 1, 2;`, false, "day", false},
}

// pgbenchUser is the user msql serve is asked as; with no [[users]] it
// serves loopback clients without a password.
const pgbenchUser = "bench"

func (b *bench) pgbench() ([]result, error) {
	clients, err := intList(b.o.pgbenchClients)
	if err != nil || len(clients) == 0 {
		return nil, fmt.Errorf("-pgbench-clients %q: want a comma-separated list of client counts, e.g. 1,4,16", b.o.pgbenchClients)
	}
	if b.o.pgbenchProtocol != "extended" && b.o.pgbenchProtocol != "prepared" {
		return nil, fmt.Errorf("-pgbench-protocol %q: the scripts bind the MaLo and the bounds as parameters, which needs extended or prepared (simple substitutes the MaLo as a number)", b.o.pgbenchProtocol)
	}
	bin, err := pglocal.FindBinaries()
	if err != nil {
		return nil, err
	}
	pgbenchBin := filepath.Join(bin, "pgbench")
	var out []result
	if b.curRows() == 0 { // not loaded by -only peers before
		ingest, err := b.loadCurrentValues()
		if err != nil {
			return nil, err
		}
		out = append(out, ingest)
	}
	msql, err := b.buildMsql()
	if err != nil {
		return nil, err
	}
	srv, err := b.startServe(msql, "serve.log", b.o.serveCPUProfile, true)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	if err := b.serveAgrees(srv); err != nil {
		return nil, err
	}
	var base *serveProcess
	sides := []pgbenchTarget{
		{name: "msql serve", port: srv.port, user: pgbenchUser, db: "meterstore", relation: "readings", pid: srv.cmd.Process.Pid},
		{name: "PostgreSQL", port: b.e.server.Port, user: pglocal.Superuser, db: "postgres", relation: curTable},
	}
	if b.o.pgbenchBase != "" {
		base, err = b.startServe(b.o.pgbenchBase, "serve-base.log", "", false)
		if err != nil {
			return nil, fmt.Errorf("-pgbench-base %s: %w", b.o.pgbenchBase, err)
		}
		defer base.stop()
		base.name = "msql serve (base)"
		// The same whole-store read as this tree's server had: both
		// start the runs holding what it cached (Parquet footers).
		if err := b.serveAgrees(base); err != nil {
			return nil, fmt.Errorf("-pgbench-base %s: %w", b.o.pgbenchBase, err)
		}
		sides = append(sides, pgbenchTarget{name: base.name, port: base.port, user: pgbenchUser, db: "meterstore", relation: "readings", pid: base.cmd.Process.Pid})
	}
	dir := filepath.Join(b.e.dir, "pgbench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	srv.sampleRSS()
	if base != nil {
		base.sampleRSS()
	}
	rng := rand.New(rand.NewPCG(b.o.seed, 0x9B))
	pair := 0
	for _, q := range loadQuestions {
		if b.o.pgbenchSingle && !q.single {
			continue
		}
		for _, c := range clients {
			span, err := b.spanOf(q, rng)
			if err != nil {
				return nil, err
			}
			runs := make([]pgbenchRun, len(sides))
			for _, i := range sideOrder(len(sides), pair) {
				side := sides[i]
				script, err := b.writeScript(dir, q, side.relation)
				if err != nil {
					return nil, err
				}
				logf("pgbench: %s, %d clients, %s %s", q.name, c, side.name, strings.Join(span, " "))
				runs[i] = side.run(b.ctx, pgbenchBin, script, filepath.Join(dir, fmt.Sprintf("log-%d", time.Now().UnixNano())), c, span, b.o)
			}
			out = append(out, pgbenchResult(q, c, runs[0], runs[1]))
			if len(runs) > 2 {
				out = append(out, pgbenchBaseResult(q, c, runs[0], runs[2]))
			}
			srv.warm()
			srv.profileHeap(dir, fmt.Sprintf("%s, %d clients", q.name, c))
			if base != nil {
				base.warm()
			}
			pair++
		}
	}
	if b.o.pgbenchIdle > 0 {
		srv.markLoaded()
		if base != nil {
			base.markLoaded()
		}
		logf("pgbench: msql serve idles for %s", b.o.pgbenchIdle)
		select {
		case <-b.ctx.Done():
			return nil, b.ctx.Err()
		case <-time.After(b.o.pgbenchIdle):
		}
	}
	srv.profileHeap(dir, "the idle at the end")
	out = append(out, srv.rssResult(b.o.pgbenchIdle))
	if base != nil {
		out = append(out, base.rssResult(b.o.pgbenchIdle))
	}
	return out, nil
}

// sideOrder is the order the sides run in for the pair-th question and
// client count: PostgreSQL (side 1) after msql serve, as always; with a base
// build (side 2) the new and the base build take turns going first, so
// neither is always the one measured on a machine warmed (or loaded) by the
// other.
func sideOrder(sides, pair int) []int {
	switch {
	case sides < 3:
		return []int{0, 1}
	case pair%2 == 0:
		return []int{0, 2, 1}
	default:
		return []int{2, 0, 1}
	}
}

// pgbenchBaseResult compares msql serve with the base build (-pgbench-base)
// on one question at one client count: the CPU msql serve spends per
// transaction, which the load of a shared machine moves least, and the p99.
func pgbenchBaseResult(q loadQuestion, clients int, ours, base pgbenchRun) result {
	r := result{measure: fmt.Sprintf("pgbench A/B: %s, %d clients", q.name, clients), against: "msql serve built from -pgbench-base, runs alternating",
		target: "CPU per transaction below the base's, no errors"}
	r.figure = fmt.Sprintf("msql serve %s; base %s", ours, base)
	if ours.err != nil || base.err != nil || base.cpuPerTxn == 0 || base.p99 == 0 {
		return r
	}
	r.figure += fmt.Sprintf("; CPU per transaction %.2f×, p99 %.2f×", float64(ours.cpuPerTxn)/float64(base.cpuPerTxn), float64(ours.p99)/float64(base.p99))
	r.met = ours.cpuPerTxn < base.cpuPerTxn && ours.failed == 0 && base.failed == 0
	return r
}

// pgbenchResult compares one question at one client count.
func pgbenchResult(q loadQuestion, clients int, ours, pg pgbenchRun) result {
	r := result{measure: fmt.Sprintf("pgbench: %s, %d clients", q.name, clients), against: "PostgreSQL holding current values (primary key), same script"}
	if q.single {
		r.target = "p99 ≤ 1.5× PostgreSQL's, no errors"
	} else {
		r.target = "throughput ≥ PostgreSQL's, no errors"
	}
	r.figure = fmt.Sprintf("msql serve %s; PostgreSQL %s", ours, pg)
	if ours.err != nil || pg.err != nil {
		return r
	}
	if q.single {
		r.met = float64(ours.p99) <= 1.5*float64(pg.p99)
		r.figure += fmt.Sprintf("; p99 %.2f×", float64(ours.p99)/float64(pg.p99))
	} else {
		r.met = ours.tps >= pg.tps
		r.figure += fmt.Sprintf("; throughput %.2f×", ours.tps/pg.tps)
	}
	r.met = r.met && ours.failed == 0 && pg.failed == 0
	return r
}

// pgbenchTarget is one side of the comparison.
type pgbenchTarget struct {
	name, user, db, relation string
	port                     int
	pid                      int // the server process whose CPU a run measures (0: none)
}

// pgbenchRun is what one pgbench run measured.
type pgbenchRun struct {
	tps          float64
	txns, failed int
	p50, p99     time.Duration
	cpuPerTxn    time.Duration // the server's CPU (user + system) per transaction; 0 when not measured
	err          error
}

func (r pgbenchRun) String() string {
	if r.err != nil {
		return "failed: " + r.err.Error()
	}
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
	}
	s := fmt.Sprintf("%.1f tps, p50 %s / p99 %s ms (%d transactions)", r.tps, ms(r.p50), ms(r.p99), r.txns)
	if r.cpuPerTxn > 0 {
		s += fmt.Sprintf(", CPU %s ms per transaction", strconv.FormatFloat(float64(r.cpuPerTxn)/float64(time.Millisecond), 'f', 2, 64))
	}
	if r.failed > 0 {
		s += fmt.Sprintf(", %d failed", r.failed)
	}
	return s
}

var (
	tpsLine    = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)
	failedLine = regexp.MustCompile(`(?m)^number of failed transactions: ([0-9]+)`)
)

// run runs pgbench with one script for the configured duration and reads its
// per-transaction log for the latency percentiles.
func (t pgbenchTarget) run(ctx context.Context, bin, script, logPrefix string, clients int, defs []string, o options) pgbenchRun {
	secs := max(1, int(o.pgbenchDuration.Round(time.Second)/time.Second))
	args := []string{"-n", "-M", o.pgbenchProtocol, "-c", strconv.Itoa(clients), "-j", strconv.Itoa(min(clients, runtime.NumCPU())),
		"-T", strconv.Itoa(secs), "-f", script, "-l", "--log-prefix", logPrefix}
	args = append(append(args, defs...), "-h", "127.0.0.1", "-p", strconv.Itoa(t.port), "-U", t.user, t.db)
	cpuBefore, cpuErr := t.cpuTicks()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	cpuAfter, cpuErr2 := t.cpuTicks()
	var r pgbenchRun
	if err != nil {
		r.err = fmt.Errorf("pgbench %s: %w: %s", strings.Join(args, " "), err, lastLines(string(out), 3))
		return r
	}
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		r.err = fmt.Errorf("pgbench printed no tps line: %s", lastLines(string(out), 5))
		return r
	}
	r.tps, _ = strconv.ParseFloat(string(m[1]), 64)
	if m := failedLine.FindSubmatch(out); m != nil {
		r.failed, _ = strconv.Atoi(string(m[1]))
	}
	lat, failed, err := readPgbenchLogs(logPrefix)
	if err != nil {
		r.err = err
		return r
	}
	r.failed = max(r.failed, failed)
	if len(lat) == 0 {
		r.err = errors.New("pgbench logged no transaction")
		return r
	}
	r.txns, r.p50, r.p99 = len(lat), percentile(lat, 0.5), percentile(lat, 0.99)
	if t.pid != 0 {
		if err := errors.Join(cpuErr, cpuErr2); err != nil {
			r.err = fmt.Errorf("%s's CPU: %w", t.name, err)
			return r
		}
		r.cpuPerTxn = time.Duration((cpuAfter - cpuBefore) * int64(time.Second) / clockTicks / int64(r.txns))
	}
	return r
}

// cpuTicks is the user and system CPU of the target's server process so far,
// in clock ticks; 0 for a target whose CPU is not measured.
func (t pgbenchTarget) cpuTicks() (int64, error) {
	if t.pid == 0 {
		return 0, nil
	}
	times, _, err := procTimes(t.pid)
	return times[0] + times[1], err
}

// readPgbenchLogs reads pgbench's per-transaction logs (one file per thread:
// client, transaction, latency in µs or "failed", script, epoch, µs).
func readPgbenchLogs(prefix string) ([]time.Duration, int, error) {
	files, err := filepath.Glob(prefix + ".*")
	if err != nil || len(files) == 0 {
		return nil, 0, fmt.Errorf("no pgbench log %s.*: %v", prefix, err)
	}
	var lat []time.Duration
	failed := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, 0, err
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 3 {
				continue
			}
			us, err := strconv.ParseInt(fields[2], 10, 64)
			if err != nil {
				failed++
				continue
			}
			lat = append(lat, time.Duration(us)*time.Microsecond)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return nil, 0, err
		}
	}
	return lat, failed, nil
}

// writeScript writes q's pgbench script over relation.
func (b *bench) writeScript(dir string, q loadQuestion, relation string) (string, error) {
	var s strings.Builder
	if q.meter {
		var malos []int64
		for _, m := range b.fx.malos {
			n, err := strconv.ParseInt(m, 10, 64)
			if err != nil {
				return "", fmt.Errorf("MaLo %q is not a number a pgbench variable can hold: %w", m, err)
			}
			malos = append(malos, n)
		}
		fmt.Fprintf(&s, "\\set i random(0, %d)\n", len(malos)-1)
		fmt.Fprintf(&s, "\\set m %s\n", caseOf("i", malos))
	}
	fmt.Fprintf(&s, q.sql+"\n", relation)
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.sql", strings.NewReplacer(" ", "-", "'", "").Replace(q.name), relation))
	return path, os.WriteFile(path, []byte(s.String()), 0o644)
}

// spanOf draws the run's balancing day, or whole month, from the fixture's:
// pgbench's -D definitions of :lo and :hi.
func (b *bench) spanOf(q loadQuestion, rng *rand.Rand) ([]string, error) {
	first := metering.DateOf(b.w.Start)
	end := first.AddDays(b.o.days)
	var lo, hi time.Time
	switch q.span {
	case "day":
		lo, hi = metering.DayBounds(first.AddDays(rng.IntN(b.o.days)), metering.SparteStrom)
	case "month":
		var whole []time.Time
		for m := time.Date(first.Year, first.Month, 1, 0, 0, 0, 0, time.UTC); metering.DateOf(m.AddDate(0, 1, 0)).Compare(end) <= 0; m = m.AddDate(0, 1, 0) {
			if metering.DateOf(m).Compare(first) >= 0 {
				whole = append(whole, m)
			}
		}
		if len(whole) == 0 {
			return nil, fmt.Errorf("pgbench: %q needs a whole month in the fixture (%d days from %s)", q.name, b.o.days, first)
		}
		m := whole[rng.IntN(len(whole))]
		lo, hi = metering.MonthBounds(m.Year(), m.Month(), metering.SparteStrom)
	default:
		return nil, nil
	}
	const layout = "2006-01-02 15:04:05+00"
	return []string{"-D", "lo=" + lo.UTC().Format(layout), "-D", "hi=" + hi.UTC().Format(layout)}, nil
}

// caseOf is a pgbench expression picking values[:v].
func caseOf(v string, values []int64) string {
	var s strings.Builder
	s.WriteString("CASE")
	for i, x := range values[:len(values)-1] {
		fmt.Fprintf(&s, " WHEN :%s = %d THEN %d", v, i, x)
	}
	fmt.Fprintf(&s, " ELSE %d END", values[len(values)-1])
	return s.String()
}

// serveProcess is msql serve as a child process, its RSS sampled.
type serveProcess struct {
	cmd               *exec.Cmd
	port              int
	exited            chan struct{}
	mu                sync.Mutex
	rssStart, rssPeak memSample
	rssEnd, rssWarm   memSample // rssWarm: after the first pair of runs
	rssLoaded         memSample // the last sample before the idle (-pgbench-idle), taken by markLoaded
	name              string    // as logged
	samples           int
	sampling          time.Time
	stopSampling      chan struct{}
	sampled           sync.WaitGroup
	healthPort        int           // serving /debug/pprof/ (msql serve --pprof); 0: not profiled
	heaps             []heapReading // the Go heap kept live, after each pair of runs (msql serve idle in PostgreSQL's turn) and at the end
}

// memSample is a process's resident memory in kB, and its two parts:
// anonymous (heaps, stacks) and file-backed — for msql, mostly the pages of
// its own ~190 MB binary, resident once it has served and shared with the
// page cache, which the kernel can drop and read again: growth under load
// is in the anonymous part.
type memSample struct{ rss, anon, file int64 }

// buildMsql builds cmd/msql of this tree into the benchmark's directory.
func (b *bench) buildMsql() (string, error) {
	bin := filepath.Join(b.e.dir, "msql")
	build := exec.CommandContext(b.ctx, "go", "build", "-o", bin, "./cmd/msql")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build msql: %w: %s", err, out)
	}
	return bin, nil
}

// startServe runs bin's msql serve over the benchmark's store, logging to
// logName in the benchmark's directory and, with cpuProfile, profiling to it;
// with pprof it serves its heap profile (msql serve --pprof, which a
// -pgbench-base build may not know).
func (b *bench) startServe(bin, logName, cpuProfile string, pprof bool) (*serveProcess, error) {
	pgPort, err := pglocal.FreePort()
	if err != nil {
		return nil, err
	}
	healthPort, err := pglocal.FreePort()
	if err != nil {
		return nil, err
	}
	logf("pgbench: msql serve on 127.0.0.1:%d", pgPort)
	log, err := os.Create(filepath.Join(b.e.dir, logName))
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--dsn", b.e.dsn, "--warehouse", b.e.warehouse,
		"--pgwire", "127.0.0.1:" + strconv.Itoa(pgPort), "--health", "127.0.0.1:" + strconv.Itoa(healthPort)}
	if cpuProfile != "" {
		args = append(args, "--cpuprofile", cpuProfile)
	}
	if pprof {
		args = append(args, "--pprof")
	}
	logf("pgbench: %s %s", bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start msql serve: %w", err)
	}
	p := &serveProcess{cmd: cmd, port: pgPort, exited: make(chan struct{}), stopSampling: make(chan struct{}), name: "msql serve"}
	if pprof {
		p.healthPort = healthPort
	}
	go func() { _ = cmd.Wait(); log.Close(); close(p.exited) }()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("msql serve exited before it was ready: %s", lastLines(readFile(log.Name()), 5))
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("msql serve not ready after 3 minutes: %s", lastLines(readFile(log.Name()), 5))
		}
	}
}

// serveAgrees checks msql serve answers the same count and sum as the
// PostgreSQL peer before either is timed.
func (b *bench) serveAgrees(p *serveProcess) error {
	conn, err := pgx.Connect(b.ctx, fmt.Sprintf("postgres://%s@127.0.0.1:%d/meterstore?sslmode=disable", pgbenchUser, p.port))
	if err != nil {
		return fmt.Errorf("connect to msql serve: %w", err)
	}
	defer conn.Close(b.ctx)
	const q = `SELECT count(*), CAST(sum(value) AS VARCHAR) FROM %s`
	var n, m int64
	var s, t string
	if err := conn.QueryRow(b.ctx, fmt.Sprintf(q, "readings")).Scan(&n, &s); err != nil {
		return fmt.Errorf("msql serve: %w", err)
	}
	if err := b.e.pool.QueryRow(b.ctx, fmt.Sprintf(q, curTable)).Scan(&m, &t); err != nil {
		return err
	}
	if n != m || s != t {
		return fmt.Errorf("msql serve answers %d rows summing to %s, PostgreSQL's current values %d summing to %s", n, s, m, t)
	}
	logf("pgbench: msql serve and PostgreSQL both hold %d rows summing to %s", n, s)
	return nil
}

// rssLogEvery is how often the RSS sampled is logged: the curve over a long
// run, readable from the log even when the run is stopped before its table.
const rssLogEvery = time.Minute

// sampleRSS samples the server's resident memory every second until stop,
// and logs it every rssLogEvery.
func (p *serveProcess) sampleRSS() {
	p.sampling = time.Now()
	p.sampled.Add(1)
	go func() {
		defer p.sampled.Done()
		logged := time.Now()
		for {
			if m, err := residentMemory(p.cmd.Process.Pid); err == nil {
				p.mu.Lock()
				if p.samples == 0 {
					p.rssStart = m
				}
				p.rssEnd = m
				if m.rss > p.rssPeak.rss {
					p.rssPeak = m
				}
				p.samples++
				peak := p.rssPeak
				p.mu.Unlock()
				if time.Since(logged) >= rssLogEvery {
					logged = time.Now()
					logf("pgbench: %s RSS %d MiB (anonymous %d, file-backed %d; peak so far %d MiB) after %s", p.name, m.rss/1024,
						m.anon/1024, m.file/1024, peak.rss/1024, time.Since(p.sampling).Round(time.Second))
				}
			}
			select {
			case <-p.stopSampling:
				return
			case <-time.After(time.Second):
			}
		}
	}()
}

// warm takes the first sample after a run as the baseline growth is measured from.
func (p *serveProcess) warm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rssWarm.rss == 0 {
		p.rssWarm = p.rssEnd
	}
}

// rssResult reports the server's resident memory: at its
// start, after the first run, after the last (the end, or with idle > 0 the
// last sample before it idled that long), its peak, and after the idle; and
// the anonymous and file-backed parts of the first run's and the last run's.
// The target is on the last run's resident memory: the load's growth.
func (p *serveProcess) rssResult(idle time.Duration) result {
	close(p.stopSampling)
	p.sampled.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	mib := func(kb int64) string { return fmt.Sprintf("%.0f MiB", float64(kb)/1024) }
	ratio := func(a, b int64) float64 { return float64(a) / float64(max(1, b)) }
	loaded := p.rssEnd
	idled := ""
	if idle > 0 && p.rssLoaded.rss > 0 {
		loaded = p.rssLoaded
		idled = fmt.Sprintf(", after %s idle %s", idle, mib(p.rssEnd.rss))
	}
	w := p.rssWarm
	return result{measure: fmt.Sprintf("pgbench: %s resident memory over the runs", p.name), against: "itself after the first run",
		target: "flat (end ≤ 1.25× after the first run)",
		figure: fmt.Sprintf("idle %s, after the first run %s, end %s (%.2f×), peak %s%s (%d samples over %s); of which anonymous %s → %s (%.2f×), file-backed %s → %s (%.2f×)",
			mib(p.rssStart.rss), mib(w.rss), mib(loaded.rss), ratio(loaded.rss, w.rss), mib(p.rssPeak.rss), idled, p.samples, time.Since(p.sampling).Round(time.Second),
			mib(w.anon), mib(loaded.anon), ratio(loaded.anon, w.anon), mib(w.file), mib(loaded.file), ratio(loaded.file, w.file)),
		met: ratio(loaded.rss, w.rss) <= 1.25, note: p.heapNote()}
}

// markLoaded takes the last sample as the one after the last run, before
// the server idles.
func (p *serveProcess) markLoaded() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rssLoaded = p.rssEnd
}

func (p *serveProcess) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// residentMemory reads VmRSS, RssAnon and RssFile of a process.
func residentMemory(pid int) (memSample, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memSample{}, err
	}
	var m memSample
	fields := map[string]*int64{"VmRSS:": &m.rss, "RssAnon:": &m.anon, "RssFile:": &m.file}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || fields[f[0]] == nil {
			continue
		}
		if *fields[f[0]], err = strconv.ParseInt(f[1], 10, 64); err != nil {
			return memSample{}, fmt.Errorf("/proc/%d/status %s: %w", pid, f[0], err)
		}
	}
	if m.rss == 0 {
		return memSample{}, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
	}
	return m, nil
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// heapReading is msql serve's Go heap in use after a collection (its heap
// profile, inuse_space) at one point of the run, with its largest holders.
type heapReading struct {
	after string
	total string   // as go tool pprof prints it, e.g. 47.51MB
	top   []string // "12.50MB engine.(*planCache).put", the largest flat holders first
}

// heapTopEntries is how many of a heap profile's holders a reading keeps.
const heapTopEntries = 6

// profileHeap reads the server's heap profile (after a collection) into dir
// and keeps its total and largest holders as the reading after `after`. A
// failure is logged: the resident memory is still measured.
func (p *serveProcess) profileHeap(dir, after string) {
	if p.healthPort == 0 {
		return
	}
	path := filepath.Join(dir, fmt.Sprintf("heap-%d.pb.gz", len(p.heaps)))
	if err := fetchTo(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?gc=1", p.healthPort), path); err != nil {
		logf("pgbench: %s heap profile after %s: %v", p.name, after, err)
		return
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", "-inuse_space", "-nodecount="+strconv.Itoa(heapTopEntries), path).CombinedOutput()
	if err != nil {
		logf("pgbench: %s heap profile after %s: go tool pprof: %v: %s", p.name, after, err, lastLines(string(out), 3))
		return
	}
	r := parsePprofTop(string(out))
	r.after = after
	logf("pgbench: %s Go heap in use after %s: %s (%s; profile %s)", p.name, after, r.total, strings.Join(r.top, ", "), path)
	p.mu.Lock()
	p.heaps = append(p.heaps, r)
	p.mu.Unlock()
}

// parsePprofTop reads the total and the holders of go tool pprof -top.
func parsePprofTop(out string) heapReading {
	var r heapReading
	table := false
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, "Showing nodes accounting for"):
			if i := slices.Index(f, "total"); i > 0 {
				r.total = f[i-1]
			}
		case len(f) > 0 && f[0] == "flat":
			table = true
		case table && len(f) >= 6:
			r.top = append(r.top, f[0]+" "+strings.Join(f[5:], " "))
		}
	}
	return r
}

// heapNote is the heap readings as one note: the total after each point,
// and the largest holders where the heap was largest and at the end.
func (p *serveProcess) heapNote() string {
	if len(p.heaps) == 0 {
		return ""
	}
	var totals []string
	most := 0
	for i, h := range p.heaps {
		totals = append(totals, h.after+" "+h.total)
		if heapBytes(h.total) > heapBytes(p.heaps[most].total) {
			most = i
		}
	}
	last := p.heaps[len(p.heaps)-1]
	s := "Go heap in use at idle (heap profile after a collection; msql serve --pprof): after " + strings.Join(totals, "; ") +
		". Largest holders after " + p.heaps[most].after + ": " + strings.Join(p.heaps[most].top, ", ")
	if most != len(p.heaps)-1 {
		s += "; at the end: " + strings.Join(last.top, ", ")
	}
	return s + "."
}

// heapBytes reads a size as go tool pprof prints it (512B, 1.50kB, 47.51MB).
func heapBytes(s string) float64 {
	for _, u := range []struct {
		suffix string
		scale  float64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}, {"B", 1}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f * u.scale
		}
	}
	return 0
}

// fetchTo writes url's body to path.
func fetchTo(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
