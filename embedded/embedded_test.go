package embedded_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/embedded"
)

// TestOpenReusesAndStops: the first Open starts the cluster, a second one
// reuses it (same DSN) and leaves it running on Close; the first one's Close
// stops it, after which Find says it is not running.
func TestOpenReusesAndStops(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	_, err := embedded.Find(home)
	require.ErrorIs(t, err, embedded.ErrNotRunning)

	first, err := embedded.Open(ctx, embedded.Options{Home: home, Throwaway: true})
	require.NoError(t, err)
	require.True(t, first.Started)
	require.Equal(t, "file://"+home+"/warehouse", first.Warehouse)

	second, err := embedded.Open(ctx, embedded.Options{Home: home})
	require.NoError(t, err)
	require.False(t, second.Started)
	require.Equal(t, first.DSN, second.DSN)
	require.NoError(t, second.Close())
	found, err := embedded.Find(home)
	require.NoError(t, err, "closing the reusing handle stopped the cluster")
	require.Equal(t, first.DSN, found.DSN)

	require.NoError(t, first.Close())
	_, err = embedded.Find(home)
	require.ErrorIs(t, err, embedded.ErrNotRunning)
}

// TestClusterOutlivesItsStarter: processes sharing a home share one cluster,
// and it runs as long as any of them uses it — whoever started it. The
// starter closing first leaves it running for the other; the last one out
// stops it.
func TestClusterOutlivesItsStarter(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	starter, err := embedded.Open(ctx, embedded.Options{Home: home, Throwaway: true})
	require.NoError(t, err)
	require.True(t, starter.Started)
	user, err := embedded.Open(ctx, embedded.Options{Home: home})
	require.NoError(t, err)
	require.False(t, user.Started)

	require.NoError(t, starter.Close())
	conn, err := pgx.Connect(ctx, user.DSN)
	require.NoError(t, err, "the starter's Close stopped the cluster another process was using")
	var one int
	require.NoError(t, conn.QueryRow(ctx, "SELECT 1").Scan(&one))
	require.NoError(t, conn.Close(ctx))

	require.NoError(t, user.Close())
	_, err = embedded.Find(home)
	require.ErrorIs(t, err, embedded.ErrNotRunning, "the last user's Close stops the cluster")
}

// Stop refuses a cluster in use and names who uses it — pid and command line —
// so the user knows what to quit; once that user closes, its name is gone and
// Stop stops the cluster.
func TestStopNamesTheProcessesUsingIt(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	user, err := embedded.Open(ctx, embedded.Options{Home: home, Throwaway: true, KeepRunning: true})
	require.NoError(t, err)
	t.Cleanup(func() { // a failed check leaves no cluster running
		_ = user.Close()
		_ = embedded.Stop(ctx, home)
	})
	err = embedded.Stop(ctx, home)
	require.ErrorIs(t, err, embedded.ErrInUse)
	require.Contains(t, err.Error(), fmt.Sprintf("pid %d (%s", os.Getpid(), filepath.Base(os.Args[0])))

	require.NoError(t, user.Close())
	entries, err := os.ReadDir(filepath.Join(home, "pg.users.d"))
	require.NoError(t, err)
	require.Empty(t, entries, "a closed user's name is removed")
	require.NoError(t, embedded.Stop(ctx, home))
	_, err = embedded.Find(home)
	require.ErrorIs(t, err, embedded.ErrNotRunning)
}
