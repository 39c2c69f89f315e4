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
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/serve/access"
	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/serve/pgwire"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit/storetest"
)

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
	h := storetest.StartHourly(t, storetest.Options{}, 2)
	tbl, oracle := h.Table, h.Oracle
	all := time.Time{}

	t.Run("retried inside the server", func(t *testing.T) {
		e, hot := h.ArchivingEngine(t)
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
		require.GreaterOrEqual(t, hot.Archived(), int64(6), "every statement met an archival")
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

// TestPGWireLongResultReadsThroughAnArchival: a result of over a thousand
// rows, spanning the cold and the hot tier, during which an archival moves a
// window comes whole and equal to the oracle's winners — the client sees no
// error — whether the rows held back until the boundary check stay in memory
// or go to the spool's file. A result past the spool's limit is sent as it
// comes, and then the archival is SQLSTATE 40001, after rows were sent.
func TestPGWireLongResultReadsThroughAnArchival(t *testing.T) {
	ctx := context.Background()
	h := storetest.StartHourly(t, storetest.Options{}, 2)
	all := time.Time{}
	want := map[string]int{}
	for _, r := range h.Oracle.Winners(all, all) {
		want[r.MaloID+" "+r.ObisCode+" "+r.From.UTC().Format(time.RFC3339)+" "+r.Value.String()]++
	}
	require.Greater(t, len(want), 1000, "a result of over a thousand rows, past the rows sent in one flush")
	read := func(t *testing.T, memory int, limit int64, mode pgx.QueryExecMode) (map[string]int, error) {
		e, hot := h.ArchivingEngine(t)
		users, err := access.NewUsers(e, nil)
		require.NoError(t, err)
		srv := &pgwire.Server{Users: users, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		pgwire.SetSpool(srv, memory, limit)
		c := servetest.PGConnect(t, servetest.ServePGOn(t, srv, "127.0.0.1:0"), "anyone", "", mode, nil)
		rows, err := c.Query(ctx, `SELECT malo_id, obis_code, "from", CAST(value AS VARCHAR) FROM readings`)
		require.NoError(t, err)
		got := map[string]int{}
		for rows.Next() {
			var malo, obis, value string
			var from time.Time
			require.NoError(t, rows.Scan(&malo, &obis, &from, &value))
			d, err := decimal.NewFromString(value)
			require.NoError(t, err)
			got[malo+" "+obis+" "+from.UTC().Format(time.RFC3339)+" "+d.String()]++
		}
		require.EqualValues(t, 1, hot.Archived(), "mode %v: the statement met an archival", mode)
		return got, rows.Err()
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		t.Run("held in memory/"+mode.String(), func(t *testing.T) {
			got, err := read(t, 0, 0, mode)
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
		t.Run("held in the spool's file/"+mode.String(), func(t *testing.T) {
			got, err := read(t, 4<<10, 0, mode)
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
		t.Run("past the spool's limit/"+mode.String(), func(t *testing.T) {
			got, err := read(t, 4<<10, 16<<10, mode)
			require.Error(t, err)
			require.Equal(t, "40001", servetest.PGCode(err), "%v", err)
			require.NotEmpty(t, got, "rows were sent before the boundary check")
		})
	}
}
