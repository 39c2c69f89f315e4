package ingest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/internal/pglock"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/testkit/storetest"
)

const maloC = "10000000017"

// earlyWrites records the rows read when each write during a read began.
func earlyWrites(t *testing.T) func() []int {
	var mu sync.Mutex
	var seen []int
	ingest.SetEarlyWriteHook(t, func(rowsRead int) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, rowsRead)
	})
	return func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), seen...)
	}
}

// importThreeChannels imports a day's file of three channels of eight
// quarter-hours each (24 rows) into a store writing hotBatchRows rows a
// transaction (0: the default), and returns the report and the rows read as
// each write during the read began.
func importThreeChannels(t *testing.T, hotBatchRows int) (*storetest.Store, ingest.Report, []int) {
	ctx := context.Background()
	st := storetest.Start(t, storetest.Options{Now: now, HotBatchRows: hotBatchRows}, meterstore.TableSpec{Name: "readings_versions"}.MustBuild())
	seen := earlyWrites(t)
	one := func(int) string { return "1" }
	lines := []string{header}
	for _, m := range []string{maloA, maloB, maloC} {
		lines = append(lines, quarterHours(m, hotDay, 8, "20260319000001", one)...)
	}
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, t.TempDir(), "day.csv", lines...))
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())
	return st, rep, seen()
}

// A channel's batch is written once its last row is read, while the rest of
// the file is still being read; the report adds up as if written after.
func TestCompleteChannelsWrittenWhileTheFileIsRead(t *testing.T) {
	st, rep, seen := importThreeChannels(t, 8)
	require.Equal(t, 3, rep.Batches)
	require.Equal(t, 24, rep.Rows)
	require.Equal(t, 24, rep.HotRows)
	require.Equal(t, 24, rep.Inserted)
	require.Equal(t, []int{8, 16, 24}, seen, "each channel's batch written as its eighth row is read")
	require.EqualValues(t, 24, scalar(t, st, `SELECT count(*) FROM readings`))
}

// A file of fewer rows than a hot transaction holds is still written while
// it is read: its complete batches go in chunks of an eighth of its rows
// (two writers, about four chunks each), not in one write once the read has
// ended.
func TestASmallFileIsWrittenWhileItIsRead(t *testing.T) {
	st, rep, seen := importThreeChannels(t, 0)
	require.Equal(t, 24, rep.HotRows)
	require.Equal(t, 24, rep.Inserted)
	require.Equal(t, []int{8, 16, 24}, seen, "each channel's 8 rows fill a chunk of 24/8 = 3 rows")
	require.EqualValues(t, 24, scalar(t, st, `SELECT count(*) FROM readings`))
}

// A channel whose rows are split across the file is complete only at its
// last row: its bad last row refuses all of it, though the channels between
// were written while the file was read.
func TestChannelSplitAcrossTheFileStaysWhole(t *testing.T) {
	ctx := context.Background()
	st := storetest.Start(t, storetest.Options{Now: now, HotBatchRows: 4}, meterstore.TableSpec{Name: "readings_versions"}.MustBuild())
	seen := earlyWrites(t)
	one := func(int) string { return "1" }
	a := quarterHours(maloA, hotDay, 8, "20260319000001", one)
	a[7] = strings.Replace(a[7], ",1,KWH", ",1e3,KWH", 1)
	lines := append([]string{header}, a[:4]...)
	lines = append(lines, quarterHours(maloB, hotDay, 4, "20260319000001", one)...)
	lines = append(lines, quarterHours(maloC, hotDay, 4, "20260319000001", one)...)
	lines = append(lines, a[4:]...)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, t.TempDir(), "split.csv", lines...))
	require.NoError(t, err)
	require.Equal(t, 3, rep.Batches)
	require.Len(t, rep.Refused, 1, rep.String())
	require.Equal(t, "row 16, column value", rep.Refused[0].Where)
	require.Equal(t, 8, rep.Refused[0].Rows)
	require.ErrorIs(t, rep.Refused[0], metering.ErrInvalid)
	require.Equal(t, 8, rep.Rows)
	require.Equal(t, 8, rep.Inserted)
	require.Equal(t, []int{8, 12}, seen())
	require.EqualValues(t, 0, scalar(t, st, `SELECT count(*) FROM readings WHERE malo_id = $1`, maloA))
	require.EqualValues(t, 8, scalar(t, st, `SELECT count(*) FROM readings`))
}

