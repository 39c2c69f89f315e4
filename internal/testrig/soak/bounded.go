package soak

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// boundedWork checks, all through the run and its faults, that msql serve ends
// work its client no longer wants: a statement past its statement_timeout, one
// whose client cancels it (pgx sends a CancelRequest), one whose client
// disconnects. Each is a cross join that would otherwise run for hours; after a
// cancel or a disconnect, pg_stat_activity must show it gone. And a statement
// that needs more than the server's memory budget (serveMemoryBudget) is
// refused with 53200, its session going on.
type boundedWork struct {
	addr string

	mu     sync.Mutex
	probes []probe
}

// probe is one attempt of one kind.
type probe struct {
	kind    string
	at      time.Duration // since the run's start
	took    time.Duration // until the statement ended for its client
	gone    time.Duration // until pg_stat_activity no longer listed it (cancel, disconnect)
	skipped string        // a fault got in the way (connection refused, server restarting)
	err     string        // what went wrong, "" = as it should
}

const (
	probeEvery = 10 * time.Second
	probeAfter = 500 * time.Millisecond // how long a probe lets its statement run
	probeBound = 30 * time.Second       // far above probeAfter: only work that was never stopped reaches it
	probeTag   = "/* soak:bounded */"
)

// probeSQL runs for hours unless stopped: a three-way cross join of readings.
const probeSQL = probeTag + " SELECT sum(a.value * b.value * c.value) FROM readings a, readings b, readings c"

// probeGathered gathers a cross join into one string: nothing DuckDB can
// spill, far beyond serveMemoryBudget.
const probeGathered = probeTag + " SELECT length(string_agg(a.malo_id || b.malo_id, ',')) FROM readings a, readings b, readings c"

// serveMemoryBudget is msql serve's --memory-limit in the soak: ample for
// every checked reader — each confined database holds a share of it (a
// fifth by default) — and far below what probeGathered needs.
const serveMemoryBudget = "1GB"

var probeKinds = []string{"statement_timeout", "cancel", "disconnect", "memory"}

func (b *boundedWork) run(ctx context.Context, start time.Time) {
	for i := 0; ctx.Err() == nil; i++ {
		sleep(ctx, probeEvery)
		if ctx.Err() != nil {
			return
		}
		p := probe{kind: probeKinds[i%len(probeKinds)], at: time.Since(start)}
		b.probe(ctx, &p)
		if ctx.Err() != nil && p.err != "" {
			return // cut off by the run's end: not a probe
		}
		b.mu.Lock()
		b.probes = append(b.probes, p)
		b.mu.Unlock()
	}
}

func (b *boundedWork) connect(ctx context.Context) (*pgx.Conn, error) {
	host, port, _ := strings.Cut(b.addr, ":")
	return pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=meterstore sslmode=disable connect_timeout=10",
		host, port, analyst, analystPassword))
}

func (b *boundedWork) probe(ctx context.Context, p *probe) {
	conn, err := b.connect(ctx)
	if err != nil {
		p.skipped = "connect: " + err.Error()
		return
	}
	defer conn.Close(context.Background())
	t0 := time.Now()
	switch p.kind {
	case "statement_timeout":
		if _, err := conn.Exec(ctx, fmt.Sprintf("SET statement_timeout = '%dms'", probeAfter.Milliseconds())); err != nil {
			p.skipped = "SET statement_timeout: " + err.Error()
			return
		}
		err = b.heavy(ctx, conn)
		p.took = time.Since(t0)
		b.judge(p, err, "57014")
	case "cancel":
		qctx, cancel := context.WithTimeout(ctx, probeAfter)
		err = b.heavy(qctx, conn)
		cancel()
		p.took = time.Since(t0)
		b.judge(p, err, "")
		b.awaitGone(ctx, p, t0)
	case "memory":
		var v any
		err = conn.QueryRow(ctx, probeGathered).Scan(&v)
		p.took = time.Since(t0)
		b.judge(p, err, "53200")
		if p.err == "" && p.skipped == "" {
			b.goesOn(ctx, conn, p)
		}
	case "disconnect":
		done := make(chan error, 1)
		go func() { done <- b.heavy(ctx, conn) }()
		sleep(ctx, probeAfter)
		_ = conn.PgConn().Conn().Close() // the client goes away without a word
		err = <-done
		p.took = time.Since(t0)
		b.awaitGone(ctx, p, t0)
	}
}

