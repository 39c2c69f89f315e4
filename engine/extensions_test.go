package engine_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/pgtest"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// logBuffer collects what an engine logs.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// extensionDirectory is where the extension tests load DuckDB's extensions
// from: the environment's directory, else the one `go tool task extensions`
// fills in the module; "" when neither holds them.
func extensionDirectory(t *testing.T) string {
	t.Helper()
	x, err := engine.ExtensionsFromEnv()
	require.NoError(t, err)
	for _, dir := range []string{x.Directory, filepath.Join("..", ".cache", "duckdb-extensions")} {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "installed")); err == nil {
			abs, err := filepath.Abs(dir)
			require.NoError(t, err)
			return abs
		}
	}
	return ""
}

// A host without the extensions starts, answers correctly through the Go
// paths, and says so once — at start-up, not per statement.
func TestStartsWithoutExtensions(t *testing.T) {
	t.Setenv(engine.EnvExtensionDirectory, "")
	t.Setenv(engine.EnvPaths, "")
	var log logBuffer
	w := testkit.NewWorkload(31)
	w.MaLos, w.Days = 3, 5
	a := newArchivedStoreWith(t, w, storetest.Options{Log: log.logger()})
	all := time.Time{}
	cold := "read_parquet"
	if s3test.OnS3() {
		cold = "meter_cold_scan" // the Go reader: no httpfs without the extensions
	}
	for i := 0; i < 3; i++ {
		got, prov := querySum(t, a.s.Engine, `SELECT sum(value) FROM readings`)
		require.True(t, got.Equal(a.oracle.Sum(all, all)), "engine %s oracle %s", got, a.oracle.Sum(all, all))
		require.Equal(t, cold, prov.ColdPath)
		require.Equal(t, "meter_hot_scan", prov.HotPath)
		require.Contains(t, prov.String(), "via "+cold+"+meter_hot_scan")
	}
	st := a.s.Engine.Extensions()
	require.Empty(t, st.Loaded)
	require.Equal(t, "meter_hot_scan", st.Hot)
	require.Equal(t, "read_parquet", st.Cold)
	out := log.String()
	require.Equal(t, 1, strings.Count(out, "engine: "), out)
	require.Contains(t, out, "hot tier through meter_hot_scan, cold tier through read_parquet; no DuckDB extension directory configured")

	// A half required to take an extension's path cannot open without it.
	_, err := engine.Open(context.Background(), engine.Config{
		Tables:     []engine.Table{{Config: a.cfg, Hot: store.HotTierOf(a.tbl.Hot), Cold: store.ColdTierOf(a.tbl.Cold)}},
		Extensions: engine.Extensions{Directory: t.TempDir(), Cold: engine.PathExtension}, Log: log.logger()})
	require.ErrorIs(t, err, engine.ErrExtensionMissing)
	require.ErrorContains(t, err, "cold half")
}

