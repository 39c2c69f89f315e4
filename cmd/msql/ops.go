package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"time"

	"github.com/meterstore/meterstore/internal/promexport"
	"github.com/meterstore/meterstore/internal/telemetry"
)

// opsFlags are the operational flags of the long-running processes (msql
// serve, msql maintenance): the health address, the log format, how often the
// per-table state behind the gauges is sampled.
type opsFlags struct {
	health     string
	logFormat  string
	stateEvery time.Duration
}

func (o *opsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.health, "health", "", "address of /healthz (liveness), /readyz (PostgreSQL, catalog, invariant) and /metrics (Prometheus), e.g. 127.0.0.1:9187")
	fs.StringVar(&o.logFormat, "log-format", "text", "log lines on stderr as text or json")
	fs.DurationVar(&o.stateEvery, "state-interval", time.Minute,
		"sample each table's state (watermark, hot rows, invariant, cold files) for a scrape of /metrics at most this often; 0 samples on every scrape (msql maintenance samples after each run instead)")
}

// logger is the process's structured log on w.
func (o *opsFlags) logger(w io.Writer) (*slog.Logger, error) {
	switch strings.ToLower(o.logFormat) {
	case "text", "":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, fmt.Errorf("%w: --log-format %q: want text or json", errUsage, o.logFormat)
}

// ops serves a deployment's health and metrics.
type ops struct {
	d          *deployment
	log        *slog.Logger
	exp        *promexport.Exporter
	stateEvery time.Duration
	// readyToo is one more readiness check (serve: the engine plans a
	// statement); nil: none.
	readyToo func(context.Context) error
	// betweenRuns: the state is sampled only when told (msql maintenance,
	// after each run), never by a scrape, and readiness reads that sample —
	// both refresh the cold table handle archival commits on, and a refresh
	// that ends after a commit it began before puts the older metadata back.
	betweenRuns bool
	// pprof also serves Go's runtime profiles under /debug/pprof/ (msql
	// serve --pprof): what the Go heap holds live, for an operator sizing or
	// diagnosing a running server. Off by default: the health address is
	// not authenticated, and a CPU profile or trace costs while it runs.
	pprof bool

	mu        sync.Mutex
	sampled   time.Time // last successful sample
	sampleErr error     // the last sample's failure, nil after a success
	pgDown    time.Time // the first failed ping of the current outage; zero while PostgreSQL answers
}

// newOps installs the metrics SDK (the process's instruments record into it
// from now on) and samples the tables' state once.
func newOps(ctx context.Context, d *deployment, log *slog.Logger, service string, every time.Duration) (*ops, error) {
	exp, err := promexport.New(service)
	if err != nil {
		return nil, fmt.Errorf("install metrics: %w", err)
	}
	o := &ops{d: d, log: log, exp: exp, stateEvery: every}
	o.sample(ctx, true)
	return o, nil
}

// Close shuts the metrics SDK down.
func (o *ops) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return o.exp.Close(ctx)
}

// sample refreshes the published table state when it is older than the
// interval (or always, with force). A failure keeps the last state, whose age
// gauge then grows, and is logged.
func (o *ops) sample(ctx context.Context, force bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	if !force && now.Sub(o.sampled) < o.stateEvery {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := o.d.store.SampleState(ctx, now); err != nil {
		o.log.Warn("sample table state", "err", err.Error())
		o.sampleErr = err
		return
	}
	o.sampled, o.sampleErr = now, nil
}

// ready is readiness: PostgreSQL answers, the catalog answers, and no table
// has rows below its watermark in PostgreSQL — the one state in which query
// results are wrong, so an instance in it must not take traffic.
func (o *ops) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := o.d.pool.Ping(ctx); err != nil {
		since := o.postgresDown(time.Now())
		return fmt.Errorf("PostgreSQL unreachable since %s (%s; reconnecting by itself): %w",
			since.UTC().Format(time.RFC3339), time.Since(since).Round(time.Second), err)
	}
	o.postgresDown(time.Time{})
	if o.betweenRuns {
		return o.readySampled()
	}
	for _, t := range o.d.store.Tables() {
		r, err := t.VerifyInvariant(ctx)
		if err != nil {
			return fmt.Errorf("table %s: %w", t.Config().ResolvedName(), err)
		}
		if !r.Healthy {
			return fmt.Errorf("table %s: %d rows below the watermark %s are still in PostgreSQL, where no query reads them (invariant violated; see the runbook, msql verify)",
				t.Config().ResolvedName(), r.RowsBelow, r.Watermark.UTC().Format(time.RFC3339))
		}
	}
	if o.readyToo != nil {
		return o.readyToo(ctx)
	}
	return nil
}

// postgresDown records a failed ping at now and returns when the outage
// began (its first failed ping); a zero now records a ping that answered,
// ending the outage.
func (o *ops) postgresDown(now time.Time) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	if now.IsZero() || o.pgDown.IsZero() {
		o.pgDown = now
	}
	return o.pgDown
}

// readySampled is readiness from the state sampled after the last run: the
// sample read the catalog and both tiers, and found no row below a watermark.
func (o *ops) readySampled() error {
	o.mu.Lock()
	err := o.sampleErr
	o.mu.Unlock()
	if err != nil {
		return err
	}
	for _, s := range telemetry.Published() {
		if !s.Healthy {
			return fmt.Errorf("table %s: %d rows below the watermark %s are still in PostgreSQL, where no query reads them (invariant violated; see the runbook, msql verify)",
				s.Table, s.InvariantViolations, s.Watermark.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// handler serves /healthz, /readyz and /metrics, and with pprof Go's
// runtime profiles under /debug/pprof/.
func (o *ops) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := o.ready(r.Context()); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	metrics := o.exp.Handler()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if !o.betweenRuns {
			o.sample(r.Context(), false)
		}
		metrics.ServeHTTP(w, r)
	})
	if o.pprof {
		// Not /debug/pprof/cmdline: the command line may carry a DSN's
		// password.
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// serveHealth serves the handler on addr until ctx ends.
func (o *ops) serveHealth(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: o.handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
