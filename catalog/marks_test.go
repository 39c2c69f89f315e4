package catalog

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/require"
)

// TestWrittenFilesKnownAsTheirFootersSay: what planning knows of the files
// this table wrote — archived windows, late corrections, compaction outputs —
// without opening them (rememberWritten, from the footer as written) is what
// a fresh handle reads from their footers: field ids, the stored
// balancing_day, the encoder's mark that it derived those days, and the
// compactor's marks.
func TestWrittenFilesKnownAsTheirFootersSay(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	mw := newMonthWorkload(t, 7)
	tb, err := e.cat.CreateTable(ctx, mw.cfg)
	require.NoError(t, err)
	mw.archive(t, tb)
	_, err = tb.Compact(ctx, CompactOptions{})
	require.NoError(t, err)

	known := map[string]bool{}
	tb.planMu.Lock()
	for loc := range tb.marks {
		known[LocalPath(loc)] = true
	}
	tb.planMu.Unlock()
	written, _, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	fresh, err := e.cat.Table(ctx, mw.cfg)
	require.NoError(t, err)
	read, _, err := fresh.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	require.Equal(t, read, written)
	var marked int
	fsys, err := tb.Iceberg().FS(ctx)
	require.NoError(t, err)
	for _, f := range written {
		require.True(t, f.FieldIDs, f.Path)
		require.True(t, f.BalancingDay, f.Path)
		require.False(t, f.UnderivedBalancingDay, f.Path)
		require.Equal(t, MarkBalancingDayDerived, footerValue(t, fsys, f.Path, MarkBalancingDay), "%s says the encoder derived its days", f.Path)
		require.True(t, known[f.Path], "%s was known from its writing", f.Path)
		if f.KeysUnique || f.Superseded {
			marked++
		}
	}
	require.Positive(t, marked, "compaction outputs carry their marks")
}

// footerValue is the value of key in the key-value metadata of the Parquet
// file at loc ("" when absent).
func footerValue(t *testing.T, fsys iceio.IO, loc, key string) string {
	t.Helper()
	f, err := fsys.Open(loc)
	require.NoError(t, err)
	defer f.Close()
	r, err := file.NewParquetReader(f)
	require.NoError(t, err)
	defer r.Close()
	if v := r.MetaData().KeyValueMetadata().FindValue(key); v != nil {
		return *v
	}
	return ""
}
