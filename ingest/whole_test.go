package ingest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/metering"
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

// Groups of batches are written to PostgreSQL concurrently: a group holding a
// refused batch is written again batch by batch, and the report adds up.
func TestGroupsWrittenConcurrentlyAddUp(t *testing.T) {
	ctx := context.Background()
	st := storetest.Start(t, storetest.Options{Now: now, HotBatchRows: 10}, meterstore.TableSpec{Name: "readings_versions"}.MustBuild())
	dir := t.TempDir()
	var malos []string
	for base := 1000000000; len(malos) < 8; base++ {
		for d := 0; d < 10; d++ {
			if m, err := metering.ParseMaloID(fmt.Sprintf("%d%d", base, d)); err == nil {
				malos = append(malos, m.String())
				break
			}
		}
	}
	stored := quarterHours(malos[5], hotDay, 4, "20260319000001", func(int) string { return "5" })[3]
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, dir, "first.csv", header, stored))
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())

	// Eight batches of four rows: groups of two batches, the sixth batch
	// restating the stored value in its last row.
	lines := []string{header}
	for _, m := range malos {
		lines = append(lines, quarterHours(m, hotDay, 4, "20260319000001", func(int) string { return "1" })...)
	}
	rep, err = ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, dir, "many.csv", lines...))
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1, rep.String())
	require.Contains(t, rep.Refused[0].Error(), "malo_id "+malos[5])
	require.Equal(t, 8, rep.Batches)
	require.Equal(t, 28, rep.Rows)
	require.Equal(t, 28, rep.HotRows)
	require.Equal(t, 28, rep.Inserted)
	require.Equal(t, 28, rep.Stamped)
	require.Equal(t, int64(29), scalar(t, st, "SELECT count(*) FROM readings_versions"))
}

// Two groups holding one channel go in file order: the first operator's
// delivery is stored and the second's refused, whatever the timing.
func TestGroupsSharingAChannelGoInFileOrder(t *testing.T) {
	ctx := context.Background()
	st := storetest.Start(t, storetest.Options{Now: now, HotBatchRows: 4}, meterstore.TableSpec{Name: "readings_versions"}.MustBuild())
	dir := t.TempDir()
	lines := []string{header}
	lines = append(lines, quarterHours(maloA, hotDay, 4, "20260319000001", func(int) string { return "1" })...)
	for _, l := range quarterHours(maloA, hotDay, 4, "20260319000001", func(int) string { return "2" }) {
		lines = append(lines, strings.Replace(l, op, "9900000000003", 1))
	}
	for i := 0; i < 5; i++ {
		rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, dir, fmt.Sprintf("two%d.csv", i), lines...))
		require.NoError(t, err)
		require.Len(t, rep.Refused, 1, rep.String())
		require.Contains(t, rep.Refused[0].Error(), "version_scope 9900000000003:")
		require.ErrorIs(t, rep.Refused[0], meterstore.ErrConflict)
	}
	require.Equal(t, "4.000000", decimalOf(t, scalar(t, st, "SELECT sum(value) FROM readings")))
}
