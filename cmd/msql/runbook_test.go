package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/internal/testrig/promtest"
	"github.com/meterstore/meterstore/store"
)

// Secrets of the operations deployment: none may appear in any log line.
const (
	opsUserPassword  = "Pw-of-admin-7f3a"
	opsWrongPassword = "Wrong-guess-91c2"
	opsDSNPassword   = "Dsn-secret-44b8"
)

// opsDeployment loads the tiny demo and writes a configuration file for it
// with a user and a password in the PostgreSQL URL (the test cluster trusts
// loopback, so the password is carried, never checked).
func opsDeployment(t *testing.T) (config string, dsn string, warehouse string) {
	t.Helper()
	dep := tinyDemo(t)
	dsn, warehouse = dep[1], dep[3]
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.User = url.UserPassword(u.User.Username(), opsDSNPassword)
	config = filepath.Join(t.TempDir(), "meterstore.toml")
	require.NoError(t, os.WriteFile(config, fmt.Appendf(nil, `[hot]
url = %q
[cold]
warehouse = %q
[[tables]]
name = "readings_versions"
extra_columns = [{ name = "tenant", identity = true }]
[[users]]
name = "admin"
password = %q
`, u.String(), warehouse, opsUserPassword), 0o600))
	return config, dsn, warehouse
}

// proc is a long-running msql with its stderr collected line by line.
type proc struct {
	cmd  *exec.Cmd
	done chan error
	mu   sync.Mutex
	logs []string
}

func startMsql(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(msqlBin, args...), done: make(chan error, 1)}
	home := t.TempDir()
	p.cmd.Env = append(os.Environ(), "MSQL_HOME="+filepath.Join(home, "msql"), "HOME="+home)
	p.cmd.Stdout = io.Discard
	stderr, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.logs = append(p.logs, sc.Text())
			p.mu.Unlock()
		}
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	return p
}

// stop sends SIGTERM and returns the log lines once the process has exited.
func (p *proc) stop(t *testing.T) []string {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.done:
		require.NoError(t, err, "a clean exit after SIGTERM; log:\n%s", strings.Join(p.logs, "\n"))
	case <-time.After(60 * time.Second):
		t.Fatal("msql did not stop within 60 s of SIGTERM")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logs...)
}

// log is what the process logged so far.
func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.logs, "\n")
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// await polls until cond holds, failing if the process exits first or it
// takes longer than two minutes (a bound for a loaded machine, not a timing).
func (p *proc) await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		select {
		case err := <-p.done:
			t.Fatalf("msql exited before %s: %v\n%s", what, err, strings.Join(p.logs, "\n"))
		case <-time.After(200 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "no %s within 2 minutes", what)
	}
}

