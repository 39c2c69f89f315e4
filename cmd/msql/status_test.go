package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/embedded"
)

// TestStatusNamesTheEmbeddedDefault: msql status names the embedded
// default's DSN and warehouse — the DSN a job connects with — only while its
// PostgreSQL runs, and starts nothing itself.
func TestStatusNamesTheEmbeddedDefault(t *testing.T) {
	home := filepath.Join(t.TempDir(), "msql")

	r := msql(t, "", "status", "--home", home)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "postgres:  not running")
	r = msql(t, "", "status", "--env", "--home", home)
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "not running")
	_, err := embedded.Find(home)
	require.ErrorIs(t, err, embedded.ErrNotRunning, "status started the cluster")

	ctx := context.Background()
	d, err := embedded.Open(ctx, embedded.Options{Home: home, Throwaway: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })

	r = msql(t, "", "status", "--env", "--home", home)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "MSQL_DSN='"+d.DSN+"'\nMSQL_WAREHOUSE='file://"+home+"/warehouse'\n", r.stdout)
	dsn := strings.Trim(strings.TrimPrefix(strings.Split(r.stdout, "\n")[0], "MSQL_DSN="), "'")
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err, "the printed DSN connects")
	var one int
	require.NoError(t, conn.QueryRow(ctx, "SELECT 1").Scan(&one))
	require.NoError(t, conn.Close(ctx))
}

// TestStatusOfADeployment: with --dsn and --warehouse, status connects and
// prints both, the password redacted unless --env asks for the DSN to use.
func TestStatusOfADeployment(t *testing.T) {
	dep := deploymentArgs(t)
	r := msql(t, "", append([]string{"status"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "postgres:  "+redact(dep[1])+" (reachable)")
	require.Contains(t, r.stdout, "warehouse: "+dep[3])
	r = msql(t, "", append([]string{"status", "--env"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "MSQL_DSN='"+dep[1]+"'\nMSQL_WAREHOUSE='"+dep[3]+"'\n", r.stdout)
}