// A row that stops the read of a file (a timestamp without an offset) after
// batches were written says so, and the report counts what went in.
func TestFileRefusedAfterEarlyWritesSaysWhatWentIn(t *testing.T) {
	ctx := context.Background()
	st := storetest.Start(t, storetest.Options{Now: now, HotBatchRows: 4}, meterstore.TableSpec{Name: "readings_versions"}.MustBuild())
	one := func(int) string { return "1" }
	lines := append([]string{header}, quarterHours(maloA, hotDay, 4, "20260319000001", one)...)
	lines = append(lines, maloB+","+obisIn+",STROM,2026-03-18 01:00:00,2026-03-18 01:15:00,1.5,KWH,MEASURED,20260319000001,"+op)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, t.TempDir(), "naive.csv", lines...))
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1, rep.String())
	require.ErrorIs(t, rep.Refused[0], ingest.ErrNaiveTimestamp)
	require.Contains(t, rep.Refused[0].Error(), "row 5, column from")
	require.Contains(t, rep.Refused[0].Error(), "the 1 batches (4 rows) complete before that row were written")
	require.Equal(t, 2, rep.Batches)
	require.Equal(t, 4, rep.Rows)
	require.Equal(t, 4, rep.Inserted)
	require.EqualValues(t, 4, scalar(t, st, `SELECT count(*) FROM readings`))
}

// A channel spelled two ways in one file — OBIS 1-0:1.29.0 and 1-0:01.29.0,
// one code to the parser — is one channel to the early writer too: its
// batches are written in the file's order, as the write after the read writes
// them. Here the first operator's quarter-hours, the second operator's same
// quarter-hours spelled the other way, then one more row of the first
// operator's batch: the first batch stands and the second operator's is
// refused (one operator per reading), whichever spelling ends first.
func TestAChannelSpelledTwoWaysIsWrittenInFileOrder(t *testing.T) {
	ctx := context.Background()
	st := storetest.Start(t, storetest.Options{Now: now, HotBatchRows: 4}, meterstore.TableSpec{Name: "readings_versions"}.MustBuild())
	one := func(int) string { return "1" }
	lines := append([]string{header}, quarterHours(maloA, hotDay, 4, "20260319000001", one)...)
	for _, l := range quarterHours(maloA, hotDay, 4, "20260319000001", func(int) string { return "2" }) {
		l = strings.Replace(l, op, "9900000000003", 1)
		lines = append(lines, strings.Replace(l, obisIn, "1-0:01.29.0", 1))
	}
	lines = append(lines, quarterHours(maloA, hotDay.Add(time.Hour), 1, "20260319000001", one)...)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, t.TempDir(), "spelled.csv", lines...))
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1, rep.String())
	require.Contains(t, rep.Refused[0].Error(), "version_scope 9900000000003:")
	require.ErrorIs(t, rep.Refused[0], meterstore.ErrConflict)
	require.Equal(t, 5, rep.Inserted)
	require.Equal(t, "5.000000", decimalOf(t, scalar(t, st, "SELECT sum(value) FROM readings")))
}

// holdLane holds, in a transaction of its own until the test ends or it is
// rolled back, the advisory-lock buckets (hot.LockBucket) of the lane of
// malo's channel: every bucket of that parity.
func holdLane(t *testing.T, st *storetest.Store, malo string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	holder, err := st.Pool.Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { holder.Rollback(ctx) }) //nolint:errcheck
	lane := hot.LockBucket(malo, obisIn) % 2
	_, err = holder.Exec(ctx, `SELECT count(pg_advisory_xact_lock($1::int4, b)) FROM generate_series($2::int4, 63, 2) AS b`,
		int32(pglock.Key("readings:readings_versions")), int32(lane))
	require.NoError(t, err)
	return holder
}

