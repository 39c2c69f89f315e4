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
		require.True(t, f.NamesAsIDs, f.Path)
		require.True(t, f.BalancingDay, f.Path)
		require.False(t, f.UnderivedBalancingDay, f.Path)
		require.Equal(t, MarkBalancingDayDerived, footerValue(t, fsys, f.Path, MarkBalancingDay), "%s says the encoder derived its days", f.Path)
		require.False(t, f.UncheckedUnitPairs, f.Path)
		require.Equal(t, MarkUnitPairsChecked, footerValue(t, fsys, f.Path, MarkUnitPairs), "%s says the encoder checked its unit pairs", f.Path)
		require.True(t, known[f.Path], "%s was known from its writing", f.Path)
		if f.KeysUnique || f.Superseded {
			marked++
		}
	}
	require.Positive(t, marked, "compaction outputs carry their marks")
}

// TestUnitPairMarkOnlyWhenEveryRowPasses: the encoder refuses no row for its
// unit pair (the write paths decide), but a file holding a row whose Sparte
// cannot have its unit — electricity in m³, as archival copies it from a
// table created before the hot tier's CHECK — is written without
// MarkUnitPairs, so msql verify reads it; the files of the same write whose
// rows all pass carry it, the next file of the same writer (its batch reused)
// included.
func TestUnitPairMarkOnlyWhenEveryRowPasses(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	rows := genRows(day0, 2000, opA, 1)
	wrong := &rows[1000] // in the middle of the first malo's file, not in its first batch
	wrong.Unit = "M3"
	files := writeFilePerMalo(t, tb, rows)
	fsys, err := tb.Iceberg().FS(ctx)
	require.NoError(t, err)
	var unmarked []string
	for _, f := range files {
		got := fileRows(t, tb, f.FilePath())
		m, err := readMarks(fsys, f.FilePath(), tb.Config())
		require.NoError(t, err)
		tb.planMu.Lock()
		remembered := tb.marks[f.FilePath()]
		tb.planMu.Unlock()
		require.Equal(t, m, remembered, "planning knows the marks the footer was written with")
		if !m.unitPairsChecked {
			unmarked = append(unmarked, got[0].MaloID)
			require.Empty(t, footerValue(t, fsys, f.FilePath(), MarkUnitPairs))
		}
	}
	require.Equal(t, []string{wrong.MaloID}, unmarked, "only the file holding STROM in M3 goes without the mark")
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
