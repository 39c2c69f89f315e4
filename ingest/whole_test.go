package ingest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// A batch larger than one hot write transaction (store.Config.HotBatchRows)
// is still all or nothing: a restatement in its last rows leaves none of
// its earlier rows stored.
func TestLargeBatchIsWholeInTheHotTier(t *testing.T) {
	ctx := context.Background()
	st := storetest.Start(t, storetest.Options{Now: now, HotBatchRows: 10}, meterstore.TableSpec{Name: "readings_versions"}.MustBuild())
	dir := t.TempDir()
	stored := quarterHours(maloA, hotDay, 30, "20260319000001", func(int) string { return "5" })[25]
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, dir, "first.csv", header, stored))
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())

	// 30 rows of one batch at the same version, the 26th restating the stored
	// value: written in transactions of 10, the first 20 would have gone in.
	lines := append([]string{header}, quarterHours(maloA, hotDay, 30, "20260319000001", func(int) string { return "1" })...)
	rep, err = ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, dir, "large.csv", lines...))
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1, rep.String())
	require.ErrorIs(t, rep.Refused[0], meterstore.ErrConflict)
	require.Zero(t, rep.Rows)
	require.Equal(t, int64(1), scalar(t, st, "SELECT count(*) FROM readings_versions"), "nothing of the refused batch is stored")
}
