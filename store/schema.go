package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"meterstore"
	"meterstore/archive"
	"meterstore/catalog"
	"meterstore/engine"
	"meterstore/hot"
)

// ErrQuarantined: the declared configuration narrows the table's stored
// schema (archive.ErrQuarantined): archival and writes are refused, queries
// answer from the stored layout, until the configuration agrees again.
var ErrQuarantined = archive.ErrQuarantined

// SchemaStep names the points of a table's schema evolution a crash test can
// stop Open at.
type SchemaStep string

// AfterColdSchema: the cold table holds the added columns, PostgreSQL not yet.
const AfterColdSchema SchemaStep = "after-cold-schema"

// SchemaState is what Open found and did about a table's schema.
type SchemaState struct {
	// Added lists the columns Open added to the hot tier (the cold tier's
	// schema commit adds them first).
	Added []string
	// Unenforced names each coded or checked column whose CHECK PostgreSQL
	// lacks (a value list declared on a column that already existed), with
	// the ALTER TABLE that adds it; the write path validates it meanwhile.
	Unenforced []string
	// Quarantine names each narrowing change between the declared
	// configuration and the cold table; empty when there is none.
	Quarantine []string
}

// openTable opens one table's two tiers for the declared configuration tc.
// An additive change is applied Iceberg first — a new field id in one schema
// commit, the resolved view re-rendered — then PostgreSQL (hot.AddColumns):
// a crash between the two leaves the cold table ahead, and the next Open
// finds no cold change left and finishes the hot one. A narrowing change
// applies nothing: the table opens quarantined, both tiers in the layout the
// cold table stores, so queries go on answering what they answered.
func (s *Store) openTable(ctx context.Context, tc meterstore.TableConfig) (*Table, error) {
	cold, err := s.cfg.Catalog.CreateTable(ctx, tc)
	if err != nil {
		return nil, err
	}
	layout, quarantined := tc, false
	if _, err := cold.Evolve(ctx); errors.Is(err, catalog.ErrUnsafeSchema) {
		if layout, err = cold.StoredLayout(tc); err != nil {
			return nil, err
		}
		cold, quarantined = cold.WithConfig(layout), true
	} else if err != nil {
		return nil, err
	}
	if h := s.cfg.SchemaHook; h != nil {
		if err := h(AfterColdSchema); err != nil {
			return nil, fmt.Errorf("table %s: schema evolution stopped %s: %w", tc.Name(), AfterColdSchema, err)
		}
	}
	h := hot.New(s.cfg.Pool, layout)
	if err := h.CreateTables(ctx, s.cfg.Now()); err != nil {
		return nil, err
	}
	t := &Table{st: s, cfg: layout, declared: tc, hot: h, cold: cold,
		archiver: archive.New(h, cold, archive.Options{Progress: s.cfg.ArchiveProgress, Hook: s.cfg.ArchiveHook, Declared: tc})}
	if quarantined {
		return t, nil
	}
	if t.schema.Added, err = h.AddColumns(ctx); err != nil {
		return nil, err
	}
	if t.schema.Unenforced, err = h.UncheckedColumns(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// engineTable is the table as the engine reads it.
func (t *Table) engineTable() engine.Table {
	return engine.Table{Config: t.cfg, Hot: HotTierOf(t.hot), Cold: coldTier{t: t.cold, quarantine: t.archiver.Quarantine}}
}

// SchemaState is what Open did about the table's schema, and the narrowing
// changes that quarantine it as the cold table was last read.
func (t *Table) SchemaState() SchemaState {
	s := t.schema
	s.Quarantine = t.archiver.Quarantine()
	return s
}

// writable refuses a write to a table purged through this handle or
// quarantined: a row written in a layout the configuration disagrees with
// would mean something else under either.
func (t *Table) writable() error {
	if err := t.usable(); err != nil {
		return err
	}
	if q := t.archiver.Quarantine(); len(q) > 0 {
		return fmt.Errorf("write to %s: %w: %s; queries answer from the stored layout until the configuration agrees with it again",
			t.cfg.Name(), ErrQuarantined, strings.Join(q, "; "))
	}
	return nil
}
