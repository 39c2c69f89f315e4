package proof

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/promexport"
	"github.com/meterstore/meterstore/internal/testrig/promtest"
	"github.com/meterstore/meterstore/serve/access"
	"github.com/meterstore/meterstore/serve/flightsql"
	"github.com/meterstore/meterstore/serve/icebergrest"
	"github.com/meterstore/meterstore/serve/pgwire"
	"github.com/meterstore/meterstore/store"
)

// The days of the metrics scenario: two UTC days of October, archived with
// the rest of the month (so compaction finds the month closed), and one of
// November, which stays hot.
var (
	mDay0 = time.Date(2025, time.October, 29, 0, 0, 0, 0, time.UTC)
	mDay1 = mDay0.AddDate(0, 0, 1)
	mDay2 = time.Date(2025, time.November, 3, 0, 0, 0, 0, time.UTC)
	mMark = time.Date(2025, time.November, 1, 0, 0, 0, 0, time.UTC) // the watermark after archival
)

// TestMetricsAfterWritesArchivalAndEverySurface drives a known scenario —
// writes with every displacement effect, two refused writes, an archival (and
// a contended one), snapshot expiry, a late correction, statements over every
// surface, a compaction and orphan cleanup — then scrapes /metrics as Prometheus would and finds each
// series with the value the scenario implies: counts of rows by effect,
// statements by outcome, rows returned, rows archived, and per-table gauges
// checked against PostgreSQL and the Iceberg file list read independently.
// The gauge of health and system.tables.healthy agree, healthy and not.
func TestMetricsAfterWritesArchivalAndEverySurface(t *testing.T) {
	cfg := meterstore.TableSpec{Name: "readings_versions", Columns: []meterstore.Column{
		{Name: "anlage", Kind: meterstore.Attribute, Nullable: true},
	}}.MustBuild()
	e := newEnv(t, mDay0, cfg)
	ctx := e.ctx
	st := e.cur.st
	tbl := e.table(t)

	exp, err := promexport.New("proof")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, exp.Close(context.Background())) })
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := st.SampleState(r.Context(), time.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		exp.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(metrics.Close)

	// Writes, in-process: every effect in the hot tier, then two refusals.
	day := func(d time.Time, n int, value string, version uint64) meterstore.StoredSeries {
		return mkDelivery(t, badOp1, d, n, value, version)
	}
	const v1d0, v1d1, v1d2 = 20251030000001, 20251030000001, 20251104000001
	_, err = st.Append(ctx, day(mDay0, 96, "1.0", v1d0), day(mDay1, 96, "1.0", v1d1), day(mDay2, 96, "1.0", v1d2)) // 288 inserted
	require.NoError(t, err)
	_, err = st.Append(ctx, day(mDay0, 96, "1.0", v1d0)) // 96 duplicates
	require.NoError(t, err)
	_, err = st.Append(ctx, day(mDay2, 10, "1.1", 20251107000001)) // 10 superseded
	require.NoError(t, err)
	_, err = st.Append(ctx, day(mDay2, 5, "0.9", 20251105000001)) // 5 shadowed by the version above
	require.NoError(t, err)
	_, err = st.Append(ctx, day(mDay2, 1, "7.0", v1d2)) // a different value under a stored version
	rule, ok := store.RefusalRule(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "restatement", rule)

	// Archival of October's last three days (day 0, day 1, and an empty one)
	// by the scheduler, with expiry (the 10-year retention removes nothing);
	// then a run that finds the lease held.
	var runs []archive.Outcome
	sched := archive.Maintenance(tbl.Archiver()).MaxWindows(3).ExpireSnapshots(true).
		Report(func(out archive.Outcome, err error) { require.NoError(t, err); runs = append(runs, out) })
	require.NoError(t, sched.RunOnce(ctx))
	require.Len(t, runs[0].Windows, 3)
	require.True(t, runs[0].Watermark.Equal(mMark), "watermark %s", runs[0].Watermark)
	lease, won, err := tbl.Hot().TryArchiveLease(ctx)
	require.NoError(t, err)
	require.True(t, won)
	require.NoError(t, sched.RunOnce(ctx))
	require.True(t, runs[1].LeaseContended)
	lease.Release()
	var archivedBytes int64
	for _, w := range runs[0].Windows {
		archivedBytes += w.Bytes
	}

	// A late correction routed cold; a hot writer refusing an interval below its boundary.
	_, err = st.Append(ctx, day(mDay0, 4, "2.0", 20251110000001)) // 4 superseded, in Iceberg
	require.NoError(t, err)
	hw, err := tbl.HotWriter(ctx)
	require.NoError(t, err)
	_, err = hw.Append(ctx, day(mDay0, 1, "2.0", 20251111000001))
	require.ErrorIs(t, err, store.ErrBelowBoundary)

	// Statements over every surface: the same resolved read, and a refused write.
	const q = `SELECT "from", value FROM readings ORDER BY 1`
	const readings = 3 * 96
	res, err := st.Query(ctx, q)
	require.NoError(t, err)
	require.Len(t, res.Rows, readings)
	prov := res.Provenance
	require.Equal(t, engine.Cold|engine.Hot, prov.Tiers)
	files, _, err := tbl.Cold().PlanFiles(ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	require.Equal(t, len(files), prov.ColdFiles, "the statement reads every cold file")
	require.Greater(t, prov.ResolvedFiles, 0, "day 0 holds two versions: resolution applies")
	require.Less(t, prov.ResolvedFiles, prov.ColdFiles, "day 1 holds one version: resolution is elided")
	_, err = st.Query(ctx, `DELETE FROM readings_versions`)
	require.ErrorIs(t, err, engine.ErrNotAQuery)

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	users, err := access.NewUsers(st.Engine(), nil)
	require.NoError(t, err)
	pgAddr := serveOn(t, func(ctx context.Context, ln net.Listener) error {
		return (&pgwire.Server{Users: users, Log: quiet}).Serve(ctx, ln)
	})
	host, port, _ := net.SplitHostPort(pgAddr)
	conn, err := pgx.Connect(ctx, "host="+host+" port="+port+" user=analyst dbname=meterstore sslmode=disable")
	require.NoError(t, err)
	rows, err := conn.Query(ctx, q)
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		n++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, readings, n)
	_, err = conn.Exec(ctx, `DELETE FROM readings_versions`)
	require.Error(t, err)
	require.NoError(t, conn.Close(ctx))

	fl, err := flightsql.NewServer(users, quiet)
	require.NoError(t, err)
	flAddr := serveOn(t, func(ctx context.Context, ln net.Listener) error { return fl.Serve(ctx, ln, nil) })
	cl, err := arrowsql.NewClient(flAddr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cl.Close()
	info, err := cl.Execute(ctx, q)
	require.NoError(t, err)
	n = 0
	for _, ep := range info.Endpoint {
		rdr, err := cl.DoGet(ctx, ep.Ticket)
		require.NoError(t, err)
		for rdr.Next() {
			n += int(rdr.RecordBatch().NumRows())
		}
		require.NoError(t, rdr.Err())
		rdr.Release()
	}
	require.Equal(t, readings, n)

	rest := httptest.NewServer((&icebergrest.Server{Catalog: e.cur.cat.Iceberg(), Tables: func() []meterstore.TableConfig { return e.cfgs }, Users: users, Log: quiet}).Handler())
	t.Cleanup(rest.Close)
	for path, code := range map[string]int{"/v1/namespaces/meterstore/tables/readings_versions": 200, "/v1/namespaces/meterstore/tables/nope": 404} {
		resp, err := http.Get(rest.URL + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, code, resp.StatusCode, path)
	}

	// Compaction merges the closed month's files (day 0, day 1 and the late
	// correction); orphan cleanup finds what no snapshot references.
	compacted, err := tbl.Cold().Compact(ctx, catalog.CompactOptions{})
	require.NoError(t, err)
	require.GreaterOrEqual(t, compacted.FilesRemoved(), 2)
	orphans, err := tbl.Cold().DeleteOrphanFiles(ctx, catalog.DefaultOrphanSafetyAge, false)
	require.NoError(t, err)
	files, _, err = tbl.Cold().PlanFiles(ctx, catalog.PlanRequest{})
	require.NoError(t, err)

	before := time.Now()
	m := promtest.Scrape(t, metrics.URL)
	after := time.Now()
	table := []string{"meterstore_table", "readings"}
	with := func(labels ...string) []string { return append(append([]string{}, table...), labels...) }

	t.Run("write path", func(t *testing.T) {
		for _, c := range []struct {
			tier, effect string
			want         float64
		}{{"hot", "inserted", 288}, {"hot", "duplicate", 96}, {"hot", "superseded", 10}, {"hot", "shadowed", 5}, {"cold", "superseded", 4}} {
			require.Equal(t, c.want, m.Must(t, "meterstore_write_rows_total", with("meterstore_tier", c.tier, "meterstore_effect", c.effect)...), "%s %s", c.tier, c.effect)
		}
		_, ok := m.Value("meterstore_write_rows_total", with("meterstore_tier", "cold", "meterstore_effect", "inserted")...)
		require.False(t, ok, "no row was inserted in Iceberg")
		require.Equal(t, 1.0, m.Must(t, "meterstore_write_refusals_total", with("meterstore_rule", "restatement")...))
		require.Equal(t, 1.0, m.Must(t, "meterstore_write_refusals_total", with("meterstore_rule", "below_boundary")...))
		require.Equal(t, 5.0, m.Must(t, "meterstore_write_duration_seconds_count", with("meterstore_outcome", "ok")...))
		require.Equal(t, 2.0, m.Must(t, "meterstore_write_duration_seconds_count", with("meterstore_outcome", "refused")...))
	})

	t.Run("statements by surface", func(t *testing.T) {
		for _, surface := range []string{"in-process", "pgwire", "flightsql"} {
			s := []string{"meterstore_surface", surface, "meterstore_outcome", "ok"}
			require.Equal(t, 1.0, m.Must(t, "meterstore_statement_duration_seconds_count", s...), surface)
			require.Equal(t, 1.0, m.Must(t, "meterstore_statement_duration_seconds_count", append(s, "meterstore_tiers", "cold+hot", "meterstore_read_mode", "unified")...), surface)
			require.Equal(t, float64(readings), m.Must(t, "meterstore_statement_returned_rows_sum", s...), surface)
			sf := []string{"meterstore_surface", surface}
			require.Equal(t, float64(prov.ColdFiles-prov.ResolvedFiles), m.Must(t, "meterstore_statement_cold_files_total", append(sf, "meterstore_resolution", "elided")...), surface)
			require.Equal(t, float64(prov.ResolvedFiles), m.Must(t, "meterstore_statement_cold_files_total", append(sf, "meterstore_resolution", "applied")...), surface)
		}
		for _, surface := range []string{"in-process", "pgwire"} {
			require.Equal(t, 1.0, m.Must(t, "meterstore_statement_duration_seconds_count", "meterstore_surface", surface, "meterstore_outcome", "refused"), surface)
		}
		route := []string{"http_route", "/v1/namespaces/{ns}/tables/{table}", "http_request_method", "GET"}
		require.Equal(t, 1.0, m.Must(t, "http_server_request_duration_seconds_count", append(route, "http_response_status_code", "200")...))
		require.Equal(t, 1.0, m.Must(t, "http_server_request_duration_seconds_count", append(route, "http_response_status_code", "404")...))
	})

	t.Run("archival and expiry", func(t *testing.T) {
		require.Equal(t, 3.0, m.Must(t, "meterstore_archival_windows_total", table...))
		require.Equal(t, 192.0, m.Must(t, "meterstore_archival_rows_total", table...))
		require.Equal(t, float64(archivedBytes), m.Must(t, "meterstore_archival_bytes_total", table...))
		require.Equal(t, 1.0, m.Must(t, "meterstore_archival_lease_attempts_total", with("meterstore_lease_result", "won")...))
		require.Equal(t, 1.0, m.Must(t, "meterstore_archival_lease_attempts_total", with("meterstore_lease_result", "contended")...))
		for _, c := range []struct{ task, outcome string }{{"archival", "ok"}, {"archival", "contended"}, {"expiry", "ok"}} {
			labels := with("meterstore_task", c.task, "meterstore_outcome", c.outcome)
			require.Equal(t, 1.0, m.Must(t, "meterstore_maintenance_duration_seconds_count", labels...), "%v", c)
			last := m.Must(t, "meterstore_maintenance_last_run_seconds", labels...)
			require.LessOrEqual(t, last, float64(before.UnixNano())/1e9, "%v", c)
		}
		_, ok := m.Value("meterstore_expiry_snapshots_total", table...)
		require.False(t, ok, "the retention removed no snapshot")
	})

	t.Run("compaction and orphan cleanup", func(t *testing.T) {
		for _, task := range []string{"compaction", "orphan_cleanup"} {
			require.Equal(t, 1.0, m.Must(t, "meterstore_maintenance_duration_seconds_count", with("meterstore_task", task, "meterstore_outcome", "ok")...), task)
		}
		require.Equal(t, float64(compacted.FilesRemoved()), m.Must(t, "meterstore_compaction_files_total", with("meterstore_change", "removed")...))
		require.Equal(t, float64(compacted.FilesAdded()), m.Must(t, "meterstore_compaction_files_total", with("meterstore_change", "added")...))
		var rows int64
		for _, p := range compacted.Partitions {
			rows += p.Rows
		}
		require.Equal(t, float64(rows), m.Must(t, "meterstore_compaction_rows_total", table...))
		require.Equal(t, float64(192+4), float64(rows), "compaction rewrote every cold row of the month")
		deleted, _ := m.Value("meterstore_orphan_cleanup_files_total", table...)
		require.Equal(t, float64(len(orphans)), deleted)
	})

	t.Run("table state", func(t *testing.T) {
		require.Equal(t, float64(mMark.Unix()), m.Must(t, "meterstore_watermark_seconds", table...))
		lag := m.Must(t, "meterstore_watermark_lag_seconds", table...)
		require.True(t, lag >= before.Sub(mMark).Seconds()-1 && lag <= after.Sub(mMark).Seconds()+1, "lag %f", lag)
		backlog := m.Must(t, "meterstore_archival_backlog", table...)
		windows := func(now time.Time) float64 {
			return math.Floor(now.Add(-cfg.SettlementLag()).Sub(mMark).Hours() / cfg.ArchivalStep().Hours())
		}
		require.True(t, backlog >= windows(before) && backlog <= windows(after), "backlog %f", backlog)
		require.Equal(t, float64(96+10+5), m.Must(t, "meterstore_hot_rows", table...))
		require.Equal(t, float64(e.hotRows(t)), m.Must(t, "meterstore_hot_rows", table...))
		var parts int64 // the day partitions, not the archived range's (hot.ClaimBelow), which holds no row
		require.NoError(t, e.cur.pool.QueryRow(ctx, `SELECT count(*) FROM pg_inherits WHERE inhparent = $1::regclass AND inhrelid <> to_regclass($2)`,
			cfg.Name(), meterstore.QuoteIdent(cfg.Name()+"$archived")).Scan(&parts))
		require.Equal(t, float64(parts), m.Must(t, "meterstore_hot_partitions", table...))
		require.Equal(t, 0.0, m.Must(t, "meterstore_hot_detached_partitions", table...))
		require.Equal(t, 0.0, m.Must(t, "meterstore_table_quarantined", table...))
		require.Equal(t, float64(192+4), m.Must(t, "meterstore_cold_rows", table...))
		require.Equal(t, float64(e.coldRows(t)), m.Must(t, "meterstore_cold_rows", table...))
		require.Equal(t, float64(len(files)), m.Must(t, "meterstore_cold_files", table...))
		var size int64
		for _, f := range files {
			size += f.SizeBytes
		}
		require.Equal(t, float64(size), m.Must(t, "meterstore_cold_bytes", table...))
	})

	t.Run("health agrees with system.tables", func(t *testing.T) {
		systemHealth := func() (bool, int64) {
			require.NoError(t, st.Engine().RefreshSystemTables(ctx, time.Now()))
			r := e.query(t, `SELECT healthy, invariant_violations FROM system.tables WHERE "table" = 'readings'`)
			require.Len(t, r, 1)
			return r[0][0].(bool), asInt(t, r[0][1])
		}
		healthy, violations := systemHealth()
		require.True(t, healthy)
		require.Equal(t, 1.0, m.Must(t, "meterstore_table_healthy", table...))
		require.Equal(t, float64(violations), m.Must(t, "meterstore_invariant_violations", table...))

		// Rows written straight into a partition re-created below the
		// watermark: what a broken archival would leave (one that did not
		// claim the range below it: the claim refuses the partition).
		rows, err := cfg.Encode(day(mDay0, 3, "1.0", v1d0))
		require.NoError(t, err)
		_, err = e.cur.pool.Exec(ctx, "DROP TABLE "+meterstore.QuoteIdent(cfg.Name()+"$archived"))
		require.NoError(t, err)
		require.NoError(t, tbl.Hot().EnsurePartitions(ctx, mDay0, mDay1))
		_, err = tbl.Hot().Write(ctx, rows)
		require.NoError(t, err)
		healthy, violations = systemHealth()
		require.False(t, healthy)
		require.EqualValues(t, 3, violations)
		m := promtest.Scrape(t, metrics.URL)
		require.Equal(t, 0.0, m.Must(t, "meterstore_table_healthy", table...))
		require.Equal(t, float64(violations), m.Must(t, "meterstore_invariant_violations", table...))
	})
}

// serveOn runs a server on a loopback port until the test ends.
func serveOn(t *testing.T, run func(context.Context, net.Listener) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("server on %s: %v", ln.Addr(), err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("server on %s did not stop", ln.Addr())
		}
	})
	return ln.Addr().String()
}
