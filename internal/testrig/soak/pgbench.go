package soak

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/meterstore/meterstore/internal/pglocal"
)

// pgbenchLoad runs PostgreSQL's own client, pgbench, against msql serve's
// pgwire for the whole run, so every fault — a PostgreSQL restart above all —
// comes under a steady load of metering queries besides the checked readers.
// pgbench aborts a client at its first error other than a serialization
// failure, so the load runs in rounds: one a fault cut short is followed by
// the next. It checks no answer (the readers do); it shows the server keeps
// answering.
type pgbenchLoad struct {
	bin, script, addr string

	mu     sync.Mutex
	rounds []pgbenchRound
}

// pgbenchRound is one pgbench invocation.
type pgbenchRound struct {
	start, end time.Time
	txns       int
	aborted    int    // clients aborted by an error
	err        string // the first error pgbench printed
}

const (
	pgbenchClients = "2"
	pgbenchRate    = "2" // transactions per second over all clients: load, not a stress the readers wait behind
	pgbenchRoundOf = 5 * time.Second
)

var (
	pgbenchProcessed = regexp.MustCompile(`(?m)^number of transactions actually processed: ([0-9]+)`)
	pgbenchAborted   = regexp.MustCompile(`(?m)client [0-9]+ aborted.*$`)
)

// newPgbenchLoad writes the script: one meter's daily sums (a MaLo drawn per
// transaction with a pgbench CASE, MaLo-IDs being numbers).
func newPgbenchLoad(work, addr string, malos []string) (*pgbenchLoad, error) {
	dir, err := pglocal.FindBinaries()
	if err != nil {
		return nil, err
	}
	p := &pgbenchLoad{bin: filepath.Join(dir, "pgbench"), script: filepath.Join(work, "pgbench.sql"), addr: addr}
	if _, err := os.Stat(p.bin); err != nil {
		return nil, fmt.Errorf("pgbench beside initdb (Debian package postgresql): %w", err)
	}
	var s strings.Builder
	fmt.Fprintf(&s, "\\set i random(0, %d)\n\\set m CASE", len(malos)-1)
	for i, m := range malos {
		if _, err := strconv.ParseInt(m, 10, 64); err != nil {
			return nil, fmt.Errorf("MaLo %q is not a number a pgbench variable can hold: %w", m, err)
		}
		fmt.Fprintf(&s, " WHEN :i = %d THEN %s", i, m)
	}
	s.WriteString(" END\n")
	s.WriteString("SELECT balancing_day, obis_code, count(*), sum(value) FROM readings WHERE malo_id = :m GROUP BY 1, 2 ORDER BY 1, 2;\n")
	return p, os.WriteFile(p.script, []byte(s.String()), 0o644)
}

// run runs rounds until ctx ends.
func (p *pgbenchLoad) run(ctx context.Context) {
	host, port, _ := strings.Cut(p.addr, ":")
	for ctx.Err() == nil {
		secs := strconv.Itoa(int(pgbenchRoundOf / time.Second))
		cmd := exec.CommandContext(ctx, p.bin, "-n", "-M", "extended", "-c", pgbenchClients, "-j", "1", "-R", pgbenchRate,
			"-T", secs, "-f", p.script, "-h", host, "-p", port, "-U", analyst, "meterstore")
		cmd.Env = append(os.Environ(), "PGPASSWORD="+analystPassword, "PGCONNECT_TIMEOUT=10")
		r := pgbenchRound{start: time.Now()}
		out, err := cmd.CombinedOutput()
		r.end = time.Now()
		if ctx.Err() != nil {
			return // cut off by the run's end: not a round
		}
		if m := pgbenchProcessed.FindSubmatch(out); m != nil {
			r.txns, _ = strconv.Atoi(string(m[1]))
		}
		aborts := pgbenchAborted.FindAll(out, -1)
		r.aborted = len(aborts)
		switch {
		case len(aborts) > 0:
			r.err = string(aborts[0])
		case err != nil:
			r.err = fmt.Sprintf("%v: %s", err, firstLine(string(out)))
		}
		p.mu.Lock()
		p.rounds = append(p.rounds, r)
		p.mu.Unlock()
		if r.txns == 0 {
			sleep(ctx, time.Second)
		}
	}
}

// check: pgbench ran transactions, and some round that started after the
// last PostgreSQL restart recovered ran them too (the server came back by
// itself under load).
func (p *pgbenchLoad) check(st *stats, start time.Time, pass func(string, ...any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var txns, aborted int
	var errs []string
	for _, r := range p.rounds {
		txns += r.txns
		aborted += r.aborted
		if r.err != "" && len(errs) < 3 {
			errs = append(errs, fmt.Sprintf("%s at %s", r.err, r.start.Sub(start).Round(time.Second)))
		}
	}
	if txns == 0 {
		st.fail(fmt.Sprintf("pgbench against msql serve ran no transaction in %d rounds: %s", len(p.rounds), strings.Join(errs, "; ")))
		return
	}
	restarted := time.Time{}
	for _, f := range st.faultList() {
		if f.kind == faultKinds[2] && f.err == nil {
			restarted = start.Add(f.at + f.recovery)
		}
	}
	after := 0
	for _, r := range p.rounds {
		if !r.start.Before(restarted) {
			after += r.txns
		}
	}
	if !restarted.IsZero() && after == 0 {
		st.fail(fmt.Sprintf("pgbench against msql serve ran no transaction after PostgreSQL restarted at %s: %s",
			restarted.Sub(start).Round(time.Second), strings.Join(errs, "; ")))
		return
	}
	note := "no PostgreSQL restart in this run"
	if !restarted.IsZero() {
		note = fmt.Sprintf("%d of them in rounds started after PostgreSQL's last restart (%s)", after, restarted.Sub(start).Round(time.Second))
	}
	pass("pgbench (%s clients, %s tps, extended protocol) against msql serve throughout: %d transactions in %d rounds of %s, %s; %d clients aborted by the faults%s",
		pgbenchClients, pgbenchRate, txns, len(p.rounds), pgbenchRoundOf, note, aborted, firstErrors(errs))
}

func firstErrors(errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	return " (first: " + strings.Join(errs, "; ") + ")"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
