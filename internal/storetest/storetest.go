// Package storetest assembles a whole store for a test — a fresh database on the
// throwaway PostgreSQL, a file:// Iceberg warehouse with its SQL catalog in that
// database, both tiers of every table, an archiver per table and an engine over
// them — so test bodies stay about the behaviour they check.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"meterstore"
	"meterstore/archive"
	"meterstore/catalog"
	"meterstore/engine"
	"meterstore/hot"
	"meterstore/internal/pgtest"
)

// Store is a running store for one test.
type Store struct {
	DSN       string
	Warehouse string
	Pool      *pgxpool.Pool
	Catalog   *catalog.Catalog
	Tables    map[string]*Table // by physical name
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
	Threads     int // DuckDB's worker threads (engine.Config.Threads); 0 = DuckDB's default
}

// Start builds a store for cfgs. Everything is closed when the test ends.
func Start(t testing.TB, opt Options, cfgs ...meterstore.TableConfig) *Store {
	t.Helper()
	ctx := context.Background()
	s := &Store{DSN: pgtest.Database(t), Warehouse: "file://" + t.TempDir(), Tables: map[string]*Table{}}
	pool, err := pgxpool.New(ctx, s.DSN)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s.Pool = pool
	copt := catalog.Options{DSN: s.DSN, Warehouse: s.Warehouse, Pool: pool}
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
	var et []engine.Table
	for _, cfg := range cfgs {
		h := hot.New(pool, cfg)
		require.NoError(t, h.CreateTables(ctx, now))
		c, err := s.Catalog.CreateTable(ctx, cfg)
		require.NoError(t, err)
		s.Tables[cfg.Name()] = &Table{Config: cfg, Hot: h, Cold: c,
			Archiver: archive.New(h, c, archive.Options{Hook: opt.ArchiveHook})}
		et = append(et, engine.Table{Config: cfg, Hot: engine.HotTierOf(h), Cold: engine.ColdTierOf(c)})
	}
	s.Engine, err = engine.Open(ctx, engine.Config{Tables: et, Threads: opt.Threads})
	require.NoError(t, err)
	t.Cleanup(func() { s.Engine.Close() })
	return s
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
