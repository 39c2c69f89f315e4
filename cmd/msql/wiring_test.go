package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/testkit"
)

// .export streams the result into Parquet (with the boundary in its key-value
// metadata) and CSV; the files hold exactly the rows of the query.
func TestExportStreamsParquetAndCSV(t *testing.T) {
	dep := tinyDemo(t)
	r := msql(t, "", append(dep, "--format", "csv", "-c", `SELECT count(*) AS n FROM readings`)...)
	require.Equal(t, 0, r.code, r.stderr)
	want, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(r.stdout, "n\n")), 10, 64)
	require.NoError(t, err, r.stdout)
	require.Greater(t, want, int64(0))

	dir := t.TempDir()
	pq, cs := filepath.Join(dir, "out.parquet"), filepath.Join(dir, "out.csv")
	q := `SELECT malo_id, obis_code, tenant, "from", value, version FROM readings`
	old := syscall.Umask(0o022)
	r = msql(t, "", append(dep, "-c", ".export "+pq+" "+q, "-c", ".export "+cs+" "+q)...)
	syscall.Umask(old)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, fmt.Sprintf("wrote %d rows to %s", want, pq))
	require.Contains(t, r.stdout, fmt.Sprintf("wrote %d rows to %s", want, cs))

	// Created as any file msql writes: 0666 less the umask (022 here).
	for _, p := range []string{pq, cs} {
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o644), st.Mode().Perm(), p)
	}

	rd, err := file.OpenParquetFile(pq, false)
	require.NoError(t, err)
	defer rd.Close()
	require.Equal(t, want, rd.NumRows())
	kv := map[string]string{}
	for _, e := range rd.MetaData().KeyValueMetadata() {
		if e.Value != nil {
			kv[e.Key] = *e.Value
		}
	}
	// One spelling of the provenance keys: the engine's, as Flight SQL writes them.
	for k := range kv {
		require.False(t, strings.HasPrefix(k, "meterstore_"), "key %s: the provenance keys are spelt meterstore.*", k)
	}
	_, err = time.Parse(time.RFC3339Nano, kv["meterstore.watermark"])
	require.NoError(t, err, "watermark %q", kv["meterstore.watermark"])
	var snaps []int64
	require.NoError(t, json.Unmarshal([]byte(kv["meterstore.snapshot_ids"]), &snaps), kv["meterstore.snapshot_ids"])
	require.Len(t, snaps, 1)
	require.Equal(t, "unified", kv["meterstore.read_mode"])
	require.Equal(t, "cold+hot", kv["meterstore.tiers"])
	require.Equal(t, q, kv["meterstore.query"])
	cc, err := rd.MetaData().RowGroup(0).ColumnChunk(0)
	require.NoError(t, err)
	require.Equal(t, "ZSTD", strings.ToUpper(cc.Compression().String()))

	f, err := os.Open(cs)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"malo_id", "obis_code", "tenant", "from", "value", "version"}, recs[0])
	require.Equal(t, want, int64(len(recs)-1))

	// The CSV export holds exactly the text the shell prints for the query.
	ordered := q + ` ORDER BY malo_id, obis_code, tenant, "from"`
	sorted := filepath.Join(dir, "sorted.csv")
	r = msql(t, "", append(dep, "-c", ".export "+sorted+" "+ordered)...)
	require.Equal(t, 0, r.code, r.stderr)
	shell := msql(t, "", append(dep, "--format", "csv", "-c", ordered)...)
	require.Equal(t, 0, shell.code, shell.stderr)
	exported, err := os.ReadFile(sorted)
	require.NoError(t, err)
	require.Equal(t, shell.stdout, string(exported))

	// A statement that is not a query writes nothing.
	bad := filepath.Join(dir, "bad.csv")
	r = msql(t, "", append(dep, "-c", ".export "+bad+" DELETE FROM readings")...)
	require.NotEqual(t, 0, r.code)
	_, err = os.Stat(bad)
	require.True(t, os.IsNotExist(err), "no partial file")
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp"))
	require.Empty(t, left)
}

