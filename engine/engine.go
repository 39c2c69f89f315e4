package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine/plan"
	"github.com/meterstore/meterstore/internal/duckstream"
	"github.com/meterstore/meterstore/internal/sqltext"
	"github.com/meterstore/meterstore/udf"
)

// ColdTier is one table's Iceberg side: what the planner reads
// (plan.ColdTier), and the snapshots and partitions the system tables show.
// catalog.Table implements it through an adapter.
type ColdTier interface {
	plan.ColdTier
	// Snapshots lists the table's snapshots, oldest first.
	Snapshots(ctx context.Context) ([]SnapshotInfo, error)
	// Partitions lists the partitions of the current snapshot with their
	// files, bytes and compaction state (system.partitions).
	Partitions(ctx context.Context) ([]PartitionInfo, error)
}

// SnapshotInfo is one Iceberg snapshot, as system.snapshots shows it.
type SnapshotInfo struct {
	ID          int64
	CommittedAt time.Time
	Watermark   *time.Time // nil where the snapshot carries none (a foreign writer)
	Operation   string
}

// PartitionInfo is one partition of a cold table, as system.partitions shows it.
type PartitionInfo struct {
	Name              string    // the partition path, e.g. tenant=T1/from_month=2025-01
	Month             time.Time // first day of from_month; zero when the spec has none
	Files             int
	Rows, Bytes       int64
	Closed            bool       // the month lies below the watermark
	Compacted         bool       // every file is one compaction's output
	LastCompaction    *time.Time // nil when never compacted
	NewestUncompacted time.Time  // commit of the newest file no compaction wrote; zero when none
}

// HotTier is one table's PostgreSQL side: what the planner reads
// (plan.HotTier), and the rows system.tables counts as violations.
type HotTier interface {
	plan.HotTier
	// RowsBelow counts rows with "from" < w still in the PostgreSQL parent: each
	// is an invariant violation (a row no query looks for).
	RowsBelow(ctx context.Context, w time.Time) (int64, error)
}

// Table is one configured table and its two tiers.
type Table struct {
	Config meterstore.TableConfig
	Hot    HotTier
	Cold   ColdTier
}

// Config opens an engine. Tables must be non-empty.
type Config struct {
	// DuckDBPath is the DuckDB database file; empty means in-memory.
	DuckDBPath string
	Tables     []Table
	// Threads caps DuckDB's worker threads; 0 leaves DuckDB's default (one per core).
	Threads int
	// MemoryLimit caps what the engine's own DuckDB database holds in
	// memory before it spills to disk or fails the statement, in DuckDB's
	// notation ("4GB", "512MB"); empty leaves DuckDB's default, 80 % of the
	// machine's memory, which a server shares with PostgreSQL. Each confined
	// database (one per scope in use, at most ConfinedDatabases open) gets
	// MemoryLimit / (ConfinedDatabases + 1), so all of them together stay
	// within it.
	MemoryLimit string
	// ConfinedDatabases caps the confined databases open at once; a scope
	// beyond it closes the least recently used idle one (see
	// makeRoomForConfined). 0 is DefaultConfinedDatabases.
	ConfinedDatabases int
	// TempDirectory is where a statement that exceeds MemoryLimit spills
	// what DuckDB can spill (each database in a directory of its own below
	// it); empty is the system's temporary directory for an in-memory
	// database, DuckDB's default beside a database file.
	TempDirectory string
	// TimeZone is the session time zone of every DuckDB connection (an IANA
	// name, e.g. "Europe/Berlin"): it decides what a timestamp literal without
	// an offset, a ::TIMESTAMP or ::DATE cast and a TIMESTAMPTZ's text mean.
	// Empty is UTC — never the host's zone, so the same statement gives the
	// same rows wherever it runs. An unknown zone fails Open.
	TimeZone string
	// Extensions are DuckDB's postgres and iceberg extensions, where present.
	Extensions Extensions
	// Log receives the one line Open writes about the paths it chose; nil is
	// slog.Default().
	Log *slog.Logger
}

// DefaultTimeZone is the session time zone when Config.TimeZone is empty.
const DefaultTimeZone = plan.DefaultTimeZone

type tableState struct {
	cfg  meterstore.TableConfig
	hot  HotTier
	cold ColdTier
}

