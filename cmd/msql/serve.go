package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/duckstream"
	"github.com/meterstore/meterstore/serve"
	"github.com/meterstore/meterstore/serve/access"
	"github.com/meterstore/meterstore/serve/flightsql"
	"github.com/meterstore/meterstore/settings"
)

func init() {
	subcommands["serve"] = subcommand{"serve the unified view over the PostgreSQL wire protocol, Flight SQL and a read-only Iceberg REST catalog", runServe}
}

const serveUsage = `msql serve [--pgwire ADDR] [--flight ADDR] [--iceberg-rest ADDR] [--health ADDR]
           [--tls-cert FILE --tls-key FILE] [--system-refresh DURATION] [--statement-timeout DURATION]
           [--memory-limit SIZE] [--max-statement-bytes N] [--max-parameters N]
           [--max-nesting N] [--max-result-rows N] [--max-statements-per-user N]
           [--flight-session-idle DURATION] [--confined-databases N]
           [--log-format text|json] [--cpuprofile FILE] [--pprof] [deployment flags]

Serves the deployment read-only to other tools (any subset of the three):

  --pgwire 127.0.0.1:5433        PostgreSQL wire protocol (psql, BI tools, JDBC, Grafana)
  --flight 127.0.0.1:8815        Arrow Flight SQL (ADBC, Flight SQL JDBC/ODBC, pyarrow)
  --iceberg-rest 127.0.0.1:8181  Iceberg REST catalog façade over the cold tables
                                 (also /healthz, /readyz and /v1/meterstore/resolution/{table})

Only queries run; writes are refused with the reason. Users come from the
configuration file's [[users]] (name, password, optional scope = "tenant=X",
which confines the user's session, and statement_timeout = "30s"); without users msql refuses any address
that is not loopback. A configuration with only [[users]] (no [hot]) serves
the embedded default. SIGTERM or SIGINT stops gracefully. One log line per
statement (stderr) carries its provenance: watermark, tiers, duration, rows.
The system tables (system.tables, .snapshots, .partitions, …) are recomputed
at start, every --system-refresh (default 1m; 0: never by the clock) and at
once on SIGHUP, as the shell does at start and on .refresh; each time the
--config file's table declarations are applied first if the file changed
(always on SIGHUP), so a column added with msql create-tables is served.
--health serves /healthz, /readyz and Prometheus /metrics (docs/runbook.md);
with --pprof also Go's runtime profiles under /debug/pprof/ (the heap kept
live: go tool pprof -top http://ADDR/debug/pprof/heap). Off by default: the
health address asks for no password, so keep it on loopback or a private
network with --pprof.
--memory-limit (or [engine] memory_limit) caps DuckDB's memory; by default
half of the machine's (or container's) memory beside PostgreSQL's
shared_buffers. A statement over it spills to [engine] temp_directory where
DuckDB can and is refused with SQLSTATE 53200 where it cannot. Memory DuckDB
frees goes back to the system a second later, and the Go heap's free memory
once the server idles (docs/runbook.md). A statement's
text, parameters and nesting are bounded before anything parses it, and its
result rows as they are sent (pgwire and Flight; SQLSTATE 54000/54001 naming
the limit). A user runs at most max_statements statements at once ([[users]],
default --max-statements-per-user; pgwire and Flight together): one more is
refused with SQLSTATE 53300, not queued. Scoped users run in walled-off
DuckDB databases, one per scope, at most --confined-databases ([serve]
confined_databases, default 4) open at once; a scope's statement while all
of them run other scopes' statements is refused with SQLSTATE 53300 too.
A failed login slows the next one for that user and that address (0.25 s
doubling to 8 s; a success resets).
Flight SQL bearer tokens and prepared statement handles expire after
--flight-session-idle unused (default 30m); --statement-timeout and a user's
statement_timeout apply to Flight SQL statements too.

The limits can live in the configuration file's [serve] section, one key per
flag (a flag given on the command line overrides its key; docs/runbook.md):

  [serve]
  statement_timeout = "5m"        max_statements_per_user = 4
  max_statement_bytes = 1048576   max_parameters = 65535
  max_nesting = 1000              max_result_rows = 1000000
  flight_session_idle = "30m"     confined_databases = 4

DuckDB's memory budget is [engine] memory_limit (--memory-limit).`