// TestExtensionPaths: both halves through DuckDB's extensions answer exactly
// what the Go paths and the oracle answer — rows, totals, as-of, as-known-at,
// the ceiling and a scope — and PostgreSQL receives the range and the
// equalities in the SQL the postgres extension sends it.
func TestExtensionPaths(t *testing.T) {
	dir := extensionDirectory(t)
	if dir == "" {
		t.Skip("DuckDB's extensions are not installed: go tool task extensions")
	}
	t.Setenv(engine.EnvExtensionDirectory, dir)
	t.Setenv(engine.EnvPaths, "extension")
	ctx := context.Background()
	var log logBuffer
	var database string
	w := testkit.NewWorkload(32)
	w.MaLos, w.Days, w.Tenants, w.CorrectionRate = 4, 6, 2, 0.25
	a := newArchivedStoreWith(t, w, storetest.Options{Log: log.logger(), Prepare: func(dsn string) {
		conn := pgtest.Connect(t, dsn)
		require.NoError(t, conn.QueryRow(ctx, "SELECT current_database()").Scan(&database))
		pgtest.Exec(t, conn, "ALTER DATABASE "+database+" SET log_statement = 'all'")
	}})
	a.deliverCorrections(t)
	ext := a.s.Engine

	st := ext.Extensions()
	for _, name := range []string{"postgres_scanner", "avro", "iceberg"} {
		require.True(t, st.Has(name), "%s loaded: %+v", name, st)
	}
	require.Equal(t, "postgres_query", st.Hot)
	require.Equal(t, "iceberg_scan", st.Cold)
	require.Equal(t, 1, strings.Count(log.String(), "engine: "), log.String())
	require.Contains(t, log.String(), "hot tier through postgres_query, cold tier through iceberg_scan; DuckDB extensions loaded from "+dir)

	goPaths, err := engine.Open(ctx, engine.Config{Tables: []engine.Table{{Config: a.cfg,
		Hot: store.HotTierOf(a.tbl.Hot), Cold: store.ColdTierOf(a.tbl.Cold)}}, Log: log.logger()})
	require.NoError(t, err)
	t.Cleanup(func() { goPaths.Close() })
	require.Equal(t, "meter_hot_scan", goPaths.Extensions().Hot)

	all := time.Time{}
	var meter string // of the tenant the scoped handle sees
	for _, m := range a.batch.Meters {
		if m.Tenant == "tenant01" && meter == "" {
			meter = m.MaloID.String()
		}
	}
	mid := a.cut.Add(-24 * time.Hour)
	knownAt := a.corrections[len(a.corrections)/2].Arrival
	ceiling := testkit.Version(a.batch.Days[2]).Uint64()
	snap := a.tbl.Cold.CurrentSnapshotID()
	statements := []string{
		`SELECT * FROM readings ORDER BY malo_id, obis_code, "from", tenant, version_scope`,
		`SELECT * FROM readings_versions ORDER BY malo_id, obis_code, "from", tenant, version_scope, version`,
		`SELECT sum(value), count(*) FROM readings`,
		`SELECT sum(value), count(*) FROM readings WHERE "from" >= '` + mid.Format(time.RFC3339) + `'`,
		`SELECT obis_code, sum(value), count(*) FROM readings WHERE malo_id = '` + meter + `' GROUP BY ALL ORDER BY ALL`,
		`SELECT tenant, sum(value) FROM readings_versions WHERE "from" < '` + a.cut.Format(time.RFC3339) + `' GROUP BY ALL ORDER BY ALL`,
	}
	scoped := func(e *engine.Engine) *engine.Engine {
		s, err := e.Scoped("tenant", "tenant01")
		require.NoError(t, err)
		return s
	}
	handles := map[string]func(*engine.Engine) *engine.Engine{
		"current":  func(e *engine.Engine) *engine.Engine { return e },
		"as of":    func(e *engine.Engine) *engine.Engine { return e.AsOf(snap, &ceiling) },
		"known at": func(e *engine.Engine) *engine.Engine { return e.AsKnownAt(knownAt) },
		"scoped":   scoped,
	}
	for name, handle := range handles {
		t.Run(name, func(t *testing.T) {
			wantHot, wantCold := "postgres_query", []string{"iceberg_scan"}
			if name == "scoped" {
				// A confined database loads no extension: its hot half takes
				// the engine's own scan; its cold half is read by the
				// engine's database, extensions and all, and fed to it.
				wantHot = "meter_hot_scan"
			}
			for _, q := range statements {
				want, err := handle(goPaths).Query(ctx, q)
				require.NoError(t, err, q)
				got, err := handle(ext).Query(ctx, q)
				require.NoError(t, err, q)
				require.NotEmpty(t, want.Rows, q)
				require.Equal(t, want.Rows, got.Rows, q)
				if got.Provenance.TouchedHotTier() {
					require.Equal(t, wantHot, got.Provenance.HotPath, q)
				}
				if got.Provenance.Tiers&engine.Cold != 0 {
					require.Contains(t, wantCold, got.Provenance.ColdPath, q)
				}
			}
		})
	}
	got, prov := querySum(t, ext, `SELECT sum(value) FROM readings`)
	require.True(t, got.Equal(a.oracle.Sum(all, all)), "extension paths %s oracle %s", got, a.oracle.Sum(all, all))
	require.Contains(t, prov.String(), "via iceberg_scan+postgres_query")
	got, _ = querySum(t, ext.AsKnownAt(knownAt), `SELECT sum(value) FROM readings`)
	require.True(t, got.Equal(a.oracle.With(testkit.Ceiling{KnownAt: knownAt}).Sum(all, all)))
	got, _ = querySum(t, ext.AsOf(snap, &ceiling), `SELECT sum(value) FROM readings`)
	require.True(t, got.Equal(a.oracle.With(testkit.Ceiling{MaxVersion: ceiling}).Sum(all, a.cut)))

	plan, err := ext.Explain(ctx, `SELECT sum(value) FROM readings WHERE malo_id = $1`, meter)
	require.NoError(t, err)
	require.Contains(t, plan, "through iceberg_scan")
	require.Contains(t, plan, "through postgres_query; PostgreSQL: SELECT")

	// What PostgreSQL received for the hot half: the range and the equality
	// in its WHERE, not a scan of the whole table filtered by DuckDB.
	server := pgtest.Server(t)
	if server == nil {
		return
	}
	hot := a.cut.Add(24 * time.Hour)
	_, err = ext.Query(ctx, `SELECT sum(value) FROM readings WHERE malo_id = $1 AND "from" >= $2`, meter, hot)
	require.NoError(t, err)
	logged, err := os.ReadFile(filepath.Join(server.DataDir, "server.log"))
	require.NoError(t, err)
	want := regexp.MustCompile(`statement: .*SELECT .* FROM "?readings_versions"? WHERE .*"from" >= '` +
		regexp.QuoteMeta(hot.UTC().Format("2006-01-02 15:04:05")) + `\+00'::timestamptz.*"malo_id" = E'` + meter + `'`)
	var received []string
	for _, line := range strings.Split(string(logged), "\n") {
		if strings.Contains(line, meter) && strings.Contains(line, "statement:") {
			received = append(received, line)
		}
	}
	require.True(t, slices.ContainsFunc(received, want.MatchString), "PostgreSQL received for meter %s:\n%s", meter, strings.Join(received, "\n"))
}