// Engine is an embedded DuckDB session over every configured table. It is safe
// for concurrent use; each statement runs on its own pooled connection.
type Engine struct {
	db      *sql.DB
	catalog string // the DuckDB catalog name of db ("memory" in memory)
	// tables is replaced whole (SetTable), never changed in place: a
	// statement keeps the tables it read.
	tablesMu sync.RWMutex
	tables   []*tableState
	scans    scanRegistry
	plans    planCache
	fed      fedRegistry // confined statements' cold halves (confine_feed.go)
	view     view        // the read mode and confinement of this handle
	shared   *Engine
	cfg      Config

	// confinedBinds counts DuckDB's binds of what a confined database's
	// statements read (meter_hot_scan of its own scans, meter_fed_scan): one
	// for each time a statement reading one is prepared, and again whenever
	// DuckDB binds it anew to run it — what a kept main statement is kept to
	// avoid. The fed relations' own statements in the engine's database are
	// not counted: one that reads a run's meter_cold_scan token is new each run.
	confinedBinds atomic.Int64
	// failureProbes counts the statements afterFailure ran to see whether a
	// failed statement invalidated its confined database.
	failureProbes atomic.Int64

	// fedStatements keeps the fed relations prepared in db for their
	// next run (confine_feed.go).
	fedStatements *duckstream.Statements

	// confinedDBs are the DuckDB databases of confined handles, walled off
	// from the file system (see confined), keyed by their allowed
	// directories. Each is created on first use, and anew after a fatal error
	// invalidated it; confinedMu serialises the opening, sysMu guards the map.
	confinedMu  sync.Mutex
	confinedDBs map[string]*duckDB
	// confinedUses orders the confined databases by last use (duckDB.lastUse)
	// under confinedMu; confinedMemory is each one's memory_limit.
	confinedUses   uint64
	confinedMemory string
	sysMu          sync.Mutex
	lastSystem     map[string][]systemRow
	timeZone       string // DuckDB's canonical name of Config.TimeZone

	ext extensionState // what loaded, and the path each half takes
}

type duckDB struct {
	db      *sql.DB
	catalog string
	lastUse uint64      // a confined database's last use, in confinedUses
	system  *systemView // the system rows it holds; nil: every row
	// mains are a confined database's statements kept prepared; nil for
	// the engine's own database, which keeps none.
	mains *keptMains
}

// Open creates the DuckDB database, registers the metering functions, the hot
// scan and the catalog entries of every table's two relations.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if len(cfg.Tables) == 0 {
		return nil, errors.New("engine: no tables configured")
	}
	e := &Engine{cfg: cfg}
	e.shared = e
	seen := map[string]bool{}
	for _, t := range cfg.Tables {
		for _, n := range []string{t.Config.Name(), t.Config.ResolvedName()} {
			if seen[n] {
				return nil, fmt.Errorf("engine: relation %q is declared by two tables", n)
			}
			seen[n] = true
		}
		e.tables = append(e.tables, &tableState{cfg: t.Config, hot: t.Hot, cold: t.Cold})
	}
	d, err := e.openDuckDB(ctx, cfg.DuckDBPath, nil, e.registerPlannedScans, e.tableList())
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e.db, e.catalog = d.db, d.catalog
	e.fedStatements = duckstream.NewStatements(e.db, maxFedStatements)
	if e.confinedMemory, err = e.confinedMemoryShare(ctx); err != nil {
		e.db.Close()
		return nil, fmt.Errorf("engine: %w", err)
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	log.Info("engine: " + e.ext.status.String())
	return e, nil
}

