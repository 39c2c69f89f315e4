package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/internal/pglock"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/mscons"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// A late correction whose interval reaches above the watermark (a Berlin
// day's value, 23:00 to 23:00 UTC, across the UTC-midnight watermark) and
// quarter-hours of the same channel and version from the watermark, in two
// files of one import, overlap within one version: one of them is refused.
// The later delivery in file order is, whichever it is: the correction
// goes to Iceberg and the quarter-hours to PostgreSQL, and which commit comes
// first must not decide. A late correction of another channel (maloC) comes
// first in the import, so that the write to Iceberg has work before the
// day's value while the quarter-hours' lane has none.
func TestAnOverlapAcrossTheWatermarkRefusesTheLaterDelivery(t *testing.T) {
	for _, dayFirst := range []bool{true, false} {
		t.Run(map[bool]string{true: "day first", false: "quarter-hours first"}[dayFirst], func(t *testing.T) {
			ctx := context.Background()
			st := start(t, nil)
			w := historyToTheWatermark(t, st)
			dir := t.TempDir()
			day := writeFile(t, dir, "day.csv", header,
				maloB+","+obisIn+",STROM,2026-03-12T23:00:00Z,2026-03-13T23:00:00Z,24,KWH,MEASURED,20260314000001,"+op)
			quarters := writeFile(t, dir, "quarters.csv", append([]string{header},
				quarterHours(maloB, w, 4, "20260314000001", func(int) string { return "1" })...)...)
			corr := writeFile(t, dir, "corr.csv", append([]string{header},
				quarterHours(maloC, w.Add(-48*time.Hour), 96, "20260314000001", func(int) string { return "1" })...)...)
			files, later := []string{corr, day, quarters}, quarters
			if !dayFirst {
				files, later = []string{corr, quarters, day}, day
			}
			rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, files...)
			require.NoError(t, err)
			require.Len(t, rep.Refused, 1, rep.String())
			require.Equal(t, later, rep.Refused[0].File, "the later file's delivery is refused: %s", rep.String())
			require.ErrorIs(t, rep.Refused[0], meterstore.ErrConflict)
			require.Contains(t, rep.Refused[0].Error(), "[2026-03-12T23:00:00Z, 2026-03-13T23:00:00Z)", "it names the other delivery's interval")
		})
	}
}

// historyToTheWatermark imports three days of maloA's quarter-hours, 10 to 12
// March, which the bulk path takes, moving the watermark to 13 March where
// the settlement lag begins; it returns the watermark.
func historyToTheWatermark(t *testing.T, st *storetest.Store) time.Time {
	t.Helper()
	ctx := context.Background()
	hist := writeFile(t, t.TempDir(), "hist.csv", append([]string{header},
		quarterHours(maloA, time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), 3*96, "20260314000001", func(int) string { return "1" })...)...)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, hist)
	require.NoError(t, err)
	require.Equal(t, 3*96, rep.BulkRows, rep.String())
	w, err := st.Store.Tables()[0].Watermark(ctx)
	require.NoError(t, err)
	require.True(t, w.Equal(time.Date(2026, 3, 13, 0, 0, 0, 0, time.UTC)), "watermark %s", w)
	return w
}

// A batch the bulk history path does not take, read in the import whose
// bulk commit moves the watermark over its first rows, goes in as two
// halves at the watermark the commit set, each whole or refused alone: here
// its half from the watermark restates a stored PostgreSQL row and is
// refused, and the report counts the half below as readings holds it.
func TestABatchAcrossTheWatermarkTheBulkPathMovedGoesInAsTwoHalves(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	dir := t.TempDir()
	one := func(int) string { return "1" }
	stored := writeFile(t, dir, "stored.csv", append([]string{header},
		quarterHours(maloB, time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC), 1, "20260314000001", one)...)...)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, stored)
	require.NoError(t, err)
	require.Equal(t, 1, rep.HotRows, rep.String())

	lines := append([]string{header},
		quarterHours(maloA, time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), 3*96, "20260314000001", one)...)
	lines = append(lines, quarterHours(maloB, time.Date(2026, 3, 12, 23, 0, 0, 0, time.UTC), 4*24+5, "20260314000001",
		func(int) string { return "2" })...)
	rep, err = ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, dir, "both.csv", lines...))
	require.NoError(t, err)
	require.Equal(t, 3*96, rep.BulkRows, rep.String())
	w, err := st.Store.Tables()[0].Watermark(ctx)
	require.NoError(t, err)
	require.True(t, w.Equal(time.Date(2026, 3, 13, 0, 0, 0, 0, time.UTC)), "watermark %s", w)
	require.Len(t, rep.Refused, 1, rep.String())
	require.Contains(t, rep.Refused[0].Batch, "rows from the watermark 2026-03-13T00:00:00Z", rep.String())
	require.EqualValues(t, rep.ColdRows-rep.BulkRows, scalar(t, st, `SELECT count(*) FROM readings WHERE malo_id = $1 AND "from" < $2`, maloB, w),
		"the report counts what readings holds below the watermark: %s", rep.String())
	require.EqualValues(t, 4, rep.ColdRows-rep.BulkRows)
	require.EqualValues(t, 1, scalar(t, st, `SELECT count(*) FROM readings WHERE malo_id = $1 AND "from" >= $2`, maloB, w))
}

