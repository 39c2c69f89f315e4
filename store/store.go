// Package store is the MeterStore handle a reporting job or an ingest service
// holds: every configured table's two tiers, its archiver, and one engine over
// them. Writes route each interval to the tier that owns it (invariant 7);
// reads go through the engine.
//
//	st, err := store.Open(ctx, store.Config{Pool: pool, Catalog: cat, Tables: []meterstore.TableConfig{cfg}})
//	out, err := st.Append(ctx, series...)          // late corrections go to Iceberg
//	res, err := st.Query(ctx, "SELECT sum(value) FROM readings WHERE malo_id = $1", malo)
//	fmt.Println(res.Provenance)                    // the watermark it was computed against
//	then := st.AsKnownAt(t)                        // a View: SQL and typed reads as known at t
//	s, err := then.Series(malo).Obis("1-0:1.29.0").Collect(ctx)
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/internal/testhooks"
)

// Config assembles a store from resources the caller owns: MeterStore never owns
// a connection it did not open.
type Config struct {
	Pool    *pgxpool.Pool // the hot tier's PostgreSQL
	Catalog *catalog.Catalog
	Tables  []meterstore.TableConfig
	// DuckDBPath is the engine's DuckDB file; empty is in-memory.
	DuckDBPath string
	// Threads caps the engine's DuckDB worker threads; 0 leaves DuckDB's
	// default (one per core).
	Threads int
	// MemoryLimit caps the engine's DuckDB database, confined ones a share
	// of it (engine.Config.MemoryLimit); empty is DuckDB's default.
	MemoryLimit string
	// ConfinedDatabases caps the confined (scoped or walled) DuckDB databases
	// the engine keeps open at once (engine.Config.ConfinedDatabases); 0 is
	// engine.DefaultConfinedDatabases.
	ConfinedDatabases int
	// TempDirectory is where the engine's DuckDB databases spill
	// (engine.Config.TempDirectory); empty is the system's temporary directory.
	TempDirectory string
	// TimeZone is the engine's session time zone (engine.Config.TimeZone);
	// empty is UTC.
	TimeZone string
	// Now is the store's clock: partitions are pre-created around it, and it
	// stamps the transaction time (recorded_at) of a delivery that carries
	// none; nil is time.Now.
	Now func() time.Time
	// RecordedAtSkew is how far a delivery's own recorded_at may lie ahead of
	// Now before the write is refused (RecordedAtError); zero is
	// DefaultRecordedAtSkew. Negative turns the check off — for a clock set in
	// the past on purpose (a replay, a test's fixed day), never in production.
	RecordedAtSkew time.Duration
	// ArchiveProgress receives archival progress.
	ArchiveProgress func(archive.Progress)
	// HotBatchRows bounds the rows of one hot write transaction in Append and
	// HotWriter.Append; ≤ 0 is 20 000.
	HotBatchRows int
	// Subjects is the subject registry backing tables that declare a subject
	// column; nil means no registry (subject references are then not checked).
	Subjects *SubjectRegistry
	// Extensions are DuckDB's postgres and iceberg extensions for the engine
	// (zero: none, the Go paths); their PostgreSQL is Pool's unless given.
	Extensions engine.Extensions
	// Log receives the engine's start-up line; nil is slog.Default().
	Log *slog.Logger
}

// Store is an opened deployment. It is its own current, unconfined View:
// Query, Series, Readings and the derived views (AsOf, AsKnownAt, Scoped)
// start from it.
type Store struct {
	current
	cfg   Config
	hooks testhooks.Hooks // from Open's context; tests only
	// tables is replaced whole (Evolve), never changed in place.
	mu     sync.RWMutex
	tables []*Table
}

// current is the Store's own View, embedded under an unexported name so its
// methods are the Store's without a View field callers could replace.
type current = View

// tableList is every configured table as of now.
func (s *Store) tableList() []*Table {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tables
}