func httpStatus(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestOperationsRunbook runs msql maintenance and msql serve as an operator
// would (--health, JSON logs), checks /healthz, /readyz and /metrics of both
// with exact values, runs every msql command of docs/runbook.md — the
// invariant section in a deployment that violates the invariant, where
// /readyz must fail and the runbook's remedy must restore it — and checks
// that no log line of either process carries a password.
func TestOperationsRunbook(t *testing.T) {
	config, dsn, warehouse := opsDeployment(t)
	ctx := context.Background()
	mntHealth, health, pgAddr, restAddr := freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t)

	mnt := startMsql(t, "maintenance", "--config", config, "--health", mntHealth, "--interval", "1h", "--log-format", "json", "--state-interval", "0")
	var mm promtest.Metrics
	mnt.await(t, "an archival run on /metrics", func() bool {
		if code, _ := httpStatus("http://" + mntHealth + "/healthz"); code != 200 {
			return false
		}
		mm = promtest.Scrape(t, "http://"+mntHealth+"/metrics")
		_, ok := mm.Value("meterstore_maintenance_duration_seconds_count", "meterstore_task", "archival")
		return ok
	})
	table := []string{"meterstore_table", "readings"}
	_, ok := mm.Value("meterstore_maintenance_duration_seconds_count", append(table, "meterstore_task", "archival", "meterstore_outcome", "ok")...)
	require.True(t, ok, "the first archival run failed:\n%s", mnt.log())
	require.Equal(t, 1.0, mm.Must(t, "meterstore_maintenance_duration_seconds_count", append(table, "meterstore_task", "archival", "meterstore_outcome", "ok")...))
	require.Equal(t, 1.0, mm.Must(t, "meterstore_archival_lease_attempts_total", append(table, "meterstore_lease_result", "won")...))

	srv := startMsql(t, "serve", "--config", config, "--pgwire", pgAddr, "--iceberg-rest", restAddr, "--health", health, "--log-format", "json", "--state-interval", "0")
	srv.await(t, "/readyz", func() bool { code, _ := httpStatus("http://" + health + "/readyz"); return code == 200 })

	host, port, _ := net.SplitHostPort(pgAddr)
	_, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=admin password=%s dbname=meterstore sslmode=disable", host, port, opsWrongPassword))
	require.Error(t, err, "a wrong password is refused")
	conn, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=admin password=%s dbname=meterstore sslmode=disable", host, port, opsUserPassword))
	require.NoError(t, err)
	var n int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n))
	require.Positive(t, n)
	_, err = conn.Exec(ctx, `DELETE FROM readings_versions`)
	require.Error(t, err)
	require.NoError(t, conn.Close(ctx))
	req, err := http.NewRequest("GET", "http://"+restAddr+"/v1/namespaces/meterstore/tables/readings_versions", nil)
	require.NoError(t, err)
	req.SetBasicAuth("admin", opsUserPassword)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)

	d, err := (&deployFlags{dsn: dsn, warehouse: warehouse}).open(ctx, stdio{err: io.Discard})
	require.NoError(t, err)
	defer d.Close()
	tb := d.store.Tables()[0]
	wm, err := tb.Watermark(ctx)
	require.NoError(t, err)
	var hotRows int64
	require.NoError(t, d.pool.QueryRow(ctx, `SELECT count(*) FROM readings_versions`).Scan(&hotRows))

	m := promtest.Scrape(t, "http://"+health+"/metrics")
	pg := []string{"meterstore_surface", "pgwire"}
	require.Equal(t, 1.0, m.Must(t, "meterstore_statement_duration_seconds_count", append(pg, "meterstore_outcome", "ok")...))
	require.Equal(t, 1.0, m.Must(t, "meterstore_statement_returned_rows_sum", append(pg, "meterstore_outcome", "ok")...))
	require.Equal(t, 1.0, m.Must(t, "meterstore_statement_duration_seconds_count", append(pg, "meterstore_outcome", "refused")...))
	require.Equal(t, 1.0, m.Must(t, "http_server_request_duration_seconds_count", "http_route", "/v1/namespaces/{ns}/tables/{table}", "http_response_status_code", "200"))
	require.Equal(t, float64(wm.Unix()), m.Must(t, "meterstore_watermark_seconds", table...))
	require.Equal(t, float64(hotRows), m.Must(t, "meterstore_hot_rows", table...))
	require.Equal(t, 1.0, m.Must(t, "meterstore_table_healthy", table...))
	// DuckDB's own account beside the Go runtime's: its allocator, and each
	// database's kept statements and duckdb_memory().
	require.Positive(t, m.Must(t, "meterstore_duckdb_allocator_allocated_bytes"))
	require.GreaterOrEqual(t, m.Must(t, "meterstore_duckdb_allocator_resident_bytes"), m.Must(t, "meterstore_duckdb_allocator_allocated_bytes"))
	for _, series := range []string{"meterstore_duckdb_kept_statements", "meterstore_duckdb_temporary_storage_bytes", "meterstore_duckdb_memory_bytes"} {
		m.Must(t, series, "meterstore_duckdb_database", "engine") // served, whatever the value
	}
	m.Must(t, "meterstore_duckdb_memory_bytes", "meterstore_duckdb_database", "engine", "tag", "BASE_TABLE")

	// Every series the alert rules read is served by one of the two processes.
	doc, err := os.ReadFile("../../docs/runbook.md")
	require.NoError(t, err)
	rules := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindSubmatch(doc)
	require.NotNil(t, rules, "the runbook's alert rules")
	for _, name := range regexp.MustCompile(`meterstore_[a-z_]+`).FindAllString(string(rules[1]), -1) {
		if m.IsLabel(name) || mm.IsLabel(name) {
			continue
		}
		_, inServe := m.Value(name)
		_, inMaint := mm.Value(name)
		require.True(t, inServe || inMaint, "alert rule reads %s, which neither process serves", name)
	}

	// The runbook's commands, section by section.
	sections := runbookCommands(t, string(doc))
	require.Len(t, sections, 7, "one section per alert")
	for _, s := range sections {
		if s.title == "Invariant violated" {
			violateInvariant(t, ctx, d)
			code, body := httpStatus("http://" + health + "/readyz")
			require.Equal(t, http.StatusServiceUnavailable, code, body)
			require.Contains(t, body, "rows below the watermark")
			m := promtest.Scrape(t, "http://"+health+"/metrics")
			require.Equal(t, 0.0, m.Must(t, "meterstore_table_healthy", table...))
		}
		for _, c := range s.commands {
			r := msql(t, "", c.args(config)...)
			require.Equal(t, c.exit, r.code, "%s: %s\nstdout: %s\nstderr: %s", s.title, c.line, r.stdout, r.stderr)
		}
		if s.title == "Invariant violated" {
			code, body := httpStatus("http://" + health + "/readyz")
			require.Equal(t, 200, code, "the runbook's remedy restores readiness: %s", body)
		}
	}

	for name, p := range map[string]*proc{"serve": srv, "maintenance": mnt} {
		logs := p.stop(t)
		var statements, runs int
		for _, line := range logs {
			for _, secret := range []string{opsUserPassword, opsWrongPassword, opsDSNPassword} {
				require.NotContains(t, line, secret, "msql %s logged a secret", name)
			}
			var rec map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &rec), "msql %s: not a JSON log line: %s", name, line)
			switch rec["msg"] {
			case "statement":
				statements++
				for _, k := range []string{"proto", "user", "outcome", "rows", "duration_ms", "watermark", "tiers", "mode", "tables"} {
					require.Contains(t, rec, k, line)
				}
			case "maintenance run":
				runs++
				for _, k := range []string{"table", "task", "outcome", "windows", "rows", "bytes", "duration_ms", "watermark"} {
					require.Contains(t, rec, k, line)
				}
			}
		}
		if name == "serve" {
			require.Equal(t, 1, statements, "one line per statement that ran")
		} else {
			require.Equal(t, 1, runs, "one line per table and run")
		}
	}
}

