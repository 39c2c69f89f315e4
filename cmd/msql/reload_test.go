package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/testkit/pgtest"
)

// A column another process adds (msql create-tables with the new
// configuration) is served by a running msql serve once the configuration
// file is applied again: on SIGHUP, or at the next --system-refresh when the
// file changed.
func TestServeAppliesAChangedConfiguration(t *testing.T) {
	cfgPath, write := readingsConfig(t)
	write(`{ name = "tenant", identity = true }`)
	r := msql(t, "", "create-tables", "--config", cfgPath)
	require.Equal(t, 0, r.code, r.stderr)

	for _, c := range []struct{ name, column, refresh string }{{"on SIGHUP", "region", "0"}, {"at the next refresh", "grid", "1s"}} {
		t.Run(c.name, func(t *testing.T) {
			rest := freeAddr(t)
			srv := startServe(t, nil, "serve", "--config", cfgPath, "--system-refresh", c.refresh, "--iceberg-rest", rest)
			conn := srv.connect(t, "analyst", "")
			ctx := context.Background()
			count := fmt.Sprintf(`SELECT count(%s) FROM readings`, c.column)
			_, err := conn.Exec(ctx, count)
			require.Error(t, err, "no column %s yet", c.column)

			// The other process adds the column from its own copy of the
			// changed file before the served file changes: a serve refreshing
			// every second would otherwise apply the change itself first.
			cols, _ := os.ReadFile(cfgPath)
			write(extraColumnsOf(t, string(cols)) + fmt.Sprintf(`, { name = %q }`, c.column))
			changed, _ := os.ReadFile(cfgPath)
			require.NoError(t, os.WriteFile(cfgPath, cols, 0o644))
			other := filepath.Join(t.TempDir(), "meterstore.toml")
			require.NoError(t, os.WriteFile(other, changed, 0o644))
			r := msql(t, "", "create-tables", "--config", other)
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stdout, "added columns "+c.column)
			require.NoError(t, os.WriteFile(cfgPath, changed, 0o644))
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
			status, body := httpStatus("http://" + rest + "/v1/meterstore/resolution/readings_versions")
			require.Equal(t, http.StatusOK, status, body)
			require.Contains(t, body, `"`+c.column+`"`, "the REST façade publishes the new resolution SQL")
			require.NoError(t, conn.Close(ctx))
			require.Contains(t, srv.stop(t), "configuration applied")
		})
	}
}

// readingsConfig is a configuration file declaring readings_versions on a
// fresh database and warehouse; write sets its extra_columns.
func readingsConfig(t *testing.T) (path string, write func(columns string)) {
	t.Helper()
	dsn, wh := pgtest.Database(t), "file://"+t.TempDir()
	path = filepath.Join(t.TempDir(), "meterstore.toml")
	return path, func(columns string) {
		require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf("[hot]\nurl = %q\n[cold]\nwarehouse = %q\n[[tables]]\nname = \"readings_versions\"\nextra_columns = [%s]\n",
			dsn, wh, columns)), 0o644))
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
	cfgPath, write := readingsConfig(t)
	write(`{ name = "tenant", identity = true }`)
	r := msql(t, "", "create-tables", "--config", cfgPath)
	require.Equal(t, 0, r.code, r.stderr)

	p := startMsql(t, "maintenance", "--interval", "1s", "--config", cfgPath)
	runs := func() []string {
		var out []string
		for _, l := range strings.Split(p.log(), "\n") {
			if strings.Contains(l, "maintenance run") || strings.Contains(l, "configuration applied") {
				out = append(out, l)
			}
		}
		return out
	}
	p.await(t, "a maintenance run", func() bool { return len(runs()) > 0 })

	write(`{ name = "tenant", identity = true }, { name = "region" }`)
	r = msql(t, "", "create-tables", "--config", cfgPath)
	require.Equal(t, 0, r.code, r.stderr)
	var after []string
	p.await(t, "two runs after the configuration was applied", func() bool {
		all := runs()
		i := slices.IndexFunc(all, func(l string) bool { return strings.Contains(l, "configuration applied") })
		after = all[i+1:]
		return i >= 0 && len(after) >= 2
	})
	for _, l := range after {
		require.NotContains(t, l, "quarantined", "a run after the configuration was applied")
	}
	p.stop(t)
}