// maloInBucketOf is a MaLo-ID other than those given whose channel (obisIn)
// is in malo's advisory-lock bucket (hot.LockBucket).
func maloInBucketOf(t *testing.T, malo string, not ...string) string {
	t.Helper()
	want := hot.LockBucket(malo, obisIn)
	for n := 1_000_000_000; n < 1_000_100_000; n++ {
		for d := 0; d < 10; d++ {
			id := fmt.Sprintf("%d%d", n, d)
			if _, err := metering.ParseMaloID(id); err != nil || id == malo || slices.Contains(not, id) {
				continue
			}
			if hot.LockBucket(id, obisIn) == want {
				return id
			}
		}
	}
	t.Fatalf("no MaLo-ID in the bucket of %s", malo)
	return ""
}

// quarterHourDelivery is n quarter-hours of malo from from, each value v,
// under version.
func quarterHourDelivery(t *testing.T, malo string, from time.Time, n int, version, v string) metering.Delivery {
	t.Helper()
	m, err := metering.ParseMaloID(malo)
	require.NoError(t, err)
	obis, err := metering.ParseObis(obisIn)
	require.NoError(t, err)
	operator, err := metering.ParseBdewCode(op)
	require.NoError(t, err)
	ver, err := metering.ParseVersion(version)
	require.NoError(t, err)
	src, err := metering.SourceMscons(operator, "MS1")
	require.NoError(t, err)
	d := metering.Delivery{MaloID: m, Obis: obis, Sparte: metering.SparteStrom, Unit: metering.UnitKWh, Source: src,
		Scope: metering.ScopeFor(operator, from, metering.SparteStrom), Version: ver, RecordedAt: from.Add(24 * time.Hour)}
	for i := 0; i < n; i++ {
		f := from.Add(time.Duration(i) * 15 * time.Minute)
		iv, err := metering.NewInterval(f, f.Add(15*time.Minute), decimal.RequireFromString(v), metering.QualityMeasured)
		require.NoError(t, err)
		d.Intervals = append(d.Intervals, iv)
	}
	return d
}

// msconsMessages writes an interchange of one message per element of
// messages, each holding the deliveries given, one location group
// (NAD+DP, LOC+172 …) per delivery, in that order.
func msconsMessages(t *testing.T, messages ...[]metering.Delivery) string {
	t.Helper()
	var out []string
	for i, ds := range messages {
		var buf bytes.Buffer
		require.NoError(t, mscons.Write(&buf, ds, mscons.WriteOptions{LineBreaks: true}))
		segs := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		if i == 0 {
			out = append(out, segs[:2]...) // UNA, UNB
		}
		// mscons.Write wrote a message per delivery: UNH … UNS+D, the
		// location group, UNT. This message is the first one's header and
		// every one's location group.
		ref := strconv.Itoa(i + 1)
		var msg []string
		header, inBody := true, false
		for _, seg := range segs[2 : len(segs)-1] {
			switch {
			case strings.HasPrefix(seg, "UNT+"):
				header, inBody = false, false
			case seg == "UNS+D'":
				if header {
					msg = append(msg, seg)
				}
				inBody = true
			case header && strings.HasPrefix(seg, "UNH+1+"):
				msg = append(msg, "UNH+"+ref+strings.TrimPrefix(seg, "UNH+1"))
			case header && strings.HasPrefix(seg, "BGM+7+MS1+"):
				msg = append(msg, "BGM+7+MS"+ref+strings.TrimPrefix(seg, "BGM+7+MS1"))
			case header || inBody:
				msg = append(msg, seg)
			}
		}
		out = append(out, msg...)
		out = append(out, fmt.Sprintf("UNT+%d+%s'", len(msg)+1, ref))
	}
	out = append(out, fmt.Sprintf("UNZ+%d+MSTORE'", len(messages)))
	return strings.Join(out, "\n") + "\n"
}

