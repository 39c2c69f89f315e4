package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// coldRows joins readings with system.tables over pgwire: the rows below the
// watermark system.tables shows, and that watermark.
func coldRows(t *testing.T, conn *pgx.Conn) (time.Time, int64) {
	t.Helper()
	var wm time.Time
	var n int64
	err := conn.QueryRow(context.Background(), `SELECT s.watermark, count(*) FROM readings r
		JOIN system.tables s ON s."table" = 'readings' AND r."from" < s.watermark GROUP BY s.watermark`).Scan(&wm, &n)
	require.NoError(t, err, "the join of readings with system.tables returns a row")
	return wm, n
}

// shellCount is the shell's count of readings below wm.
func shellCount(t *testing.T, dep []string, wm time.Time) int64 {
	t.Helper()
	r := msql(t, "", append(dep, "--format", "csv", "-c",
		fmt.Sprintf(`SELECT count(*) AS n FROM readings WHERE "from" < TIMESTAMPTZ '%s'`, wm.UTC().Format(time.RFC3339)))...)
	require.Equal(t, 0, r.code, r.stderr)
	n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(r.stdout, "n\n")), 10, 64)
	require.NoError(t, err, r.stdout)
	return n
}

// archiveOneWindow moves the watermark one window on.
func archiveOneWindow(t *testing.T, dep []string) {
	t.Helper()
	r := msql(t, "", append([]string{"archive", "--max-windows", "1", "--now", "2030-01-01"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "archived ")
}

// waitWatermarkPast polls the join until system.tables shows a watermark after
// old, and returns it with its row count.
func waitWatermarkPast(t *testing.T, conn *pgx.Conn, old time.Time, what string) (time.Time, int64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		wm, n := coldRows(t, conn)
		if wm.After(old) {
			return wm, n
		}
		if time.Now().After(deadline) {
			t.Fatalf("system.tables still shows the watermark %s a minute after %s", wm, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// msql serve fills the system tables at start and refreshes them on SIGHUP
// and every --system-refresh, as the shell does at start and on .refresh: a
// join of readings with system.tables over pgwire counts the rows below the
// watermark the shell counts.
func TestServeSystemTablesOverPgwire(t *testing.T) {
	dep := tinyDemo(t)
	home := t.TempDir()
	env := []string{"MSQL_HOME=" + filepath.Join(home, "msql"), "HOME=" + home}

	t.Run("at start and on SIGHUP", func(t *testing.T) {
		srv := startServe(t, env, append([]string{"serve", "--system-refresh", "0"}, dep...)...)
		conn := srv.connect(t, "analyst", "")
		wm, n := coldRows(t, conn)
		require.Positive(t, n)
		require.Equal(t, shellCount(t, dep, wm), n)

		archiveOneWindow(t, dep)
		time.Sleep(2 * time.Second)
		same, _ := coldRows(t, conn)
		require.True(t, same.Equal(wm), "with --system-refresh 0 only SIGHUP refreshes")
		require.NoError(t, srv.cmd.Process.Signal(syscall.SIGHUP))
		moved, n := waitWatermarkPast(t, conn, wm, "SIGHUP")
		require.Equal(t, shellCount(t, dep, moved), n)
		require.NoError(t, conn.Close(context.Background()))
		require.Contains(t, srv.stop(t), "system tables refreshed")
	})

	t.Run("every --system-refresh", func(t *testing.T) {
		srv := startServe(t, env, append([]string{"serve", "--system-refresh", "1s"}, dep...)...)
		conn := srv.connect(t, "analyst", "")
		wm, _ := coldRows(t, conn)
		archiveOneWindow(t, dep)
		moved, n := waitWatermarkPast(t, conn, wm, "the archival")
		require.Equal(t, shellCount(t, dep, moved), n)
		require.NoError(t, conn.Close(context.Background()))
		srv.stop(t)
	})
}
