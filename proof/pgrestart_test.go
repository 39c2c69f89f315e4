package proof

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/pglocal"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/testkit"
)

// TestPostgresRestartedMidScan: a query streaming the hot tier page by page
// while PostgreSQL stops must fail with an error — never end early as if the
// result were complete. It runs on a dedicated cluster (the shared one serves
// other tests), restarted on the same data directory and port afterwards; the
// same store then answers the oracle's numbers again.
func TestPostgresRestartedMidScan(t *testing.T) {
	ctx := context.Background()
	bin, err := pglocal.FindBinaries()
	require.NoError(t, err)
	data := filepath.Join(t.TempDir(), "pg")
	require.NoError(t, pglocal.Init(ctx, bin, data, pglocal.Durable))
	srv, err := pglocal.Start(ctx, bin, data, pglocal.Options{})
	require.NoError(t, err)
	stopped := false
	t.Cleanup(func() {
		if !stopped { // Stop must run once per server: a second call waits forever
			_ = srv.Stop()
		}
	})
	conn, err := pgx.Connect(ctx, srv.DSN("postgres"))
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "CREATE DATABASE proof")
	require.NoError(t, err)
	conn.Close(ctx)

	w := testkit.NewWorkload(0x5CA9)
	w.MaLos, w.Days, w.Mix = 40, 4, testkit.StromOnly
	b, err := w.Generate()
	require.NoError(t, err)
	spec := w.IntervalTable("readings_versions")
	spec.ScanChunkRows = 25 // many small keyset pages
	cfg := spec.MustBuild()
	o := testkit.NewOracle(cfg)
	first, _ := metering.DayBounds(b.Days[0], metering.SparteStrom)
	e := newEnvOn(t, srv.DSN("proof"), first, cfg)
	if e.cur.st.Engine().Extensions().Hot == "postgres_query" {
		// The fault is injected between meter_hot_scan's keyset pages (pool
		// acquires); the postgres extension reads the half in one statement.
		t.Skip("the hot half reads through postgres_query: no pages to stop PostgreSQL between")
	}
	e.appendAll(t, o, b.Deliveries)
	total := o.RawRowCount(zeroT, zeroT)
	require.Greater(t, total, 25000)
	agree(t, e, o, "before the restart")

	// Stop PostgreSQL between two keyset pages: on the 40th pool acquire after
	// the statement starts (each hot page is one), synchronously. DuckDB runs
	// the scan ahead of the consumer (even inside Rows), so the trigger is in
	// the pool, not in the loop below.
	var acquires, streamed atomic.Int64
	var prov atomic.Pointer[engine.Provenance]
	stop := func() {
		if acquires.Add(1) == 40 {
			if p := prov.Load(); p != nil {
				streamed.Store(p.HotRows())
			}
			_ = srv.Stop()
		}
	}
	e.onAcquire.Store(&stop)
	n := 0
	var scanErr, closeErr error
	rows, err := e.cur.st.Engine().Rows(ctx, `SELECT malo_id, "from", value FROM readings_versions`)
	if err != nil {
		scanErr = err
	} else {
		prov.Store(rows.Provenance)
		for rows.Next() {
			n++
		}
		scanErr = rows.Err()
		closeErr = rows.Close()
	}
	e.onAcquire.Store(nil)
	stopped = acquires.Load() >= 40
	t.Logf("server stopped at pool acquire %d; consumer read %d of %d rows; Err: %v; Close: %v", acquires.Load(), n, total, scanErr, closeErr)
	require.True(t, stopped, "the scan took fewer pages than expected")
	require.False(t, scanErr == nil && closeErr == nil && n != total, "a scan that lost its server returned %d of %d rows without an error", n, total)
	require.Error(t, errors.Join(scanErr, closeErr), "a scan that lost its server mid-way must fail")

	srv2, err := pglocal.Start(ctx, bin, data, pglocal.Options{Port: srv.Port})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv2.Stop() })
	e.cur.pool.Reset() // connections to the old server are dead
	agree(t, e, o, "after the restart")
}
