package soak

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/require"
)

// TestSlowWarehouseDelaysFileIO: while installed, the IO iceberg-go opens for
// a file:// location waits the fault's delay before each operation (and not
// when the delay is zero); restored, it is iceberg-go's own again.
func TestSlowWarehouseDelaysFileIO(t *testing.T) {
	ctx := context.Background()
	loc := "file://" + filepath.Join(t.TempDir(), "f")
	var s slowWarehouse
	restore := s.install()
	fsys, err := iceio.LoadFS(ctx, nil, loc)
	require.NoError(t, err)
	wfs, ok := fsys.(iceio.WriteFileIO)
	require.True(t, ok, "the slow IO still writes")
	s.delay.Store(int64(100 * time.Millisecond))
	t0 := time.Now()
	require.NoError(t, wfs.WriteFile(loc, []byte("x")))
	_, err = wfs.Open(loc)
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(t0), 200*time.Millisecond)
	s.delay.Store(0)
	t0 = time.Now()
	require.NoError(t, wfs.Remove(loc))
	require.Less(t, time.Since(t0), 100*time.Millisecond)

	restore()
	fsys, err = iceio.LoadFS(ctx, nil, loc)
	require.NoError(t, err)
	require.IsType(t, iceio.LocalFS{}, fsys)
}