// openDuckDB opens one DuckDB database with everything a session needs —
// scans installing the table functions its planned statements read through,
// the two relations of each of tables — then runs the extra statements (the
// wall of a confined database) last.
func (e *Engine) openDuckDB(ctx context.Context, path string, extra []string, scans func(*sql.Conn) error, tables []*tableState) (*duckDB, error) {
	connector, err := duckdb.NewConnector(path, enableProgress)
	if err != nil {
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	// DuckDB's open sets its allocator's background threads for the whole
	// process to the new database's allocator_background_threads (off):
	// on again where the process had them on (msql serve), or the memory
	// every database frees stays resident while the server idles.
	if _, err := duckstream.KeepReturningFreedMemory(); err != nil {
		connector.Close()
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	db := sql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	defer conn.Close()
	out := &duckDB{db: db}
	setup := func() error {
		if err := conn.QueryRowContext(ctx, "SELECT current_database()").Scan(&out.catalog); err != nil {
			return err
		}
		if err := udf.Register(conn); err != nil {
			return err
		}
		if err := e.registerUnplanned(conn); err != nil {
			return err
		}
		if err := scans(conn); err != nil {
			return err
		}
		if err := e.setTimeZone(ctx, conn); err != nil {
			return err
		}
		if err := cacheParquetMetadata(ctx, conn); err != nil {
			return err
		}
		if err := e.loadExtensions(ctx, conn, e.db == nil); err != nil {
			return err
		}
		if e.cfg.Threads > 0 {
			if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET GLOBAL threads = %d", e.cfg.Threads)); err != nil {
				return err
			}
		}
		if e.cfg.MemoryLimit != "" {
			if _, err := conn.ExecContext(ctx, "SET GLOBAL memory_limit = "+sqltext.String(e.cfg.MemoryLimit)); err != nil {
				return fmt.Errorf("memory limit %q: %w", e.cfg.MemoryLimit, err)
			}
		}
		if dir := e.spillDirectory(path); dir != "" {
			if _, err := conn.ExecContext(ctx, "SET GLOBAL temp_directory = "+sqltext.String(dir)); err != nil {
				return fmt.Errorf("temp directory %q: %w", dir, err)
			}
		}
		for _, t := range tables {
			for _, name := range []string{t.cfg.Name(), t.cfg.ResolvedName()} {
				q := fmt.Sprintf("CREATE OR REPLACE VIEW %s AS SELECT * FROM meter_unplanned('%s')",
					meterstore.QuoteIdent(name), name)
				if _, err := conn.ExecContext(ctx, q); err != nil {
					return fmt.Errorf("register relation %s: %w", name, err)
				}
			}
		}
		if err := createSystemTables(ctx, conn, out.catalog); err != nil {
			return err
		}
		for _, q := range extra {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	}
	if err := setup(); err != nil {
		db.Close()
		return nil, err
	}
	return out, nil
}

// setTimeZone pins the session time zone of every connection of conn's
// database and records DuckDB's name for it.
func (e *Engine) setTimeZone(ctx context.Context, conn *sql.Conn) error {
	tz := e.cfg.TimeZone
	if tz == "" {
		tz = DefaultTimeZone
	}
	if _, err := conn.ExecContext(ctx, "SET GLOBAL TimeZone = "+sqltext.String(tz)); err != nil {
		return fmt.Errorf("time zone %q (an IANA name such as UTC or Europe/Berlin): %w", tz, err)
	}
	return conn.QueryRowContext(ctx, "SELECT current_setting('TimeZone')").Scan(&e.timeZone)
}

// TimeZone is the session time zone every statement is evaluated in
// (Config.TimeZone, UTC by default).
func (e *Engine) TimeZone() string { return e.shared.timeZone }

// Close releases the DuckDB database. Handles derived with AsOf, Scoped, … share
// it; close the engine Open returned, once.
func (e *Engine) Close() error {
	return errors.Join(e.shared.fedStatements.Close(), e.shared.db.Close(), e.shared.closeConfined())
}

// DB is the unrestricted DuckDB handle, for in-process callers only (the shell's
// --scratch and .export, Parquet export). It bypasses the planner: readings
// cannot be read through it, and a confined session never gets it.
func (e *Engine) DB() *sql.DB { return e.shared.db }

// tableList is every configured table as of now.
func (e *Engine) tableList() []*tableState {
	s := e.shared
	s.tablesMu.RLock()
	defer s.tablesMu.RUnlock()
	return s.tables
}

// SetTable replaces the configured table of t's name with t — its
// configuration, its tiers — from the engine's next statement on: a schema
// change applied while the engine runs (store.Store.Evolve). A statement
// already planning keeps the table it bound. The relation names cannot change.
func (e *Engine) SetTable(t Table) error {
	s := e.shared
	s.tablesMu.Lock()
	defer s.tablesMu.Unlock()
	for i, old := range s.tables {
		if old.cfg.Name() != t.Config.Name() {
			continue
		}
		if old.cfg.ResolvedName() != t.Config.ResolvedName() {
			return fmt.Errorf("engine: table %s: resolved relation %s cannot become %s", t.Config.Name(), old.cfg.ResolvedName(), t.Config.ResolvedName())
		}
		next := slices.Clone(s.tables)
		next[i] = &tableState{cfg: t.Config, hot: t.Hot, cold: t.Cold}
		s.tables = next
		return nil
	}
	return fmt.Errorf("engine: no table %s", t.Config.Name())
}

func (e *Engine) tableByRelation(name string) (*tableState, bool) {
	for _, t := range e.tableList() {
		if strings.EqualFold(t.cfg.Name(), name) || strings.EqualFold(t.cfg.ResolvedName(), name) {
			return t, true
		}
	}
	return nil, false
}

// Tables lists the configured tables.
func (e *Engine) Tables() []meterstore.TableConfig {
	var out []meterstore.TableConfig
	for _, t := range e.visibleTables() {
		out = append(out, t.cfg)
	}
	return out
}

func (e *Engine) visibleTables() []*tableState {
	if e.view.isolated == "" {
		return e.tableList()
	}
	t, _ := e.tableByRelation(e.view.isolated)
	return []*tableState{t}
}
