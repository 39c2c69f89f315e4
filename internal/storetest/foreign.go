package storetest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"meterstore/catalog"
)

// LoseWatermark puts a cold table in the state an out-of-band compaction and a
// later expiry leave: every data file is replaced by a byte-equal copy in one
// commit carrying no MeterStore snapshot property (what Spark or PyIceberg
// commit), then every older snapshot — each one MeterStore wrote, carrying
// the tiering watermark — is expired.
func LoseWatermark(t testing.TB, ctx context.Context, cold *catalog.Table) {
	t.Helper()
	require.NoError(t, cold.Refresh(ctx))
	files, _, err := cold.PlanFiles(ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var old, copies []string
	for _, f := range files {
		dst := filepath.Join(filepath.Dir(f.Path), "rewritten-"+filepath.Base(f.Path))
		copyFile(t, f.Path, dst)
		old, copies = append(old, "file://"+f.Path), append(copies, "file://"+dst)
	}
	tx := cold.Iceberg().NewTransaction()
	require.NoError(t, tx.ReplaceDataFiles(ctx, old, copies, nil))
	_, err = tx.Commit(ctx)
	require.NoError(t, err)
	require.NoError(t, cold.Refresh(ctx))
	_, err = cold.ExpireSnapshots(ctx, 0, 1, true)
	require.NoError(t, err)
}

func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.Create(dst)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}
