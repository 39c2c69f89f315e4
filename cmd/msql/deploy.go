package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/embedded"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/settings"
	"github.com/meterstore/meterstore/store"
)

// deployFlags pick the deployment a command works on: a configuration file, a
// DSN plus warehouse, or (neither) the embedded default under $MSQL_HOME.
type deployFlags struct {
	config      string
	dsn         string
	warehouse   string
	home        string
	keepRunning bool
	throwaway   bool
	// memoryLimit overrides [engine] memory_limit (msql serve --memory-limit);
	// serverBudget defaults an unset limit to serverMemoryBudget.
	memoryLimit  string
	serverBudget bool
	// confinedDatabases overrides [serve] confined_databases (msql serve
	// --confined-databases); 0 keeps it.
	confinedDatabases int
	// log receives the engine's start-up line (the paths each tier takes);
	// the long-running commands set it to their structured log. The one-shot
	// commands and the shell leave it nil: the line would precede every
	// answer on stderr, and .extensions shows the same.
	log *slog.Logger
}

func (f *deployFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "meterstore.toml of a deployment (tables, [hot] url, [cold] catalog and warehouse, [[users]]); without [hot], the embedded default")
	fs.StringVar(&f.dsn, "dsn", "", "PostgreSQL of a deployment (hot tier and SQL catalog); with --warehouse")
	fs.StringVar(&f.warehouse, "warehouse", "", "Iceberg warehouse URI of a deployment, e.g. file:///srv/warehouse; with --dsn")
	fs.StringVar(&f.home, "home", "", "data directory of the embedded default (default $MSQL_HOME, else ~/.local/share/msql)")
	fs.BoolVar(&f.keepRunning, "keep-running", false, "leave the embedded PostgreSQL running when the last msql using it exits (msql stop stops it)")
	fs.BoolVar(&f.throwaway, "throwaway", false, "run the embedded PostgreSQL without fsync, synchronous commit and full-page writes: faster, but a power loss can lose rows reported written and roll the catalog back; for tests and demo data only")
}

// declaredTables are the configuration's tables; none declared is the
// embedded default's, the demo's table.
func declaredTables(s settings.Settings) []meterstore.TableConfig {
	if len(s.Tables) == 0 {
		return []meterstore.TableConfig{embedded.Table()}
	}
	return s.Tables
}

// deployment is an opened deployment: the store (both tiers of every table,
// their archivers, one engine) and the resources msql opened for it.
type deployment struct {
	pool     *pgxpool.Pool
	cat      *catalog.Catalog
	store    *store.Store
	engine   *engine.Engine
	server   *embedded.Deployment // the embedded default, when this process opened it
	embedded bool
	home     string
	dsn      string
	// warehouse is the Iceberg warehouse URI the catalog writes to.
	warehouse string
	tables    []meterstore.TableConfig
	config    configFile // empty path: no configuration file
	timeZone  string     // [engine] time_zone; empty is UTC
	memory    string     // [engine] memory_limit (or --memory-limit); empty is DuckDB's default
	spill     string     // [engine] temp_directory; empty is the system's temporary directory
	confined  int        // [serve] confined_databases (or --confined-databases); 0 is the engine's default
	// extensions are DuckDB's postgres and iceberg extensions: [engine]
	// extension_directory, hot_path, cold_path, else the environment's.
	extensions engine.Extensions
	log        *slog.Logger // nil discards the engine's start-up line
}

// refreshSystemTables re-reads every Iceberg table and recomputes the system
// tables (system.tables, .config, .resolution, .snapshots, .partitions) at the
// instant it returns: what the shell does when it opens and on .refresh, and
// msql serve at start, on SIGHUP and every --system-refresh.
func (d *deployment) refreshSystemTables(ctx context.Context) (time.Time, error) {
	for _, tb := range d.store.Tables() {
		if err := tb.Cold().Refresh(ctx); err != nil {
			return time.Time{}, fmt.Errorf("refresh the system tables: %w", err)
		}
	}
	now := time.Now()
	if err := d.engine.RefreshSystemTables(ctx, now); err != nil {
		return time.Time{}, fmt.Errorf("refresh the system tables: %w", err)
	}
	return now, nil
}

// tableLayouts is each open table's configuration as its files are laid out:
// the declared one, or the stored layout of a quarantined table.
func (d *deployment) tableLayouts() []meterstore.TableConfig {
	var out []meterstore.TableConfig
	for _, t := range d.store.Tables() {
		out = append(out, t.Config())
	}
	return out
}

