package catalog

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWrittenFilesKnownAsTheirFootersSay: what planning knows of the files
// this table wrote — archived windows, late corrections, compaction outputs —
// without opening them (rememberWritten, from the footer as written) is what
// a fresh handle reads from their footers: field ids, the stored
// balancing_day and the compactor's marks.
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
	for _, f := range written {
		require.True(t, f.FieldIDs, f.Path)
		require.True(t, f.BalancingDay, f.Path)
		require.True(t, known[f.Path], "%s was known from its writing", f.Path)
		if f.KeysUnique || f.Superseded {
			marked++
		}
	}
	require.Positive(t, marked, "compaction outputs carry their marks")
}