func (b *boundedWork) heavy(ctx context.Context, conn *pgx.Conn) error {
	var v any
	return conn.QueryRow(ctx, probeSQL).Scan(&v)
}

// judge records what the statement's own end said: an error (with code, when
// one is wanted) before probeBound. A connection error is a fault's doing.
func (b *boundedWork) judge(p *probe, err error, code string) {
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		p.err = "the statement finished — it was never stopped"
	case p.took > probeBound:
		p.err = fmt.Sprintf("the statement ended only after %s: %v", p.took.Round(time.Second), err)
	case errors.As(err, &pgErr) && faultCode(pgErr.Code):
		p.skipped = fmt.Sprintf("SQLSTATE %s: %s", pgErr.Code, pgErr.Message)
	case errors.As(err, &pgErr):
		if code != "" && pgErr.Code != code {
			p.err = fmt.Sprintf("SQLSTATE %s, want %s: %s", pgErr.Code, code, pgErr.Message)
		}
	case code != "":
		p.skipped = "no SQLSTATE (the connection broke): " + err.Error()
	}
}

// goesOn: the session a statement was refused in answers again once the
// refused statement's memory is released — the readers running meanwhile
// share the budget, so a few attempts are allowed.
func (b *boundedWork) goesOn(ctx context.Context, conn *pgx.Conn, p *probe) {
	var err error
	for range 10 {
		var n int64
		if err = conn.QueryRow(ctx, "SELECT count(*) FROM readings").Scan(&n); err == nil {
			return
		}
		sleep(ctx, 500*time.Millisecond)
	}
	p.err = "the refused session does not go on: " + err.Error()
}

// faultCode: a class a fault causes — connection exceptions, the server
// shutting down, the tiering watermark moving under the statement.
func faultCode(code string) bool {
	return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "57P") || code == "40001"
}

// awaitGone polls pg_stat_activity from a new connection until no active
// statement carries the probe's tag, up to probeBound after the probe began.
// A poll that fails (PostgreSQL restarting under msql serve) is tried again;
// if none succeeds, a fault got in the way.
func (b *boundedWork) awaitGone(ctx context.Context, p *probe, t0 time.Time) {
	var lastErr error
	for time.Since(t0) < probeBound && ctx.Err() == nil {
		n, err := b.activeProbes(ctx)
		switch {
		case err != nil:
			lastErr = err
		case n == 0:
			p.gone = time.Since(t0)
			return
		default:
			lastErr = nil
		}
		sleep(ctx, 200*time.Millisecond)
	}
	switch {
	case ctx.Err() != nil:
	case lastErr != nil:
		p.skipped = "pg_stat_activity: " + lastErr.Error()
	default:
		p.err = fmt.Sprintf("still running %s after its client %s", probeBound, map[string]string{"cancel": "cancelled it", "disconnect": "went away"}[p.kind])
	}
}

// activeProbes counts the active statements carrying the probe's tag.
func (b *boundedWork) activeProbes(ctx context.Context) (int, error) {
	conn, err := b.connect(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var n int
	err = conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND starts_with(query, $1)", probeTag).Scan(&n)
	return n, err
}

// check: every kind was probed, and every probe no fault got in the way of
// ended as it should.
func (b *boundedWork) check(st *stats, pass func(string, ...any)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	done := map[string]int{}
	var slowest time.Duration
	skipped := 0
	for _, p := range b.probes {
		switch {
		case p.err != "":
			st.fail(fmt.Sprintf("bounded work, %s probe at %s: %s", p.kind, p.at.Round(time.Second), p.err))
		case p.skipped != "":
			skipped++
		default:
			done[p.kind]++
			slowest = max(slowest, p.took, p.gone)
		}
	}
	for _, k := range probeKinds {
		if done[k] == 0 {
			st.fail(fmt.Sprintf("bounded work: no %s probe ran undisturbed by a fault (%d probes, %d skipped)", k, len(b.probes), skipped))
			return
		}
	}
	pass("msql serve stopped every statement its client gave up on — statement_timeout %d, cancel %d, disconnect %d (gone from pg_stat_activity) — and refused %d beyond its %s memory budget (53200, the session going on); slowest %s, %d probes met a fault",
		done["statement_timeout"], done["cancel"], done["disconnect"], done["memory"], serveMemoryBudget, slowest.Round(time.Millisecond), skipped)
}