// Close releases everything in reverse order of opening and joins the errors.
func (d *deployment) Close() error {
	var errs []error
	if d.store != nil {
		errs = append(errs, d.store.Close())
	}
	if d.cat != nil {
		errs = append(errs, d.cat.Close())
	}
	if d.pool != nil {
		d.pool.Close()
	}
	if d.server != nil {
		errs = append(errs, d.server.Close())
	}
	return errors.Join(errs...)
}

// tablesNamed is every table of the deployment, or only the one --table names.
func (d *deployment) tablesNamed(name string) ([]*store.Table, error) {
	if name == "" {
		return d.store.Tables(), nil
	}
	t, err := d.table(name)
	if err != nil {
		return nil, err
	}
	return []*store.Table{t}, nil
}

// table finds a configured table by physical or resolved name ("" = the first).
func (d *deployment) table(name string) (*store.Table, error) {
	ts := d.store.Tables()
	if name == "" {
		return ts[0], nil
	}
	if t, ok := d.store.Table(name); ok {
		return t, nil
	}
	var names []string
	for _, t := range ts {
		names = append(names, t.Config().Name())
	}
	return nil, withHint(fmt.Errorf("%w: no table %q", errUsage, name), "--table "+strings.Join(names, " | "))
}

// homeDir is the embedded default's data directory.
func (f *deployFlags) homeDir() string {
	if f.home != "" {
		return f.home
	}
	return embedded.Home()
}

// open connects to the chosen deployment and opens the store over it, creating
// the tables if missing.
func (f *deployFlags) open(ctx context.Context, io stdio) (*deployment, error) {
	d, err := f.connect(ctx, io)
	if err != nil {
		return nil, err
	}
	if err := d.openStore(ctx, nil); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// openTable opens the deployment and finds the table --table names ("" = the
// first); on an error nothing is left open.
func (f *deployFlags) openTable(ctx context.Context, io stdio, name string) (*deployment, *store.Table, error) {
	d, err := f.open(ctx, io)
	if err != nil {
		return nil, nil, err
	}
	tb, err := d.table(name)
	if err != nil {
		d.Close()
		return nil, nil, err
	}
	return d, tb, nil
}

// connect reaches the deployment's PostgreSQL and Iceberg catalog without
// creating any table.
func (f *deployFlags) connect(ctx context.Context, io stdio) (*deployment, error) {
	var (
		dsn       = f.dsn
		warehouse = f.warehouse
		catKind   = "sql"
		catURI    string
		namespace string
		s3        settings.S3Settings
		d         = &deployment{log: f.log}
	)
	isEmbedded := f.dsn == "" && f.warehouse == ""
	var engineSettings settings.EngineSettings
	d.tables = []meterstore.TableConfig{embedded.Table()}
	switch {
	case f.config != "":
		d.config.path = f.config
		s, sum, err := d.config.read()
		if err != nil {
			return nil, err
		}
		d.config.sum = sum
		// A configuration without [hot] (only [[users]] for msql serve, say)
		// describes the embedded default, whose table is the demo's.
		isEmbedded = isEmbedded && s.Hot.URL == ""
		d.tables = declaredTables(s)
		if len(s.Tables) == 0 && !isEmbedded {
			return nil, withHint(errors.New("the configuration declares no [[tables]]"), "add a [[tables]] section with name = \"readings_versions\"")
		}
		d.timeZone, d.memory, d.spill, engineSettings = s.Engine.TimeZone, s.Engine.MemoryLimit, s.Engine.TempDirectory, s.Engine
		d.confined = s.Serve.ConfinedDatabases
		if dsn == "" {
			dsn = s.Hot.URL
		}
		if warehouse == "" {
			warehouse = s.Cold.Warehouse
		}
		if s.Cold.Catalog != "" {
			catKind = s.Cold.Catalog
		}
		catURI, namespace, s3 = s.Cold.URI, s.Cold.Namespace, s.Cold.S3
	case !isEmbedded && (f.dsn == "" || f.warehouse == ""):
		return nil, withHint(fmt.Errorf("%w: --dsn and --warehouse go together", errUsage), "msql --dsn postgres://… --warehouse file:///…")
	}
	if err := d.configureExtensions(engineSettings); err != nil {
		return nil, err
	}
	if f.throwaway && !isEmbedded {
		return nil, withHint(fmt.Errorf("%w: --throwaway applies to the embedded PostgreSQL only", errUsage), "drop --throwaway; a deployment's own PostgreSQL keeps its settings")
	}
	if isEmbedded {
		emb, err := embedded.Open(ctx, embedded.Options{Home: f.homeDir(), KeepRunning: f.keepRunning, Throwaway: f.throwaway, Log: msqlLine{io.err}})
		if err != nil {
			if errors.Is(err, embedded.ErrNoPostgres) {
				return nil, withHint(err, "apt-get install postgresql")
			}
			return nil, err
		}
		d.server, d.embedded, d.home = emb, true, emb.Home
		dsn = emb.DSN
		if warehouse == "" {
			warehouse = emb.Warehouse
		}
	}
	if dsn == "" {
		d.Close()
		return nil, withHint(errors.New("no PostgreSQL for the hot tier"), "set [hot] url in the configuration, or pass --dsn")
	}
	d.dsn, d.warehouse = dsn, warehouse
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	d.pool = pool
	if err := pool.Ping(ctx); err != nil {
		d.Close()
		return nil, withHint(fmt.Errorf("connect to PostgreSQL %s: %w", redact(dsn), err), "check --dsn / [hot] url, and that the server runs")
	}
	f.budgetMemory(ctx, d)
	if f.confinedDatabases > 0 {
		d.confined = f.confinedDatabases
	}
	opt := catalog.Options{Kind: catKind, DSN: dsn, Warehouse: warehouse, S3: s3, Namespace: namespace, Pool: pool}
	if catKind == "rest" {
		opt.URI = catURI
	} else if catURI != "" {
		opt.DSN = catURI
	}
	d.cat, err = catalog.Open(ctx, opt)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("open Iceberg catalog: %w", err)
	}
	return d, nil
}

