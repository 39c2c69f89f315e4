// Package storetest starts a whole store for one test: a fresh database on
// the throwaway PostgreSQL of testkit/pgtest (a private cluster from the
// system's binaries), a file:// Iceberg warehouse in the test's temporary
// directory with its SQL catalog in that database, and store.Open over them —
// both tiers of every table, an archiver per table and an engine, wired as a
// deployment wires them. A deployment's own tests start it against their own
// TableSpec and check it with testkit's workload and oracle (see Example):
//
//	func TestMain(m *testing.M) { pgtest.Main(m) } // stops the cluster after the tests
//
//	func TestOurTable(t *testing.T) {
//		s := storetest.Start(t, storetest.Options{}, ourSpec.MustBuild())
//		_, err := s.Store.Append(ctx, series...)
//	}
//
// Everything closes when the test ends. MSQL_TEST_DATABASE_URL names an
// existing server instead of the private cluster; in this module's own CI,
// MSQL_TEST_WAREHOUSE=s3 puts the warehouse on a private S3-compatible server.
package storetest

import (
	"context"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/internal/testhooks"
	"github.com/meterstore/meterstore/internal/testrig/faultproxy"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"github.com/meterstore/meterstore/settings"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

// Store is a running store for one test.
type Store struct {
	DSN       string
	Proxy     *faultproxy.Proxy // between the store and PostgreSQL when Options.PostgresProxy, else nil
	Warehouse string
	S3        settings.S3Settings // how the warehouse is reached when it is s3://
	Pool      *pgxpool.Pool
	Catalog   *catalog.Catalog
	Tables    map[string]*Table // by physical name
	Store     *store.Store      // assembled as a deployment assembles it (store.Open)
	Engine    *engine.Engine
}

// Table is one table's tiers and archiver.
type Table struct {
	Config   meterstore.TableConfig
	Hot      *hot.Store
	Cold     *catalog.Table
	Archiver *archive.Archiver
}

// Options tune Start; zero values are fine.
type Options struct {
	Now         time.Time // partitions are pre-created around it (default: time.Now)
	ArchiveHook func(archive.Step) error
	CatalogOpts func(*catalog.Options)
	Threads     int    // DuckDB's worker threads (engine.Config.Threads); 0 = DuckDB's default
	TimeZone    string // the engine's session time zone (engine.Config.TimeZone); "" = UTC
	MemoryLimit string // each engine database's memory_limit (engine.Config.MemoryLimit); "" = DuckDB's default
	// ConfinedDatabases caps the confined databases open at once
	// (engine.Config.ConfinedDatabases); 0 = engine.DefaultConfinedDatabases.
	ConfinedDatabases int
	// Prepare runs on the fresh database before anything opens it (a
	// database-level setting such as log_statement, say).
	Prepare     func(dsn string)
	Log         *slog.Logger // the engine's start-up line (store.Config.Log); nil = slog.Default()
	ObjectStore bool         // the warehouse on internal/testrig/s3test's server whatever MSQL_TEST_WAREHOUSE says
	// PostgresProxy puts a fault proxy (Store.Proxy) between every connection
	// of the store and PostgreSQL, so a test can take the database away.
	PostgresProxy bool
	// HotBatchRows bounds one hot write transaction (store.Config.HotBatchRows); 0 = the store's default.
	HotBatchRows int
	// RecordedAtSkew turns on the store's check of a delivery's own
	// recorded_at against Now (store.Config.RecordedAtSkew); 0 leaves it off.
	RecordedAtSkew time.Duration
}

// Start builds a store for cfgs, its engine reading the tiers through the
// paths the environment selects (engine.ExtensionsFromEnv). Everything is closed when the test ends.
func Start(t testing.TB, opt Options, cfgs ...meterstore.TableConfig) *Store {
	t.Helper()
	ctx := context.Background()
	wh, s3 := s3test.Local(t)
	if opt.ObjectStore {
		wh, s3 = s3test.Warehouse(t)
	}
	s := &Store{DSN: pgtest.Database(t), Warehouse: wh, S3: s3, Tables: map[string]*Table{}}
	if opt.Prepare != nil {
		opt.Prepare(s.DSN)
	}
	if opt.PostgresProxy {
		s.Proxy, s.DSN = proxied(t, s.DSN)
	}
	pool, err := pgxpool.New(ctx, s.DSN)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s.Pool = pool
	copt := catalog.Options{DSN: s.DSN, Warehouse: s.Warehouse, S3: s3, Pool: pool}
	if opt.CatalogOpts != nil {
		opt.CatalogOpts(&copt)
	}
	s.Catalog, err = catalog.Open(ctx, copt)
	require.NoError(t, err)
	t.Cleanup(func() { s.Catalog.Close() })
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	skew := opt.RecordedAtSkew
	if skew == 0 {
		skew = -1
	}
	ext, err := engine.ExtensionsFromEnv()
	require.NoError(t, err)
	s.Store, err = store.Open(testhooks.With(ctx, testhooks.Hooks{Archive: opt.ArchiveHook}), store.Config{Pool: pool, Catalog: s.Catalog, Tables: cfgs,
		// The clock stays at Options.Now while a workload's deliveries carry
		// their own recorded_at days later: the future check is off.
		Now: func() time.Time { return now }, RecordedAtSkew: skew, Threads: opt.Threads, TimeZone: opt.TimeZone, MemoryLimit: opt.MemoryLimit, ConfinedDatabases: opt.ConfinedDatabases,
		Extensions: ext, Log: opt.Log, HotBatchRows: opt.HotBatchRows})
	require.NoError(t, err)
	t.Cleanup(func() { s.Store.Close() })
	s.Engine = s.Store.Engine()
	for _, tb := range s.Store.Tables() {
		s.Tables[tb.Config().Name()] = &Table{Config: tb.Config(), Hot: tb.Hot(), Cold: tb.Cold(), Archiver: tb.Archiver()}
	}
	return s
}

// proxied starts a fault proxy to dsn's server and returns dsn through it.
func proxied(t testing.TB, dsn string) (*faultproxy.Proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	p, err := faultproxy.Start(u.Host)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	u.Host = p.Addr()
	return p, u.String()
}

// Table returns the only table, or the one named.
func (s *Store) Table(name ...string) *Table {
	if len(name) == 1 {
		return s.Tables[name[0]]
	}
	for _, t := range s.Tables {
		return t
	}
	return nil
}
