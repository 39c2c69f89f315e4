package engine_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// The tests below check that engine.Stream and engine.Rows are DuckDB streams:
// DuckDB computes rows as the consumer reads them. None asserts on time.

// bigResult is 20 M rows of 8 + 64 bytes: 1.44 GB of values.
const (
	bigRows   = 20_000_000
	bigResult = `SELECT i, repeat('x', 64) AS s FROM range(20000000) t(i)`
	bigBytes  = bigRows * (8 + 64)
)

func streamStore(t *testing.T) *storetest.Store {
	return streamStoreWith(t, storetest.Options{})
}

func streamStoreWith(t *testing.T, opt storetest.Options) *storetest.Store {
	w := testkit.NewWorkload(17)
	w.MaLos, w.Days = 2, 2
	return storetest.Start(t, opt, w.IntervalTable("readings_versions").MustBuild())
}

// rss is the process's resident set after handing the Go heap's free pages back,
// so that what remains above a baseline is DuckDB's.
func rss(t *testing.T) int64 {
	t.Helper()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// TestStreamMemoryBounded: a 1.44 GB result streams with the process growing by
// a few chunks, in the unrestricted and in a walled session database — and the
// same measurement sees duckdb-go's materialising path hold the whole result
// before its first row. DuckDB's own accounting (duckdb_memory()) cannot make
// this point: it does not count a query result's memory at all (it reads ~0
// while a materialised 1.44 GB result is held), so the process's resident set
// is measured instead; the Go heap is bounded by one batch and handed back first.
func TestStreamMemoryBounded(t *testing.T) {
	ctx := context.Background()
	st := streamStore(t)
	require.Greater(t, int64(bigBytes), int64(1<<30))
	for name, e := range map[string]*engine.Engine{"unrestricted": st.Engine, "walled": st.Engine.Walled()} {
		t.Run(name, func(t *testing.T) {
			before := rss(t)
			s, err := e.Stream(ctx, bigResult)
			require.NoError(t, err)
			defer s.Close()
			var rows int64
			for batch := 0; batch < 5; batch++ {
				require.True(t, s.Next(), "batch %d: %v", batch, s.Err())
				col := s.Record().Column(0).(*array.Int64)
				require.Equal(t, rows, col.Value(0), "rows arrive in order")
				rows += s.Record().NumRows()
			}
			grown := rss(t) - before
			t.Logf("%s: after %d of %d rows the process grew by %d MiB for a %d MiB result", name, rows, bigRows, grown>>20, bigBytes>>20)
			require.Less(t, grown, int64(100<<20), "DuckDB holds more than a few chunks of a streamed result")
			require.NoError(t, s.Close())
		})
	}

	// The measurement is not blind: duckdb-go's own path (the unrestricted DB
	// handle) materialises the result before the first row.
	before := rss(t)
	rows, err := st.Engine.DB().QueryContext(ctx, bigResult)
	require.NoError(t, err)
	defer rows.Close()
	require.True(t, rows.Next())
	var used int64
	require.NoError(t, st.Engine.DB().QueryRowContext(ctx, `SELECT coalesce(sum(memory_usage_bytes), 0)::BIGINT FROM duckdb_memory()`).Scan(&used))
	grown := rss(t) - before
	t.Logf("materialised: at the first row the process grew by %d MiB; duckdb_memory() reports %d MiB", grown>>20, used>>20)
	require.Greater(t, grown, int64(1<<30))
}

// tick registers a volatile scalar function tick(x) = x counting its calls, so a
// test sees how many rows DuckDB computed.
func tick(t *testing.T, e *engine.Engine) *atomic.Int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := e.DB().Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	bigint, err := duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
	require.NoError(t, err)
	var calls atomic.Int64
	require.NoError(t, duckdb.RegisterScalarUDF(conn, "tick", tickUDF{
		cfg: duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{bigint}, ResultTypeInfo: bigint, Volatile: true},
		ex: duckdb.ScalarFuncExecutor{RowExecutor: func(v []driver.Value) (any, error) {
			calls.Add(1)
			return v[0], nil
		}},
	}))
	return &calls
}