func runServe(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var pgAddr, flightAddr, restAddr, certFile, keyFile, cpuProfile string
	var servePprof bool
	var systemEvery, statementTimeout time.Duration
	var opsf opsFlags
	fs := newFlagSet("msql serve", serveUsage, io)
	deploy.register(fs)
	opsf.register(fs)
	fs.StringVar(&pgAddr, "pgwire", "", "PostgreSQL wire protocol address, e.g. 127.0.0.1:5433")
	fs.StringVar(&flightAddr, "flight", "", "Arrow Flight SQL address, e.g. 127.0.0.1:8815")
	fs.StringVar(&restAddr, "iceberg-rest", "", "Iceberg REST catalog address, e.g. 127.0.0.1:8181")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile of the server's whole run to this file (DuckDB's threads show as cgo calls)")
	fs.BoolVar(&servePprof, "pprof", false, "also serve Go's runtime profiles (net/http/pprof: heap, allocs, goroutine, profile, trace) under /debug/pprof/ on the --health address, which asks for no password")
	fs.StringVar(&certFile, "tls-cert", "", "TLS certificate (PEM) for all three servers")
	fs.StringVar(&keyFile, "tls-key", "", "TLS private key (PEM), with --tls-cert")
	fs.DurationVar(&systemEvery, "system-refresh", time.Minute,
		"recompute the system tables (system.tables, .snapshots, .partitions, …) this often; SIGHUP recomputes them at once; 0 refreshes only at start and on SIGHUP")
	fs.DurationVar(&statementTimeout, "statement-timeout", 0,
		"cancel a pgwire or Flight SQL statement running longer than this (PostgreSQL's statement_timeout: a user's [[users]] statement_timeout and SET statement_timeout override it); 0: none")
	fs.StringVar(&deploy.memoryLimit, "memory-limit", "",
		"DuckDB's memory_limit, e.g. 4GB (overrides [engine] memory_limit; default: half of the machine's memory beside PostgreSQL's shared_buffers)")
	deploy.serverBudget = true
	fs.IntVar(&deploy.confinedDatabases, "confined-databases", 0,
		"how many scoped users' DuckDB databases may be open at once, each with a share of the memory budget (overrides [serve] confined_databases; default 4); a scope's statement while all run others' is refused with SQLSTATE 53300")
	limits := access.DefaultLimits
	fs.IntVar(&limits.MaxStatementBytes, "max-statement-bytes", limits.MaxStatementBytes, "refuse a statement (a simple query's whole text) longer than this, before parsing it")
	fs.IntVar(&limits.MaxParameters, "max-parameters", limits.MaxParameters, "refuse a statement with more $n parameters than this")
	fs.IntVar(&limits.MaxNesting, "max-nesting", limits.MaxNesting, "refuse a statement whose parentheses nest deeper than this")
	var perUser int
	var flightIdle time.Duration
	fs.DurationVar(&flightIdle, "flight-session-idle", flightsql.DefaultSessionIdle, "forget a Flight SQL bearer token or prepared statement handle unused this long")
	fs.IntVar(&perUser, "max-statements-per-user", 0, "refuse a user's statement while the user runs this many (a user's [[users]] max_statements overrides it); 0: no bound")
	fs.Int64Var(&limits.MaxResultRows, "max-result-rows", 0, "fail a statement whose result exceeds this many rows; 0: no bound (results stream)")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	var file settings.Settings
	if deploy.config != "" {
		var err error
		if file, err = settings.LoadSettings(deploy.config); err != nil {
			return err
		}
		fromServeSection(fs, file.Serve, serveLimitFlags{statementTimeout: &statementTimeout, perUser: &perUser, flightIdle: &flightIdle, limits: &limits})
	}
	if deploy.confinedDatabases < 0 {
		return fmt.Errorf("%w: --confined-databases %d: want a number ≥ 1 (0 or absent: [serve] confined_databases, else 4)", errUsage, deploy.confinedDatabases)
	}
	if limits.MaxStatementBytes <= 0 || limits.MaxParameters <= 0 || limits.MaxNesting <= 0 || limits.MaxResultRows < 0 || perUser < 0 || flightIdle <= 0 {
		return fmt.Errorf("%w: --max-statement-bytes, --max-parameters and --max-nesting want a number > 0, --max-result-rows and --max-statements-per-user ≥ 0, --flight-session-idle > 0", errUsage)
	}
	if statementTimeout < 0 {
		return fmt.Errorf("%w: --statement-timeout %s: want a duration ≥ 0", errUsage, statementTimeout)
	}
	if systemEvery < 0 {
		return fmt.Errorf("%w: --system-refresh %s: want a duration ≥ 0", errUsage, systemEvery)
	}
	healthAddr := opsf.health
	if servePprof && healthAddr == "" {
		return fmt.Errorf("%w: --pprof serves on the --health address: give --health too", errUsage)
	}
	log, err := opsf.logger(io.err)
	if err != nil {
		return err
	}
	if pgAddr == "" && flightAddr == "" && restAddr == "" {
		return withHint(fmt.Errorf("%w: nothing to serve", errUsage), "msql serve --pgwire 127.0.0.1:5433 --flight 127.0.0.1:8815 --iceberg-rest 127.0.0.1:8181")
	}
	if (certFile == "") != (keyFile == "") {
		return fmt.Errorf("%w: --tls-cert and --tls-key go together", errUsage)
	}
	var tlsCfg *tls.Config
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return fmt.Errorf("load TLS certificate: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	userSettings := file.Users
	// Refuse a public address without users before opening anything.
	if len(userSettings) == 0 {
		for _, a := range []string{pgAddr, flightAddr, restAddr, healthAddr} {
			if a == "" || a == healthAddr {
				continue
			}
			if err := access.CheckListen(a, nil); err != nil {
				return withHint(err, "add [[users]] (name, password, scope) to the configuration file")
			}
		}
	}

	if cpuProfile != "" {
		stopProfile, err := startCPUProfile(cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	deploy.log = log
	d, err := deploy.open(ctx, io)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := limitServedHeap(ctx, d); err != nil {
		return err
	}
	returnFreedMemory(d.log, duckstream.ReturnFreedMemory)
	at, err := d.refreshSystemTables(ctx)
	if err != nil {
		return err
	}
	log.Info("system tables refreshed", "trigger", "start", "at", at.UTC().Format(time.RFC3339))
	users, err := access.NewUsers(d.engine, userSettings)
	if err != nil {
		return err
	}
	users.MaxStatementsPerUser = perUser
	o, err := newOps(ctx, d, log, "msql serve", opsf.stateEvery)
	if err != nil {
		return err
	}
	defer o.Close()
	o.pprof = servePprof
	defer observeDuckDBMemory(d.engine, log)()
	o.readyToo = func(ctx context.Context) error {
		_, err := d.engine.Describe(ctx, "SELECT * FROM "+meterstore.QuoteIdent(d.tables[0].ResolvedName()))
		return err
	}
	return serve.Run(ctx, serve.Config{
		PGWire: pgAddr, Flight: flightAddr, IcebergREST: restAddr, Health: healthAddr,
		TLS: tlsCfg, Log: log, Users: users,
		Limits: limits, StatementTimeout: statementTimeout, FlightSessionIdle: flightIdle,
		Catalog: d.cat.Iceberg(), Tables: d.tableLayouts, Ready: o.ready,
		HealthHandler: o.handler(),
		Background: func(ctx context.Context) {
			go releaseGoHeapWhenIdle(ctx)
			go closeIdleStatements(ctx, d.engine, log)
			keepSystemTablesFresh(ctx, d, systemEvery, hup, log)
		},
	})
}

// keepSystemTablesFresh recomputes the system tables on every SIGHUP and, with
// every > 0, on that interval, until ctx ends; each time it first applies the
// configuration file's table declarations if the file changed (always on
// SIGHUP), so a column another process added is served. A failed refresh is logged and
// leaves the previous rows in place: a session reads the last refresh's state.
func keepSystemTablesFresh(ctx context.Context, d *deployment, every time.Duration, hup <-chan os.Signal, log *slog.Logger) {
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		level, trigger := slog.LevelDebug, "interval"
		select {
		case <-ctx.Done():
			return
		case <-hup:
			level, trigger = slog.LevelInfo, "SIGHUP"
		case <-tick:
		}
		applyConfiguration(ctx, d, trigger == "SIGHUP", log)
		at, err := d.refreshSystemTables(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			log.Warn("system tables not refreshed", "trigger", trigger, "err", err.Error())
		default:
			log.Log(ctx, level, "system tables refreshed", "trigger", trigger, "at", at.UTC().Format(time.RFC3339))
		}
	}
}

// applyConfiguration applies the configuration file's table declarations
// (deployment.reloadTables) and logs what it evolved or why it could not.
func applyConfiguration(ctx context.Context, d *deployment, force bool, log *slog.Logger) {
	evolved, err := d.reloadTables(ctx, force)
	if len(evolved) > 0 {
		log.Info("configuration applied", "evolved", strings.Join(evolved, ","))
	}
	if err != nil && ctx.Err() == nil {
		log.Warn("configuration not applied", "err", err.Error())
	}
}

// startCPUProfile profiles the process into path until the returned stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