// A message of several channels is written in the lane of its first
// channel, though it takes the advisory-lock buckets of the others, which
// may be the other lane's: two lanes then hold the same buckets at once. That
// costs the lanes their independence — one waits for the other, as before
// there were lanes — but not correctness: every write takes its buckets in
// ascending order, so two of them never deadlock, and each message is still
// written whole, refused whole, and refused for what it holds.
//
// Message 1 holds maloC then maloA, message 2 a channel in maloA's bucket
// then one in maloC's: they are in different lanes and take the same two
// buckets, first channel first in opposite orders. While a third
// transaction holds both buckets, nothing of either is written; once it lets
// go, both go in. A second interchange of the same shape restating maloA's
// stored value under its version is refused whole — maloC's new rows of
// that message too — naming message 1 and maloA, while message 2 goes in.
func TestAMessageOfSeveralChannelsInLanesThatShareBuckets(t *testing.T) {
	ctx := context.Background()
	st := storetest.Start(t, storetest.Options{Now: now}, meterstore.TableSpec{Name: "readings_versions"}.MustBuild())
	x := maloInBucketOf(t, maloA)
	y := maloInBucketOf(t, maloC, x)
	laneA, laneC := hot.LockBucket(maloA, obisIn)%2, hot.LockBucket(maloC, obisIn)%2
	require.NotEqual(t, laneA, laneC, "maloA and maloC are in different lanes")
	const version = "20260319000001"
	qh := func(malo string, from time.Time, v string) metering.Delivery {
		return quarterHourDelivery(t, malo, from, 4, version, v)
	}
	first := msconsMessages(t,
		[]metering.Delivery{qh(maloC, hotDay, "1"), qh(maloA, hotDay, "1")},
		[]metering.Delivery{qh(x, hotDay, "1"), qh(y, hotDay, "1")})

	holder, err := st.Pool.Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { holder.Rollback(ctx) }) //nolint:errcheck
	buckets := []int32{int32(hot.LockBucket(maloA, obisIn)), int32(hot.LockBucket(maloC, obisIn))}
	key := int32(pglock.Key("readings:readings_versions"))
	_, err = holder.Exec(ctx, `SELECT count(pg_advisory_xact_lock($1::int4, b)) FROM unnest($2::int4[]) AS b`, key, buckets)
	require.NoError(t, err)

	type result struct {
		rep ingest.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := ingest.Read(ctx, st.Store, ingest.Options{}, "first.edi", strings.NewReader(first))
		done <- result{rep, err}
	}()
	waiting := func() bool {
		var n int
		require.NoError(t, st.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n))
		return n == 2
	}
	require.Eventually(t, waiting, time.Minute, 10*time.Millisecond, "both messages' writes wait for the held buckets")
	var stored int
	require.NoError(t, st.Pool.QueryRow(ctx, `SELECT count(*) FROM readings_versions`).Scan(&stored))
	require.Zero(t, stored, "nothing of either message while they wait")
	require.NoError(t, holder.Rollback(ctx))
	select {
	case r := <-done:
		require.NoError(t, r.err)
		require.True(t, r.rep.OK(), r.rep.String())
		require.Equal(t, 16, r.rep.Inserted)
	case <-time.After(time.Minute):
		t.Fatal("the two lanes' writes of the same buckets did not finish")
	}

	second := msconsMessages(t,
		[]metering.Delivery{qh(maloC, hotDay.Add(time.Hour), "1"), qh(maloA, hotDay, "2")},
		[]metering.Delivery{qh(x, hotDay.Add(time.Hour), "1"), qh(y, hotDay.Add(time.Hour), "1")})
	rep, err := ingest.Read(ctx, st.Store, ingest.Options{}, "second.edi", strings.NewReader(second))
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1, rep.String())
	require.Equal(t, "message 1 (document MS1)", rep.Refused[0].Batch)
	require.Equal(t, 8, rep.Refused[0].Rows, "the whole message: maloA's restated rows and maloC's new ones")
	var restated *hot.RestatementError
	require.ErrorAs(t, rep.Refused[0], &restated)
	require.Equal(t, maloA, restated.Offered.MaloID)
	require.Equal(t, 8, rep.Inserted, "message 2")
	require.EqualValues(t, 24, scalar(t, st, `SELECT count(*) FROM readings`))
	require.EqualValues(t, 0, scalar(t, st, `SELECT count(*) FROM readings WHERE malo_id = $1 AND "from" >= $2`, maloC, hotDay.Add(time.Hour)))
}