// The system tables are filled when the shell opens, listed by .tables and
// recomputed by .refresh; .asof takes a timestamp (engine.AsOfTime).
func TestSystemTablesRefreshAndAsOfTime(t *testing.T) {
	dep := tinyDemo(t)
	r := msql(t, "", append(dep, "--format", "csv", "-c", `SELECT "table", physical_table, healthy, snapshot_id IS NOT NULL AS has_snapshot FROM system.tables`)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "table,physical_table,healthy,has_snapshot\nreadings,readings_versions,true,true\n", r.stdout)

	r = msql(t, "", append(dep, "--format", "csv", "-c", ".tables", "-c", ".refresh",
		"-c", `SELECT count(*) > 0 AS has_snapshots FROM system.snapshots`,
		"-c", `SELECT value FROM system.resolution WHERE setting = 'source_table'`)...)
	require.Equal(t, 0, r.code, r.stderr)
	for _, n := range []string{"system.tables", "system.config", "system.resolution", "system.snapshots"} {
		require.Contains(t, r.stdout, n)
	}
	require.Contains(t, r.stdout, "system.snapshots refreshed at ")
	require.Contains(t, r.stdout, "has_snapshots\ntrue\n")
	require.Contains(t, r.stdout, "value\nreadings_versions\n")

	// Pinned to the snapshot current now: the cold tier only; before the first
	// snapshot there is none, and the read says so instead of falling back.
	r = msql(t, "", append(dep, "--format", "csv", "-c", ".asof "+time.Now().UTC().Add(time.Minute).Format(time.RFC3339),
		"-c", `SELECT count(*) > 0 AS pinned FROM readings`)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "as of snapshot current at ")
	require.Contains(t, r.stdout, "pinned\ntrue\n")
	r = msql(t, "", append(dep, "--format", "csv", "-c", ".asof 2001-01-01 20260101000001", "-c", `SELECT count(*) FROM readings`)...)
	require.NotEqual(t, 0, r.code, r.stdout)
	require.Contains(t, r.stdout, "versions ≤ 20260101000001")
	require.Contains(t, strings.ToLower(r.stderr), "snapshot")
}

// msql audit counts the merge keys for which an attribute column took more
// than one value: corrections that changed bilanzkreis show up, a column that
// never changed reports 0, and a merge-key column is refused.
func TestAuditCommand(t *testing.T) {
	cfgPath, write := readingsConfig(t)
	write(`{ name = "tenant", identity = true }, { name = "bilanzkreis" }, { name = "steady" }`)

	ctx := context.Background()
	d, err := (&deployFlags{config: cfgPath}).open(ctx, stdio{err: os.Stderr})
	require.NoError(t, err)
	tb := d.store.Tables()[0]
	w := testkit.NewWorkload(7)
	w.MaLos, w.Days, w.Start, w.Tenants = 4, 3, testkit.DemoStart, 2
	w.CorrectionRate, w.RedeliveryRate, w.GapRate = 0.5, 0, 0
	var batch []meterstore.StoredSeries
	corrections := 0
	require.NoError(t, w.Stream(func(dl testkit.Delivery) error {
		if dl.Point {
			return nil
		}
		s := dl.Series
		s.Extra["steady"] = "S"
		s.Extra["bilanzkreis"] = "11XBK-ORIGINAL-1"
		if dl.Kind == testkit.Correction {
			s.Extra["bilanzkreis"] = "11XBK-CORRECTD-2"
			corrections++
		}
		batch = append(batch, s)
		return nil
	}))
	require.Greater(t, corrections, 0)
	_, err = tb.Append(ctx, batch...)
	require.NoError(t, err)
	require.NoError(t, d.Close())

	r := msql(t, "", "audit", "--config", cfgPath, "bilanzkreis")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `readings_versions\.bilanzkreis: [1-9]\d* merge keys with more than one value .* an attribute, not an identity`, r.stdout)

	r = msql(t, "", "audit", "--config", cfgPath, "steady")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "readings_versions.steady: 0 merge keys with more than one value")

	r = msql(t, "", "audit", "--config", cfgPath, "tenant")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "part of the merge key")

	r = msql(t, "", "audit", "--help")
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stderr, "identity")
}

// Rows below the watermark still in PostgreSQL violate invariant 1: exit 3.
func TestVerifyFailsOnRowsBelowWatermark(t *testing.T) {
	dep, tb := tinyDemoTable(t)
	ctx := context.Background()
	wm, err := tb.Watermark(ctx)
	require.NoError(t, err)
	require.False(t, wm.IsZero())

	// One series of the first demo day, written straight into a partition
	// re-created below the watermark (what a broken archival would leave).
	w := testkit.NewWorkload(99)
	w.MaLos, w.Days, w.Start, w.Tenants = 4, 1, testkit.DemoStart, 2
	var rows []meterstore.Row
	require.NoError(t, w.Stream(func(dl testkit.Delivery) error {
		if dl.Point || dl.Kind != testkit.Original || len(rows) > 0 {
			return nil
		}
		rows, err = tb.Config().Encode(dl.Series)
		return err
	}))
	require.NotEmpty(t, rows)
	require.True(t, rows[0].From.Before(wm))
	writeBelowWatermark(t, ctx, tb, rows)

	r := msql(t, "", append([]string{"verify"}, dep...)...)
	require.Equal(t, 3, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, fmt.Sprintf("%d rows below watermark", len(rows)))
	require.Contains(t, r.stderr, "tiering invariant violated")
}