type tickUDF struct {
	cfg duckdb.ScalarFuncConfig
	ex  duckdb.ScalarFuncExecutor
}

func (u tickUDF) Config() duckdb.ScalarFuncConfig     { return u.cfg }
func (u tickUDF) Executor() duckdb.ScalarFuncExecutor { return u.ex }

// TestRowsCloseEarly: a consumer that stops after 10 rows of 100 M makes DuckDB
// compute a few chunks, not the rest, and nothing more once Close returned.
func TestRowsCloseEarly(t *testing.T) {
	ctx := context.Background()
	st := streamStore(t)
	calls := tick(t, st.Engine)
	rows, err := st.Engine.Rows(ctx, `SELECT tick(i) FROM range(100000000) t(i)`)
	require.NoError(t, err)
	for i := int64(0); i < 10; i++ {
		require.True(t, rows.Next(), "%v", rows.Err())
		var v int64
		require.NoError(t, rows.Scan(&v))
		require.Equal(t, i, v)
	}
	require.NoError(t, rows.Close())
	computed := calls.Load()
	t.Logf("10 rows read, %d computed of 100000000", computed)
	require.Less(t, computed, int64(1_000_000), "DuckDB computed far more than the consumer read")
	// Nothing runs on after Close: another statement, then the count again.
	res, err := st.Engine.Query(ctx, `SELECT count(*) FROM range(1000)`)
	require.NoError(t, err)
	require.EqualValues(t, 1000, res.Rows[0][0])
	require.Equal(t, computed, calls.Load(), "DuckDB went on computing after Close")
}

// TestStreamCancel: cancelling the context of a stream whose DuckDB is busy
// inside a fetch — a filter scanning 10¹² rows for one more match; without the
// interrupt the test would run for hours — stops DuckDB and ends the stream
// with the context's error, in both session databases.
func TestStreamCancel(t *testing.T) {
	st := streamStore(t)
	for name, e := range map[string]*engine.Engine{"unrestricted": st.Engine, "walled": st.Engine.Walled()} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rows, err := e.Rows(ctx, `SELECT i, repeat('x', 100) FROM range(1000000000000) t(i) WHERE i < 100000 OR i = 999999999999`)
			require.NoError(t, err)
			// DuckDB refills its stream buffer before it hands out a chunk, so a
			// fetch blocks somewhere in the first 100 000 rows, until the scan ends.
			time.AfterFunc(300*time.Millisecond, cancel)
			n := 0
			for rows.Next() {
				n++
			}
			t.Logf("%d rows read before the cancel", n)
			require.Less(t, n, 100001)
			require.ErrorIs(t, rows.Err(), context.Canceled)
			require.ErrorIs(t, rows.Close(), context.Canceled)
			// The connection is usable again: the interrupt did not outlive the statement.
			res, err := e.Query(context.Background(), `SELECT 42`)
			require.NoError(t, err)
			require.EqualValues(t, 42, res.Rows[0][0])
		})
	}
}

// failsMidway delivers 300 000 rows, then fails with "boom at 300000".
const failsMidway = `SELECT CASE WHEN i < 300000 THEN i ELSE error('boom at ' || i) END AS i, repeat('x', 100) FROM range(600000) t(i)`

// TestStreamFailsMidway: an error DuckDB meets after rows were delivered ends
// the stream with that error; it is never a short, clean result. One DuckDB
// thread, so that DuckDB keeps the error's message: with several, it can lose
// it (ErrCauseLost; TestStreamFailsMidwayOnManyThreads).
func TestStreamFailsMidway(t *testing.T) {
	ctx := context.Background()
	st := streamStoreWith(t, storetest.Options{Threads: 1})
	rows, err := st.Engine.Rows(ctx, failsMidway)
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		n++
	}
	require.ErrorContains(t, rows.Err(), "boom at")
	require.ErrorContains(t, rows.Close(), "boom at")
	require.Greater(t, n, 0, "rows came before the error")

	s, err := st.Engine.Stream(ctx, failsMidway)
	require.NoError(t, err)
	for s.Next() {
	}
	require.ErrorContains(t, s.Err(), "boom at")
	require.ErrorContains(t, s.Close(), "boom at")
}

