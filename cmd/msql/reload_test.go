package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"meterstore/internal/pgtest"
)

// A column another process adds (msql create-tables with the new
// configuration) is served by a running msql serve once the configuration
// file is applied again: on SIGHUP, or at the next --system-refresh when the
// file changed.
func TestServeAppliesAChangedConfiguration(t *testing.T) {
	dsn, wh := pgtest.Database(t), "file://"+t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "meterstore.toml")
	write := func(columns string) {
		require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`[hot]
url = %q
[cold]
warehouse = %q
[[tables]]
name = "readings_versions"
extra_columns = [%s]
`, dsn, wh, columns)), 0o644))
	}
	write(`{ name = "tenant", identity = true }`)
	r := msql(t, "", "create-tables", "--config", cfgPath)
	require.Equal(t, 0, r.code, r.stderr)

	for _, c := range []struct{ name, column, refresh string }{{"on SIGHUP", "region", "0"}, {"at the next refresh", "grid", "1s"}} {
		t.Run(c.name, func(t *testing.T) {
			srv := startServe(t, nil, "serve", "--config", cfgPath, "--system-refresh", c.refresh)
			conn := srv.connect(t, "analyst", "")
			ctx := context.Background()
			count := fmt.Sprintf(`SELECT count(%s) FROM readings`, c.column)
			_, err := conn.Exec(ctx, count)
			require.Error(t, err, "no column %s yet", c.column)

			cols, _ := os.ReadFile(cfgPath)
			write(extraColumnsOf(t, string(cols)) + fmt.Sprintf(`, { name = %q }`, c.column))
			r := msql(t, "", "create-tables", "--config", cfgPath)
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stdout, "added columns "+c.column)
			if c.refresh == "0" {
				require.NoError(t, srv.cmd.Process.Signal(syscall.SIGHUP))
			}
			deadline := time.Now().Add(time.Minute)
			for {
				var n int64
				if err = conn.QueryRow(ctx, count).Scan(&n); err == nil {
					require.Zero(t, n)
					break
				}
				require.True(t, time.Now().Before(deadline), "column %s not served a minute after the change: %v", c.column, err)
				time.Sleep(200 * time.Millisecond)
			}
			require.NoError(t, conn.Close(ctx))
			require.Contains(t, srv.stop(t), "configuration applied")
		})
	}
}

// extraColumnsOf is the extra_columns list of a configuration the test wrote.
func extraColumnsOf(t *testing.T, cfg string) string {
	t.Helper()
	const key = "extra_columns = ["
	i := strings.Index(cfg, key)
	require.GreaterOrEqual(t, i, 0, cfg)
	rest := cfg[i+len(key):]
	return rest[:strings.LastIndex(rest, "]")]
}

// msql maintenance applies a changed configuration at the start of its next
// run: after a column another process added, its archival goes on rather
// than halting at a declaration older than the table.
func TestMaintenanceAppliesAChangedConfiguration(t *testing.T) {
	dsn, wh := pgtest.Database(t), "file://"+t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "meterstore.toml")
	write := func(columns string) {
		require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf("[hot]\nurl = %q\n[cold]\nwarehouse = %q\n[[tables]]\nname = \"readings_versions\"\nextra_columns = [%s]\n",
			dsn, wh, columns)), 0o644))
	}
	write(`{ name = "tenant", identity = true }`)
	r := msql(t, "", "create-tables", "--config", cfgPath)
	require.Equal(t, 0, r.code, r.stderr)

	cmd := exec.Command(msqlBin, "maintenance", "--interval", "1s", "--config", cfgPath)
	out, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); w.Close() })
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	await := func(what string) {
		t.Helper()
		timeout := time.After(time.Minute)
		for {
			select {
			case l, ok := <-lines:
				require.True(t, ok, "msql maintenance exited before %q", what)
				if strings.Contains(l, what) {
					return
				}
			case <-timeout:
				t.Fatalf("msql maintenance printed no %q within a minute", what)
			}
		}
	}
	await("msg=\"maintenance run\"")

	write(`{ name = "tenant", identity = true }, { name = "region" }`)
	r = msql(t, "", "create-tables", "--config", cfgPath)
	require.Equal(t, 0, r.code, r.stderr)
	await("configuration applied")
	for range 4 { // two runs: the outcome line and the log line of each
		select {
		case l := <-lines:
			require.NotContains(t, l, "quarantined", "the run after the configuration was applied")
		case <-time.After(time.Minute):
			t.Fatal("no run reported within a minute")
		}
	}
}