// msql serve --pgwire answers a PostgreSQL client and stops cleanly on
// SIGTERM; its Go heap is held to a quarter of --memory-limit.
func TestServePgwireAndSIGTERM(t *testing.T) {
	dep := tinyDemo(t)
	home := t.TempDir()
	srv := startServe(t, []string{"MSQL_HOME=" + filepath.Join(home, "msql"), "HOME=" + home, "GOMEMLIMIT="},
		append([]string{"serve", "--memory-limit", "2GiB"}, dep...)...)
	conn := srv.connect(t, "analyst", "")
	var n int64
	require.NoError(t, conn.QueryRow(context.Background(), `SELECT count(*) FROM readings`).Scan(&n))
	require.Greater(t, n, int64(0))
	require.NoError(t, conn.Close(context.Background()))
	log := srv.stop(t)
	require.Contains(t, log, "listening")
	require.Contains(t, log, `msg="go heap limit" bytes=536870912 memory_limit_bytes=2147483648`, "a quarter of 2GiB as DuckDB read it")
}

// msql serve --config with only [[users]] serves the embedded default (a
// configuration without [hot] describes it); main refused it for declaring
// no [[tables]].
func TestServeEmbeddedDefaultWithUsersConfig(t *testing.T) {
	home := t.TempDir()
	env := []string{"MSQL_HOME=" + filepath.Join(home, "msql"), "HOME=" + home}
	r := msqlEnv(t, env, "", "demo", "--no-shell", "--malos", "4", "--days", "8", "--minute-share", "0")
	require.Equal(t, 0, r.code, r.stderr)
	cfg := filepath.Join(home, "users.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("[[users]]\nname = \"ana\"\npassword = \"s3cret\"\n\n[[users]]\nname = \"t1\"\npassword = \"pw\"\nscope = \"tenant=t1\"\n"), 0o600))

	srv := startServe(t, env, "serve", "--config", cfg)
	ctx := context.Background()
	shell := msqlEnv(t, env, "", "--format", "csv", "-c", `SELECT tenant, count(*) AS n FROM readings GROUP BY ALL ORDER BY ALL`)
	require.Equal(t, 0, shell.code, shell.stderr)
	for user, want := range map[string]string{"ana": shell.stdout} {
		conn := srv.connect(t, user, "s3cret")
		rows, err := conn.Query(ctx, `SELECT tenant, count(*) AS n FROM readings GROUP BY ALL ORDER BY ALL`)
		require.NoError(t, err)
		got := "tenant,n\n"
		for rows.Next() {
			var tenant string
			var n int64
			require.NoError(t, rows.Scan(&tenant, &n))
			got += fmt.Sprintf("%s,%d\n", tenant, n)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, want, got, "user %s over pgwire, against the shell", user)
		require.NoError(t, conn.Close(ctx))
	}
	scoped := srv.connect(t, "t1", "pw")
	var tenants int
	require.NoError(t, scoped.QueryRow(ctx, `SELECT count(DISTINCT tenant) FROM readings WHERE tenant <> 't1'`).Scan(&tenants))
	require.Zero(t, tenants, "a scoped user of the embedded default sees its tenant only")
	require.NoError(t, scoped.Close(ctx))
	_, err := pgx.Connect(ctx, srv.dsn("ana", "wrong"))
	require.Error(t, err, "a wrong password is refused")
	srv.stop(t)
}

// served is one msql serve process with a pgwire listener.
type served struct {
	cmd  *exec.Cmd
	addr string
	done chan error
	logs chan string
}