// An import cancelled while one lane's write waits and the other lane's
// went in leaves every batch wholly in or wholly out: maloA's and maloB's
// lane waits for buckets another transaction holds, maloC's, in the other
// lane, is written; then the import's context is cancelled. maloC's batch
// is stored whole, maloA's and maloB's not at all, the import says it was
// cancelled, and its report counts what went in — so importing the same
// file again puts the rest in and counts maloC's rows as duplicates. For
// MSCONS (a message a batch, written after the read) and CSV (a channel's
// rows a batch, written while the file is read) alike.
func TestAnImportCancelledBetweenLanesLeavesEachBatchWholeOrOut(t *testing.T) {
	const version = "20260319000001"
	one := func(int) string { return "1" }
	for _, format := range []string{"mscons", "csv"} {
		t.Run(format, func(t *testing.T) {
			st := storetest.Start(t, storetest.Options{Now: now}, meterstore.TableSpec{Name: "readings_versions"}.MustBuild())
			var text string
			if format == "mscons" {
				text = msconsMessages(t,
					[]metering.Delivery{quarterHourDelivery(t, maloA, hotDay, 8, version, "1")},
					[]metering.Delivery{quarterHourDelivery(t, maloC, hotDay, 8, version, "1")},
					[]metering.Delivery{quarterHourDelivery(t, maloB, hotDay, 8, version, "1")})
			} else {
				lines := []string{header}
				for _, m := range []string{maloA, maloC, maloB} {
					lines = append(lines, quarterHours(m, hotDay, 8, version, one)...)
				}
				text = strings.Join(lines, "\n") + "\n"
			}
			path := writeFile(t, t.TempDir(), "day."+format, text)
			holder := holdLane(t, st, maloA)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type result struct {
				rep ingest.Report
				err error
			}
			done := make(chan result, 1)
			go func() {
				rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, path)
				done <- result{rep, err}
			}()
			stored := func(malo string) int64 {
				var n int64
				require.NoError(t, st.Pool.QueryRow(context.Background(), `SELECT count(*) FROM readings_versions WHERE malo_id = $1`, malo).Scan(&n))
				return n
			}
			require.Eventually(t, func() bool { return stored(maloC) == 8 }, time.Minute, 10*time.Millisecond,
				"maloC's batch, in the lane not held, is written")
			cancel()
			var r result
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the cancelled import did not return")
			}
			require.ErrorIs(t, r.err, context.Canceled)
			require.NoError(t, holder.Rollback(context.Background()))
			require.EqualValues(t, 8, stored(maloC))
			require.Zero(t, stored(maloA))
			require.Zero(t, stored(maloB))
			require.Equal(t, 8, r.rep.Inserted, r.rep.String())
			require.Equal(t, 8, r.rep.HotRows, r.rep.String())

			rep, err := ingest.Files(context.Background(), st.Store, ingest.Options{}, path)
			require.NoError(t, err)
			require.True(t, rep.OK(), rep.String())
			require.Equal(t, 16, rep.Inserted)
			require.Equal(t, 8, rep.Duplicate)
			require.EqualValues(t, 24, scalar(t, st, `SELECT count(*) FROM readings`))
		})
	}
}

// The bulk history path commits its batches before the routed write writes
// the rest, so a batch it takes would stand against an earlier batch of the
// same channel that it does not take. Here the earlier file's batch of maloB
// reaches past the bulk boundary (13 March) and the later file's — the same
// quarter-hours of the 12th under the same version with another value —
// lies below it: the later one is refused, naming the stored value of the
// earlier one, while maloA's history still goes in as one bulk commit; the
// later batch goes through the routed write, to Iceberg below the
// watermark that commit moved.
func TestTheBulkPathKeepsFileOrderWithinAChannel(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	dir := t.TempDir()
	const version = "20260314000001"
	from := time.Date(2026, 3, 12, 22, 0, 0, 0, time.UTC)
	hist := writeFile(t, dir, "hist.csv", append([]string{header},
		quarterHours(maloA, time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), 3*96, version, func(int) string { return "1" })...)...)
	first := writeFile(t, dir, "first.csv", append([]string{header},
		quarterHours(maloB, from, 12, version, func(int) string { return "1" })...)...)
	later := writeFile(t, dir, "later.csv", append([]string{header},
		quarterHours(maloB, from, 4, version, func(int) string { return "2" })...)...)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, hist, first, later)
	require.NoError(t, err)
	require.Equal(t, 3*96, rep.BulkRows, rep.String())
	require.Len(t, rep.Refused, 1, rep.String())
	require.Equal(t, later, rep.Refused[0].File, "the later file's batch is refused: %s", rep.String())
	require.ErrorIs(t, rep.Refused[0], meterstore.ErrConflict)
	require.Contains(t, rep.Refused[0].Error(), "stated as 1 KWH MEASURED", "it names the earlier delivery's value")
	require.Equal(t, "12.000000", decimalOf(t, scalar(t, st, `SELECT sum(value) FROM readings WHERE malo_id = $1`, maloB)))
}