// violateInvariant copies the first archived day's rows from Iceberg back
// into a partition re-created below the watermark, as a restore of an old
// dump would: invisible to queries until an archival run reconciles them.
func violateInvariant(t *testing.T, ctx context.Context, d *deployment) {
	t.Helper()
	tb := d.store.Tables()[0]
	require.NoError(t, tb.Cold().Refresh(ctx))
	files, _, err := tb.Cold().PlanFiles(ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	first := *files[0].FromMin
	for _, f := range files {
		if f.FromMin.Before(first) {
			first = *f.FromMin
		}
	}
	day := tb.Hot().PartitionStart(first)
	rows, err := tb.Cold().ReadRows(ctx, catalog.PlanRequest{From: day, To: day.Add(tb.Config().PartitionStep())})
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	writeBelowWatermark(t, ctx, tb, rows)
}

// writeBelowWatermark writes rows below the watermark straight into
// PostgreSQL, as a broken archival — one that did not claim the range below
// it — would leave them: the table's archived range (hot.ClaimBelow), which
// refuses such a partition and such rows, is dropped first.
func writeBelowWatermark(t *testing.T, ctx context.Context, tb *store.Table, rows []meterstore.Row) {
	t.Helper()
	_, err := tb.Hot().Pool().Exec(ctx, "DROP TABLE "+meterstore.QuoteIdent(tb.Config().Name()+"$archived"))
	require.NoError(t, err)
	require.NoError(t, tb.Hot().EnsurePartitions(ctx, rows[0].From, rows[len(rows)-1].From.Add(time.Hour)))
	_, err = tb.Hot().Write(ctx, rows)
	require.NoError(t, err)
}

// runbookSection is one alert's section and its msql commands.
type runbookSection struct {
	title    string
	commands []runbookCommand
}

type runbookCommand struct {
	line string
	exit int
}

// args splits the command line (after "$ msql") as a POSIX shell would for
// the quoting the runbook uses, with $MSQL_CONFIG set.
func (c runbookCommand) args(config string) []string {
	var out []string
	var cur strings.Builder
	in, quote, esc := false, rune(0), false
	for _, r := range strings.TrimPrefix(c.line, "$ msql ") {
		switch {
		case esc:
			cur.WriteRune(r)
			esc, in = false, true
		case r == '\\' && quote != '\'':
			esc = true
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '\'' || r == '"'):
			quote, in = r, true
		case quote == 0 && r == ' ':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	for i := range out {
		out[i] = strings.ReplaceAll(out[i], "$MSQL_CONFIG", config)
	}
	return out
}

// runbookCommands reads the "$ msql …" lines of each alert section's console
// blocks; "# exit N" at the end of a line is its expected exit status.
func runbookCommands(t *testing.T, doc string) []runbookSection {
	t.Helper()
	var out []runbookSection
	inBlock := false
	exitNote := regexp.MustCompile(`\s+#\s*exit (\d+)\s*$`)
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			out = append(out, runbookSection{title: strings.TrimPrefix(line, "## ")})
		case line == "```console":
			inBlock = true
		case strings.HasPrefix(line, "```"):
			inBlock = false
		case inBlock && strings.HasPrefix(line, "$ msql "):
			c := runbookCommand{line: line}
			if m := exitNote.FindStringSubmatch(line); m != nil {
				c.exit, _ = strconv.Atoi(m[1])
				c.line = strings.TrimSpace(line[:len(line)-len(m[0])])
			}
			require.NotEmpty(t, out, "a command before the first section")
			out[len(out)-1].commands = append(out[len(out)-1].commands, c)
		}
	}
	var alerts []runbookSection
	for _, s := range out {
		if len(s.commands) > 0 {
			alerts = append(alerts, s)
		}
	}
	return alerts
}
