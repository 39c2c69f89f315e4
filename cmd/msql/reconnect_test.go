package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/testrig/faultproxy"
)

// TestServeOutlivesPostgreSQLGoingAway: msql serve whose PostgreSQL goes away
// answers /readyz 503 naming PostgreSQL and since when, and once PostgreSQL is back /readyz
// is 200 again and a client's next statement on its open connection answers —
// without restarting serve.
func TestServeOutlivesPostgreSQLGoingAway(t *testing.T) {
	dep := tinyDemo(t)
	dsn, warehouse := dep[1], dep[3]
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	proxy, err := faultproxy.Start(u.Host)
	require.NoError(t, err)
	t.Cleanup(proxy.Close)
	u.Host = proxy.Addr()
	config := filepath.Join(t.TempDir(), "meterstore.toml")
	require.NoError(t, os.WriteFile(config, fmt.Appendf(nil, `[hot]
url = %q
[cold]
warehouse = %q
[[tables]]
name = "readings_versions"
extra_columns = [{ name = "tenant", identity = true }]
`, u.String(), warehouse), 0o600))

	health, pgAddr := freeAddr(t), freeAddr(t)
	srv := startMsql(t, "serve", "--config", config, "--pgwire", pgAddr, "--health", health)
	ready := func() bool { code, _ := httpStatus("http://" + health + "/readyz"); return code == 200 }
	srv.await(t, "/readyz 200", ready)
	ctx := context.Background()
	host, port, _ := net.SplitHostPort(pgAddr)
	conn, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=x dbname=meterstore sslmode=disable", host, port))
	require.NoError(t, err)
	defer conn.Close(ctx)
	var before int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&before))

	down := time.Now().Truncate(time.Second)
	proxy.Down()
	var body string
	srv.await(t, "/readyz 503 naming PostgreSQL", func() bool {
		var code int
		code, body = httpStatus("http://" + health + "/readyz")
		return code == 503 && strings.Contains(body, "PostgreSQL")
	})
	// It says why and since when (RFC 3339): the first failed check, not
	// the latest one.
	m := regexp.MustCompile(`PostgreSQL unreachable since (\S+) `).FindStringSubmatch(body)
	require.NotNil(t, m, "/readyz: %s", body)
	since, err := time.Parse(time.RFC3339, m[1])
	require.NoError(t, err, "/readyz: %s", body)
	require.False(t, since.Before(down) || since.After(time.Now()), "since %s, taken down at %s", since, down)
	time.Sleep(1100 * time.Millisecond)
	_, again := httpStatus("http://" + health + "/readyz")
	require.Contains(t, again, "since "+m[1]+" ", "the same outage")
	// While it is away a statement fails as PostgreSQL's own "cannot connect
	// now" (57P03), which clients and poolers retry — not as an internal error.
	var during int64
	err = conn.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&during)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "57P03", pgErr.Code, "%v", err)
	require.NoError(t, proxy.Up())
	srv.await(t, "/readyz 200 again", ready)
	var after int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&after), "the first statement after PostgreSQL is back")
	require.Equal(t, before, after)
}