// configureExtensions takes the extension settings of [engine], each empty
// one from the environment (MSQL_DUCKDB_EXTENSIONS, MSQL_PATHS).
func (d *deployment) configureExtensions(s settings.EngineSettings) error {
	x, err := engine.ExtensionsFromEnv()
	if err != nil {
		return withHint(err, "set MSQL_PATHS to default, go or extension")
	}
	if s.ExtensionDirectory != "" {
		x.Directory = s.ExtensionDirectory
	}
	for _, p := range []struct {
		setting string
		path    *engine.PathChoice
	}{{s.HotPath, &x.Hot}, {s.ColdPath, &x.Cold}} {
		if p.setting == "" {
			continue
		}
		if *p.path, err = engine.ParsePathChoice(p.setting); err != nil {
			return err
		}
	}
	d.extensions = x
	return nil
}

// openStore creates the tables in both tiers if missing and opens the store.
func (d *deployment) openStore(ctx context.Context, progress func(archive.Progress)) error {
	st, err := d.newStore(ctx, d.timeZone, progress)
	if err != nil {
		return err
	}
	d.store, d.engine = st, st.Engine()
	return nil
}

func (d *deployment) newStore(ctx context.Context, zone string, progress func(archive.Progress)) (*store.Store, error) {
	return store.Open(ctx, store.Config{Pool: d.pool, Catalog: d.cat, Tables: d.tables, TimeZone: zone, MemoryLimit: d.memory, ConfinedDatabases: d.confined, TempDirectory: d.spill, ArchiveProgress: progress,
		Extensions: d.extensions, Log: d.engineLog()})
}

// reopenEngine replaces the store and its engine by ones whose session time
// zone is zone ("" = UTC) and fills the new engine's system tables; on an
// error the open store stays.
func (d *deployment) reopenEngine(ctx context.Context, zone string) error {
	st, err := d.newStore(ctx, zone, nil)
	if err != nil {
		return err
	}
	old := d.store
	d.store, d.engine = st, st.Engine()
	if _, err := d.refreshSystemTables(ctx); err != nil {
		d.store, d.engine = old, old.Engine()
		return errors.Join(err, st.Close())
	}
	return old.Close()
}

// engineLog is where the engine's start-up line goes.
func (d *deployment) engineLog() *slog.Logger {
	if d.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.log
}

// existingTables names the configured tables that already exist in PostgreSQL.
func (d *deployment) existingTables(ctx context.Context) ([]string, error) {
	var names []string
	for _, t := range d.tables {
		var n int
		if err := d.pool.QueryRow(ctx, "SELECT count(*) FROM pg_class c WHERE c.relname = $1 AND c.relkind IN ('r','p')", t.Name()).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			names = append(names, t.Name())
		}
	}
	var catalogTables int
	if err := d.pool.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname = 'iceberg_tables'").Scan(&catalogTables); err != nil {
		return nil, err
	}
	if catalogTables > 0 {
		rows, err := d.pool.Query(ctx, "SELECT table_name FROM iceberg_tables")
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				return nil, err
			}
			names = append(names, "iceberg:"+n)
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// msqlLine prefixes what the embedded default reports with the program's name.
type msqlLine struct{ w io.Writer }

func (m msqlLine) Write(p []byte) (int, error) {
	if _, err := fmt.Fprintf(m.w, "msql: %s", p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(dsn)"
	}
	return u.Redacted()
}
