package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// On the embedded default, msql serve keeps working when the shell that
// started the embedded PostgreSQL quits: processes sharing MSQL_HOME share one
// PostgreSQL, and it runs while any of them does. On main every query then
// failed with "connection refused" for good. The last process to quit stops
// it, and msql stop refuses while one uses it.
func TestServeOutlivesTheShellThatStartedPostgres(t *testing.T) {
	home := t.TempDir()
	env := []string{"MSQL_HOME=" + filepath.Join(home, "msql"), "HOME=" + home}
	r := msqlEnv(t, env, "", "demo", "--no-shell", "--malos", "4", "--days", "8", "--minute-share", "0")
	require.Equal(t, 0, r.code, r.stderr)

	// The shell: it starts the embedded PostgreSQL and waits for its script on stdin.
	sh := exec.Command(msqlBin, "--format", "csv")
	sh.Env = append(os.Environ(), env...)
	stdin, err := sh.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, sh.Start())
	t.Cleanup(func() { _ = sh.Process.Kill() })
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(home, "msql", "pg", "postmaster.pid"))
		return err == nil
	}, 2*time.Minute, 100*time.Millisecond, "the shell starts the embedded PostgreSQL")

	srv := startServe(t, env, "serve")
	ctx := context.Background()
	count := func() (int64, error) {
		conn, err := pgx.Connect(ctx, srv.dsn("msql", ""))
		if err != nil {
			return 0, err
		}
		defer conn.Close(ctx)
		var n int64
		err = conn.QueryRow(ctx, "SELECT count(*) FROM readings").Scan(&n)
		return n, err
	}
	before, err := count()
	require.NoError(t, err)
	require.Positive(t, before)

	_, err = stdin.Write([]byte("SELECT 1 AS one;\n"))
	require.NoError(t, err)
	require.NoError(t, stdin.Close())
	require.NoError(t, sh.Wait(), "the shell quits cleanly")

	after, err := count()
	require.NoError(t, err, "msql serve lost its PostgreSQL when the shell that started it quit")
	require.Equal(t, before, after)

	r = msqlEnv(t, env, "", "stop")
	require.NotEqual(t, 0, r.code, "msql stop refuses while msql serve uses the PostgreSQL")
	require.Contains(t, r.stderr, "in use")
	require.Contains(t, r.stderr, "(msql serve", "msql stop names the process that holds the PostgreSQL")
	srv.stop(t)
	r = msqlEnv(t, env, "", "status")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "not running", "the last process using the PostgreSQL stopped it")
}
