package pgwire_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/serve/access"
	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// hourlyStore is a store of hourly windows, most of them still in
// PostgreSQL, so that every archival moves one window of what a statement reads.
func hourlyStore(t *testing.T) (*storetest.Store, *testkit.Oracle, time.Time) {
	t.Helper()
	ctx := context.Background()
	w := testkit.NewWorkload(25)
	w.MaLos, w.Days, w.Tenants = 6, 2, 2
	batch, err := w.Generate()
	require.NoError(t, err)
	spec := w.IntervalTable("readings_versions")
	spec.PartitionStep, spec.ArchivalStep, spec.SettlementLag, spec.PartitionHeadroom = time.Hour, time.Hour, time.Hour, 6*time.Hour
	cfg := spec.MustBuild()
	oracle := testkit.NewOracle(cfg)
	s := storetest.Start(t, storetest.Options{Now: batch.Days[0].Time()}, cfg)
	var rows []meterstore.Row
	for _, d := range batch.Deliveries {
		rs, err := cfg.Encode(d.Series)
		require.NoError(t, err)
		rows = append(rows, rs...)
	}
	_, err = oracle.Record(rows...)
	require.NoError(t, err)
	for len(rows) > 0 {
		n := min(len(rows), 20000)
		_, err := s.Table().Hot.Write(ctx, rows[:n])
		require.NoError(t, err)
		rows = rows[n:]
	}
	now := batch.Days[len(batch.Days)-1].Time().Add(48 * time.Hour)
	_, err = s.Table().Archiver.Archive(ctx, now, 2)
	require.NoError(t, err)
	return s, oracle, now
}

// archivalUnderScan archives one more window of the table when every other hot
// scan starts, after the statement pinned its boundary: the statement meets an
// archival, its run again does not.
type archivalUnderScan struct {
	engine.HotTier
	scans   *atomic.Int64
	archive func() error
}

func (h archivalUnderScan) Pages(req engine.HotScan) (engine.RowPages, error) {
	if h.scans.Add(1)%2 == 1 {
		if err := h.archive(); err != nil {
			return nil, err
		}
	}
	return h.HotTier.Pages(req)
}

// vanishedPartition reads, instead of what the statement planned, a partition
// that an archival dropped: every hot scan fails the way a scan whose
// partition was archived under it fails.
type vanishedPartition struct {
	engine.HotTier
	table string
	scans *atomic.Int64
}

func (h vanishedPartition) Pages(req engine.HotScan) (engine.RowPages, error) {
	h.scans.Add(1)
	req.Table = h.table + "_2000_01_01_0000"
	return h.HotTier.Pages(req)
}

func pgServerOver(t *testing.T, e *engine.Engine) string {
	t.Helper()
	users, err := access.NewUsers(e, nil)
	require.NoError(t, err)
	f := &servetest.Fixture{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	_, addr := f.StartPG(t, users)
	return addr
}

// TestPGWireStatementsMeetingAnArchival: statements during which an archival
// moves a window from PostgreSQL to Iceberg are run again inside the server
// and answered in full — the client sees no error — and a statement that
// keeps failing because its partition is gone is SQLSTATE 40001 (retry), not
// an input error.
func TestPGWireStatementsMeetingAnArchival(t *testing.T) {
	ctx := context.Background()
	s, oracle, now := hourlyStore(t)
	tbl := s.Table()
	all := time.Time{}

	t.Run("retried inside the server", func(t *testing.T) {
		scans := &atomic.Int64{}
		archived := 0
		e, err := engine.Open(ctx, engine.Config{Tables: []engine.Table{{Config: tbl.Config, Cold: store.ColdTierOf(tbl.Cold),
			Hot: archivalUnderScan{HotTier: store.HotTierOf(tbl.Hot), scans: scans, archive: func() error {
				out, err := tbl.Archiver.Archive(ctx, now, 1)
				if err == nil && out.ArchivedAnything() {
					archived++
				}
				return err
			}}}}})
		require.NoError(t, err)
		defer e.Close()
		addr := pgServerOver(t, e)
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
			c := servetest.PGConnect(t, addr, "anyone", "", mode, nil)
			for i := 0; i < 3; i++ {
				var n int64
				require.NoError(t, c.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n), "mode %v statement %d", mode, i)
				require.EqualValues(t, oracle.RowCount(all, all), n, "mode %v statement %d", mode, i)
				rows, err := c.Query(ctx, `SELECT tenant, count(*) FROM readings GROUP BY tenant ORDER BY tenant`)
				require.NoError(t, err)
				var total int64
				for rows.Next() {
					var tenant string
					var k int64
					require.NoError(t, rows.Scan(&tenant, &k))
					total += k
				}
				require.NoError(t, rows.Err(), "mode %v statement %d", mode, i)
				require.EqualValues(t, oracle.RowCount(all, all), total)
			}
		}
		require.GreaterOrEqual(t, archived, 6, "every statement met an archival")
	})

	t.Run("what still fails is 40001", func(t *testing.T) {
		scans := &atomic.Int64{}
		e, err := engine.Open(ctx, engine.Config{Tables: []engine.Table{{Config: tbl.Config, Cold: store.ColdTierOf(tbl.Cold),
			Hot: vanishedPartition{HotTier: store.HotTierOf(tbl.Hot), table: tbl.Config.Name(), scans: scans}}}})
		require.NoError(t, err)
		defer e.Close()
		addr := pgServerOver(t, e)
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
			c := servetest.PGConnect(t, addr, "anyone", "", mode, nil)
			before := scans.Load()
			var n int64
			err := c.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n)
			require.Error(t, err)
			require.Equal(t, "40001", servetest.PGCode(err), "mode %v: %v", mode, err)
			require.False(t, strings.Contains(err.Error(), "Invalid Input Error"), "%v", err)
			require.EqualValues(t, 3, scans.Load()-before, "mode %v: run, then run again twice", mode)
		}
	})
}