// The early writer's two writers take channels of disjoint advisory-lock
// buckets: while another transaction holds the buckets of maloA's and
// maloB's lane, maloC's channel, in the other lane, is written — it does not
// queue behind their writes — and once the holder lets go the rest goes in.
func TestTheEarlyWritersLanesDoNotWaitForEachOther(t *testing.T) {
	ctx := context.Background()
	st := storetest.Start(t, storetest.Options{Now: now, HotBatchRows: 8}, meterstore.TableSpec{Name: "readings_versions"}.MustBuild())
	require.Equal(t, hot.LockBucket(maloA, obisIn)%2, hot.LockBucket(maloB, obisIn)%2, "maloA and maloB share a lane")
	require.NotEqual(t, hot.LockBucket(maloA, obisIn)%2, hot.LockBucket(maloC, obisIn)%2, "maloC is in the other lane")
	holder := holdLane(t, st, maloA)
	one := func(int) string { return "1" }
	lines := []string{header}
	for _, m := range []string{maloA, maloB, maloC} {
		lines = append(lines, quarterHours(m, hotDay, 8, "20260319000001", one)...)
	}
	type result struct {
		rep ingest.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, t.TempDir(), "lanes.csv", lines...))
		done <- result{rep, err}
	}()
	stored := func(malo string) int64 {
		var n int64
		require.NoError(t, st.Pool.QueryRow(ctx, `SELECT count(*) FROM readings_versions WHERE malo_id = $1`, malo).Scan(&n))
		return n
	}
	require.Eventually(t, func() bool { return stored(maloC) == 8 }, time.Minute, 10*time.Millisecond,
		"maloC's channel is written while the other lane's buckets are held")
	require.Zero(t, stored(maloA), "maloA's write waits for its lane's buckets")
	require.NoError(t, holder.Rollback(ctx))
	r := <-done
	require.NoError(t, r.err)
	require.True(t, r.rep.OK(), r.rep.String())
	require.Equal(t, 24, r.rep.Inserted)
	require.EqualValues(t, 24, scalar(t, st, `SELECT count(*) FROM readings`))
}

// The hot tier's rules hold for batches written in lanes side by side: a
// restatement (a stored version delivered again with another value, maloC in
// one lane) and a second operator for a stored reading (maloA, the other
// lane) are refused, each naming its batch and refusing all of it — maloC's
// later rows of the same batch too — while maloA's batch that breaks no rule
// goes in.
func TestRulesHoldAcrossTheEarlyWritersLanes(t *testing.T) {
	ctx := context.Background()
	st := storetest.Start(t, storetest.Options{Now: now, HotBatchRows: 8}, meterstore.TableSpec{Name: "readings_versions"}.MustBuild())
	one := func(int) string { return "1" }
	first := append([]string{header}, quarterHours(maloA, hotDay, 8, "20260319000001", one)...)
	first = append(first, quarterHours(maloC, hotDay, 8, "20260319000001", one)...)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, t.TempDir(), "first.csv", first...))
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())

	lines := append([]string{header}, quarterHours(maloA, hotDay.Add(2*time.Hour), 8, "20260319000001", one)...)
	lines = append(lines, quarterHours(maloC, hotDay, 8, "20260319000001", func(int) string { return "2" })...)
	for _, l := range quarterHours(maloA, hotDay, 8, "20260319000002", one) {
		lines = append(lines, strings.Replace(l, op, "9900000000003", 1))
	}
	lines = append(lines, quarterHours(maloC, hotDay.Add(2*time.Hour), 8, "20260319000001", one)...)
	rep, err = ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, t.TempDir(), "second.csv", lines...))
	require.NoError(t, err)
	require.Len(t, rep.Refused, 2, rep.String())
	var restated *hot.RestatementError
	var second *hot.SecondOperatorError
	for _, r := range rep.Refused {
		require.ErrorIs(t, r, meterstore.ErrConflict)
		switch {
		case errors.As(r, &restated):
			require.Equal(t, maloC, restated.Offered.MaloID, "maloC's version 1 with value 2 is a restatement")
			require.Equal(t, 16, r.Rows, "the whole batch: the restated hours and the later ones")
		case errors.As(r, &second):
			require.Contains(t, r.Error(), "malo_id "+maloA+", obis_code "+obisIn+", version_scope 9900000000003:", "a second operator for maloA's quarter-hours")
		default:
			t.Fatalf("refused for another reason: %v", r)
		}
	}
	require.NotNil(t, restated)
	require.NotNil(t, second)
	require.Equal(t, 8, rep.Inserted, "maloA's later two hours from the first operator")
	require.EqualValues(t, 24, scalar(t, st, `SELECT count(*) FROM readings`))
	require.Equal(t, "24.000000", decimalOf(t, scalar(t, st, "SELECT sum(value) FROM readings")))
}
