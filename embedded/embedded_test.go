package embedded_test

import (
	"context"
	"testing"

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