// startServe runs msql with args plus --pgwire on a free loopback port and
// waits until it accepts connections.
func startServe(t *testing.T, env []string, args ...string) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &served{addr: ln.Addr().String(), done: make(chan error, 1), logs: make(chan string, 1000)}
	require.NoError(t, ln.Close())
	s.cmd = exec.Command(msqlBin, append(args, "--pgwire", s.addr)...)
	s.cmd.Env = append(os.Environ(), env...)
	stderr, err := s.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case s.logs <- sc.Text():
			default:
			}
		}
		s.done <- s.cmd.Wait()
	}()
	t.Cleanup(func() { _ = s.cmd.Process.Kill() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		d := net.Dialer{}
		c, err := d.DialContext(ctx, "tcp", s.addr)
		if err == nil {
			c.Close()
			return s
		}
		select {
		case e := <-s.done:
			t.Fatalf("msql serve exited early: %v\n%s", e, s.drain())
		case <-ctx.Done():
			t.Fatalf("msql serve never accepted a connection: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *served) dsn(user, password string) string {
	host, port, _ := strings.Cut(s.addr, ":")
	dsn := fmt.Sprintf("host=%s port=%s user=%s dbname=meterstore sslmode=disable", host, port, user)
	if password != "" {
		dsn += " password=" + password
	}
	return dsn
}

func (s *served) connect(t *testing.T, user, password string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.dsn(user, password))
	require.NoError(t, err)
	return conn
}

// stop sends SIGTERM, requires a clean exit within a minute and returns the log.
func (s *served) stop(t *testing.T) string {
	t.Helper()
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-s.done:
		require.NoError(t, err, "a clean exit (status 0) after SIGTERM")
	case <-time.After(60 * time.Second):
		t.Fatal("msql serve did not stop within 60 s of SIGTERM")
	}
	return s.drain()
}

func (s *served) drain() string {
	var all []string
	for len(s.logs) > 0 {
		all = append(all, <-s.logs)
	}
	return strings.Join(all, "\n")
}

// .explain counts the data files per partition instead of listing every path
// (a year of history is hundreds); --verbose lists them, the same files.
// Errors quote the user's statement, never the rewritten one, and a refusal
// says what was refused, why, and what to do instead.
func TestExplainAndErrorsOverDemo(t *testing.T) {
	dep := tinyDemo(t)
	t.Run("explain", func(t *testing.T) { explainCondensesDataFiles(t, dep) })
	t.Run("errors", func(t *testing.T) { errorsQuoteTheUsersStatement(t, dep) })
	t.Run("explain analyze", func(t *testing.T) {
		r := msql(t, "", append(dep, "-c", "EXPLAIN ANALYZE SELECT count(*) FROM readings")...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "DuckDB plan, run and profiled (EXPLAIN ANALYZE):")
		require.Contains(t, r.stdout, "Total Time:")
	})
}

func errorsQuoteTheUsersStatement(t *testing.T, dep []string) {
	for _, c := range []struct{ q, want, hint string }{
		{"SELECT malo_id, sum(valu) FROM readings GROUP BY 1",
			"Referenced column \"valu\" not found in FROM clause!", "LINE 1: SELECT malo_id, sum(valu) FROM readings GROUP BY 1\n                            ^\n"},
		{"SELECT *\nFROM readings r\nWHERE r.foo = 1", `does not have a column named "foo"`, "LINE 3: WHERE r.foo = 1\n              ^\n"},
		{"SELECT 1 +", "syntax error at end of input", "LINE 1: SELECT 1 +\n                  ^\n"},
		{"SELECT count(*) FROM reading", `unknown relation "reading": did you mean readings?`, "Try: .tables lists the relations"},
		{"INSERT INTO readings VALUES (1)", "INSERT changes data, and the relations here are read-only", "Try: readings is read-only here"},
		{"SELECT * FROM read_csv('/etc/passwd')", "read_csv reads files", "Try: read files in msql --scratch"},
		{"PRAGMA version", "PRAGMA is not a query", "Try: only a SELECT (or WITH … SELECT) runs here"},
	} {
		r := msql(t, "", append(dep, "-c", c.q)...)
		require.NotEqual(t, 0, r.code, c.q)
		require.Contains(t, r.stderr, c.want, c.q)
		require.Contains(t, r.stderr, c.hint, c.q)
		for _, internal := range []string{"_meterstore", ".parquet'", "meter_hot_scan", "serialized to json", "unrestricted handle"} {
			require.NotContains(t, r.stderr, internal, c.q)
		}
		if !strings.Contains(c.q, "INSERT") {
			require.NotContains(t, r.stderr, "read-only", c.q)
		}
	}
}

func explainCondensesDataFiles(t *testing.T, dep []string) {
	const q = `SELECT count(*) FROM readings`
	r := msql(t, "", append(dep, "-c", ".explain "+q)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "rewritten SQL (data files counted per partition; .explain --verbose lists them):")
	require.NotContains(t, r.stdout, ".parquet")
	counted := regexp.MustCompile(`‹(\d+) files?: ([^›]*)›`).FindAllStringSubmatch(r.stdout, -1)
	require.NotEmpty(t, counted)
	total := 0
	for _, m := range counted {
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		total += n
		require.Contains(t, m[2], "from_month=2025-09")
	}

	r = msql(t, "", append(dep, "-c", ".explain --verbose "+q)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, total, strings.Count(r.stdout, ".parquet'"), "the files counted are the files listed")
	require.NotContains(t, r.stdout, "‹")

	r = msql(t, "", append(dep, "-c", "EXPLAIN "+q)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, ".parquet")
}