// Table is one configured table: its tiers and archiver.
type Table struct {
	st *Store
	// cfg is the layout both tiers run in: the declared one, or — the table
	// quarantined — the one the cold table stores (catalog.Table.StoredLayout).
	cfg      meterstore.TableConfig
	declared meterstore.TableConfig
	schema   SchemaState // what Open did to the schema
	hot      *hot.Store
	cold     *catalog.Table
	archiver *archive.Archiver
	purged   atomic.Bool
}

// usable refuses a table purged through this handle.
func (t *Table) usable() error {
	if t.purged.Load() {
		return fmt.Errorf("table %s: %w", t.cfg.Name(), ErrPurged)
	}
	return nil
}

// Open creates every table in both tiers if missing (CREATE … IF NOT EXISTS; the
// cold table's format and layout are verified), applies an additive schema
// change to both (see openTable) — a narrowing one quarantines the table,
// which then answers queries in its stored layout — and opens the engine.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Pool == nil || cfg.Catalog == nil || len(cfg.Tables) == 0 {
		return nil, errors.New("store: Pool, Catalog and at least one table are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Store{cfg: cfg, hooks: testhooks.From(ctx)}
	s.st = s
	var et []engine.Table
	for _, tc := range cfg.Tables {
		t, err := s.openTable(ctx, tc)
		if err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		s.tables = append(s.tables, t)
		et = append(et, t.engineTable())
	}
	ext := cfg.Extensions
	if ext.Postgres.Host == "" {
		ext.Postgres = PostgresConnOf(cfg.Pool)
	}
	if s3, ok := cfg.Catalog.ObjectStore(); ok && ext.ObjectStore == nil {
		ext.ObjectStore = &s3
		if !slices.Contains(ext.Also, "httpfs") {
			ext.Also = append(slices.Clip(ext.Also), "httpfs")
		}
	}
	eng, err := engine.Open(ctx, engine.Config{DuckDBPath: cfg.DuckDBPath, Tables: et, Threads: cfg.Threads, MemoryLimit: cfg.MemoryLimit, ConfinedDatabases: cfg.ConfinedDatabases, TempDirectory: cfg.TempDirectory, TimeZone: cfg.TimeZone, Extensions: ext, Log: cfg.Log})
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s.eng = eng
	return s, nil
}

// recordedAtSkew is RecordedAtSkew with its default; negative: no check.
func (c Config) recordedAtSkew() time.Duration {
	if c.RecordedAtSkew == 0 {
		return DefaultRecordedAtSkew
	}
	return c.RecordedAtSkew
}

// Now is the store's clock (Config.Now).
func (s *Store) Now() time.Time { return s.cfg.Now() }

// RecordedAtSkew is how far a delivery's own recorded_at may lie ahead of
// Now before a write refuses it (Config.RecordedAtSkew with its default);
// negative: not checked. An importer checks rows against it before writing,
// so one bad row refuses its batch instead of failing a commit of many.
func (s *Store) RecordedAtSkew() time.Duration { return s.cfg.recordedAtSkew() }

// Close releases the engine. The pool and catalog belong to the caller.
func (s *Store) Close() error { return s.eng.Close() }

// Tables lists the configured tables in declaration order.
func (s *Store) Tables() []*Table { return slices.Clone(s.tableList()) }

// Table finds a table by physical or resolved name.
func (s *Store) Table(name string) (*Table, bool) {
	for _, t := range s.tableList() {
		if t.cfg.Name() == name || t.cfg.ResolvedName() == name {
			return t, true
		}
	}
	return nil, false
}

// named is Table with an error naming the tables there are.
func (s *Store) named(name string) (*Table, error) {
	if t, ok := s.Table(name); ok {
		return t, nil
	}
	var names []string
	for _, t := range s.tableList() {
		names = append(names, t.cfg.Name())
	}
	return nil, fmt.Errorf("store has no table %q (tables: %s)", name, strings.Join(names, ", "))
}

