package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// TestServeLimitsFromConfiguration: msql serve takes its limits from the
// configuration's [serve] section, a flag given on the command line
// overrides its key, and --help names the section.
func TestServeLimitsFromConfiguration(t *testing.T) {
	dep := tinyDemo(t)
	config := filepath.Join(t.TempDir(), "meterstore.toml")
	require.NoError(t, os.WriteFile(config, fmt.Appendf(nil, `[hot]
url = %q
[cold]
warehouse = %q
[[tables]]
name = "readings_versions"
extra_columns = [{ name = "tenant", identity = true }]
[serve]
max_result_rows = 5
statement_timeout = "1s"
`, dep[1], dep[3]), 0o600))
	home := t.TempDir()
	env := []string{"MSQL_HOME=" + filepath.Join(home, "msql"), "HOME=" + home}
	ctx := context.Background()
	refused := func(t *testing.T, srv *served, q string) *pgconn.PgError {
		t.Helper()
		conn := srv.connect(t, "analyst", "")
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
		}
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe, "%s: %v", q, err)
		return pe
	}
	const endless = `SELECT count(*) FROM range(100000000) a(i), range(100000000) b(j) WHERE i * j < -1`

	t.Run("from [serve]", func(t *testing.T) {
		srv := startServe(t, env, "serve", "--config", config)
		pe := refused(t, srv, `SELECT malo_id FROM readings`)
		require.Equal(t, "54000", pe.Code, pe.Message)
		require.Contains(t, pe.Message, "limit of 5 rows per statement (max_result_rows)")
		pe = refused(t, srv, endless)
		require.Equal(t, "57014", pe.Code, pe.Message)
		require.Contains(t, pe.Message, "statement timeout")
		srv.stop(t)
	})

	t.Run("a flag overrides its key", func(t *testing.T) {
		srv := startServe(t, env, "serve", "--config", config, "--max-result-rows", "7")
		pe := refused(t, srv, `SELECT malo_id FROM readings`)
		require.Contains(t, pe.Message, "limit of 7 rows per statement (max_result_rows)")
		srv.stop(t)
	})

	t.Run("--help", func(t *testing.T) {
		r := msql(t, "", "serve", "--help")
		require.Contains(t, r.stdout+r.stderr, "[serve]")
		require.Contains(t, r.stdout+r.stderr, "max_result_rows")
	})
}
