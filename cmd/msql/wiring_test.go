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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"meterstore"
	"meterstore/internal/pgtest"
	"meterstore/testkit"
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
	dsn, wh := pgtest.Database(t), "file://"+t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "meterstore.toml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`[hot]
url = %q
[cold]
warehouse = %q
[[tables]]
name = "readings_versions"
extra_columns = [{ name = "tenant", identity = true }, { name = "bilanzkreis" }, { name = "steady" }]
`, dsn, wh)), 0o644))

	ctx := context.Background()
	d, err := (&deployFlags{config: cfgPath}).open(ctx, stdio{err: os.Stderr})
	require.NoError(t, err)
	tb := d.store.Tables()[0]
	w := testkit.NewWorkload(7)
	w.MaLos, w.Days, w.Start, w.Tenants = 4, 3, demoStart, 2
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
	dep := tinyDemo(t)
	ctx := context.Background()
	d, err := (&deployFlags{dsn: dep[1], warehouse: dep[3]}).open(ctx, stdio{err: os.Stderr})
	require.NoError(t, err)
	defer d.Close()
	tb := d.store.Tables()[0]
	wm, err := tb.Watermark(ctx)
	require.NoError(t, err)
	require.False(t, wm.IsZero())

	// One series of the first demo day, written straight into a partition
	// re-created below the watermark (what a broken archival would leave).
	w := testkit.NewWorkload(99)
	w.MaLos, w.Days, w.Start, w.Tenants = 4, 1, demoStart, 2
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
	require.NoError(t, tb.Hot().EnsurePartitions(ctx, rows[0].From, rows[len(rows)-1].From.Add(time.Hour)))
	_, err = tb.Hot().Write(ctx, rows)
	require.NoError(t, err)

	r := msql(t, "", append([]string{"verify"}, dep...)...)
	require.Equal(t, 3, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, fmt.Sprintf("%d rows below watermark", len(rows)))
	require.Contains(t, r.stderr, "tiering invariant violated")
}

// msql serve --pgwire answers a PostgreSQL client and stops cleanly on SIGTERM.
func TestServePgwireAndSIGTERM(t *testing.T) {
	dep := tinyDemo(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	cmd := exec.Command(msqlBin, append([]string{"serve", "--pgwire", addr}, dep...)...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "MSQL_HOME="+filepath.Join(home, "msql"), "HOME="+home)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	logs := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case logs <- sc.Text():
			default:
			}
		}
		done <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	host, port, _ := strings.Cut(addr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var conn *pgx.Conn
	for {
		conn, err = pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=analyst dbname=meterstore sslmode=disable", host, port))
		if err == nil {
			break
		}
		select {
		case e := <-done:
			t.Fatalf("msql serve exited early: %v", e)
		case <-ctx.Done():
			t.Fatalf("msql serve never accepted a connection: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	var n int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n))
	require.Greater(t, n, int64(0))
	require.NoError(t, conn.Close(ctx))

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-done:
		require.NoError(t, err, "a clean exit (status 0) after SIGTERM")
	case <-time.After(60 * time.Second):
		t.Fatal("msql serve did not stop within 60 s of SIGTERM")
	}
	var all []string
	for len(logs) > 0 {
		all = append(all, <-logs)
	}
	require.Contains(t, strings.Join(all, "\n"), "listening")
}