// only is the single table of a one-table store; an error names the choice otherwise.
func (s *Store) only() (*Table, error) {
	ts := s.tableList()
	if len(ts) == 1 {
		return ts[0], nil
	}
	return nil, fmt.Errorf("store has %d tables; choose one with Table(name)", len(ts))
}

// onlyOf is the single table of time model m. None is ErrWrongTimeModel
// naming instead, the call for the other model; several name the choice.
func (s *Store) onlyOf(m meterstore.TimeModel, instead string) (*Table, error) {
	var found []*Table
	for _, t := range s.tableList() {
		if t.cfg.TimeModel() == m {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("store has no %s table: %w; use %s", m, ErrWrongTimeModel, instead)
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("store has %d %s tables; choose one with Table(name)", len(found), m)
}

// Append routes deliveries to the store's single interval table (see Table.Append).
func (s *Store) Append(ctx context.Context, series ...meterstore.StoredSeries) (AppendOutcome, error) {
	t, err := s.onlyOf(meterstore.Interval, "AppendReadings")
	if err != nil {
		return AppendOutcome{}, err
	}
	return t.Append(ctx, series...)
}

// AppendReadings routes register readings to the store's single point table
// (see Table.AppendReadings).
func (s *Store) AppendReadings(ctx context.Context, series ...meterstore.StoredSeries) (AppendOutcome, error) {
	t, err := s.onlyOf(meterstore.Point, "Append")
	if err != nil {
		return AppendOutcome{}, err
	}
	return t.AppendReadings(ctx, series...)
}

// AppendAuthoritative writes values the operator authored to the store's
// single interval table (see Table.AppendAuthoritative).
func (s *Store) AppendAuthoritative(ctx context.Context, series ...meterstore.StoredSeries) (AuthoritativeOutcome, error) {
	t, err := s.onlyOf(meterstore.Interval, "AppendReadings")
	if err != nil {
		return AuthoritativeOutcome{}, err
	}
	return t.AppendAuthoritative(ctx, series...)
}

// Config is the table's declaration.
func (t *Table) Config() meterstore.TableConfig { return t.cfg }

// Hot exposes the PostgreSQL tier for operations the store does not wrap.
func (t *Table) Hot() *hot.Store { return t.hot }

// Cold exposes the Iceberg tier for operations the store does not wrap.
func (t *Table) Cold() *catalog.Table { return t.cold }

// Archiver is the table's archival job.
func (t *Table) Archiver() *archive.Archiver { return t.archiver }

// Archive moves settled windows to Iceberg under the table's lease.
func (t *Table) Archive(ctx context.Context, now time.Time, maxWindows int) (archive.Outcome, error) {
	return t.archiver.Archive(ctx, now, maxWindows)
}

// VerifyInvariant checks that no row below the watermark is still in PostgreSQL.
func (t *Table) VerifyInvariant(ctx context.Context) (archive.Report, error) {
	return t.archiver.VerifyInvariant(ctx)
}

// ContradictionAcrossTiers is the cold intervals reaching above the
// watermark that rows PostgreSQL holds contradict — the hot tier's refusal of
// them, naming the first 20 and counting all — or nil
// (archive.Archiver.ContradictionAcrossTiers).
func (t *Table) ContradictionAcrossTiers(ctx context.Context) (conflict, err error) {
	return t.archiver.ContradictionAcrossTiers(ctx)
}

// Watermark is the committed tiering watermark (zero when nothing is archived).
func (t *Table) Watermark(ctx context.Context) (time.Time, error) {
	if err := t.cold.Refresh(ctx); err != nil {
		return time.Time{}, err
	}
	return t.cold.Watermark(ctx)
}

// RestoreWatermark commits the tiering watermark again to a table that lost it
// (catalog.ErrWatermarkMissing); at zero derives it from the tiers. See
// archive.Archiver.RestoreWatermark.
func (t *Table) RestoreWatermark(ctx context.Context, at time.Time) (time.Time, error) {
	return t.archiver.RestoreWatermark(ctx, at)
}