// TestStreamFailsMidwayOnManyThreads: on DuckDB's default threads, a failure
// midway still ends every stream with an error — its own message, or
// ErrCauseLost where DuckDB reported only that it stopped its other threads
// (DuckDB 1.5 does so in about one run in ten on this query) — never a clean
// end and never a bare "Interrupted!" that reads as a cancellation.
func TestStreamFailsMidwayOnManyThreads(t *testing.T) {
	ctx := context.Background()
	st := streamStore(t)
	lost := 0
	for range 20 {
		rows, err := st.Engine.Rows(ctx, failsMidway)
		require.NoError(t, err)
		for rows.Next() {
		}
		err = rows.Close()
		require.Error(t, err, "a failed statement never ends cleanly")
		if errors.Is(err, engine.ErrCauseLost) {
			lost++
			require.ErrorContains(t, err, "Interrupted!", "DuckDB's own words are kept")
			continue
		}
		require.ErrorContains(t, err, "boom at")
	}
	t.Logf("%d of 20 runs lost the cause", lost)
}

// TestStreamBoundaryMoved: an archival that moves the watermark while a stream
// reads the hot tier makes ErrBoundaryMoved the stream's final error — from
// Next/Err, before any clean end — for Rows and Stream alike.
func TestStreamBoundaryMoved(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(17)
	w.MaLos, w.Days = 4, 4
	a := newArchivedStore(t, w)
	if a.s.Engine.Extensions().Hot == "postgres_query" {
		// The postgres extension reads a hot half in one PostgreSQL statement,
		// whose lock on the partition holds an archival's DETACH until the
		// stream ends: archiving from the reading goroutine waits forever.
		t.Skip("the hot half reads through postgres_query: an open stream holds archival's DETACH")
	}
	lag := a.cfg.SettlementLag()
	const q = `SELECT malo_id, "from", value FROM readings`

	// Undisturbed, the stream ends cleanly.
	rows, err := a.s.Engine.Rows(ctx, q)
	require.NoError(t, err)
	for rows.Next() {
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())

	archive := func(cut time.Time) {
		t.Helper()
		out, err := a.tbl.Archiver.Archive(ctx, cut.Add(lag), 0)
		require.NoError(t, err)
		require.True(t, out.Watermark.Equal(cut), "watermark %s, want %s", out.Watermark, cut)
	}
	rows, err = a.s.Engine.Rows(ctx, q)
	require.NoError(t, err)
	require.NotZero(t, rows.Provenance.Tiers&engine.Hot, "the statement reads the hot tier")
	require.True(t, rows.Next())
	archive(a.cut.AddDate(0, 0, 1))
	for rows.Next() {
	}
	require.ErrorIs(t, rows.Err(), engine.ErrBoundaryMoved)
	require.ErrorIs(t, rows.Close(), engine.ErrBoundaryMoved)

	s, err := a.s.Engine.Stream(ctx, q)
	require.NoError(t, err)
	s.BatchRows = 10
	require.True(t, s.Next())
	archive(a.cut.AddDate(0, 0, 2))
	for s.Next() {
	}
	require.ErrorIs(t, s.Err(), engine.ErrBoundaryMoved)
	require.ErrorIs(t, s.Close(), engine.ErrBoundaryMoved)

	// Query collects, so it retries and answers from the moved boundary.
	sum, prov := querySum(t, a.s.Engine, `SELECT sum(value) FROM readings`)
	require.True(t, a.oracle.Sum(time.Time{}, time.Time{}).Equal(sum), "query %s oracle %s", sum, a.oracle.Sum(time.Time{}, time.Time{}))
	require.True(t, prov.Watermark.Equal(a.cut.AddDate(0, 0, 2)))
}
