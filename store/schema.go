package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/internal/testhooks"
)

// ErrQuarantined: the declared configuration narrows the table's stored
// schema (archive.ErrQuarantined): archival and writes are refused, queries
// answer from the stored layout, until the configuration agrees again.
var ErrQuarantined = archive.ErrQuarantined

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
	if h := s.hooks.Schema; h != nil {
		if err := h(testhooks.AfterColdSchema); err != nil {
			return nil, fmt.Errorf("table %s: schema evolution stopped %s: %w", tc.Name(), testhooks.AfterColdSchema, err)
		}
	}
	h := hot.New(s.cfg.Pool, layout)
	if err := h.CreateTables(ctx, s.cfg.Now()); err != nil {
		return nil, err
	}
	t := &Table{st: s, cfg: layout, declared: tc, hot: h, cold: cold,
		archiver: archive.New(h, cold, archive.Options{Progress: s.cfg.ArchiveProgress, Hook: s.hooks.Archive, Declared: tc})}
	h.CheckAgainstCold(t.coldReaching)
	cold.HoldAgainstHot(h.HoldReadings)
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

// writable refuses a write to a table purged through this handle, or
// quarantined by a change of what identifies a reading (the merge key, the
// time model): a row written under the stored meaning would mean another
// reading under the declared one. A quarantine for another reason — a column
// the declaration lacks, say, in a process whose configuration predates a
// column another one added — leaves writes alone: they go to the stored
// layout and mean the same under both; only archival waits.
func (t *Table) writable() error {
	if err := t.usable(); err != nil {
		return err
	}
	check, err := t.cold.CheckSchema(t.declared)
	if err != nil {
		return err
	}
	var identity []string
	for _, c := range check.Unsafe() {
		switch c.Kind {
		case catalog.ChangeNewIdentity, catalog.ChangeIdentityDropped, catalog.ChangeTimeModel:
			identity = append(identity, fmt.Sprintf("%s %s: %s", c.Kind, c.Column, c.Detail))
		}
	}
	if len(identity) > 0 {
		return fmt.Errorf("write to %s: %w: %s; queries answer from the stored layout until the configuration agrees with it again",
			t.cfg.Name(), ErrQuarantined, strings.Join(identity, "; "))
	}
	return nil
}

// Evolve applies a new declaration of one of the store's tables while the
// store runs, as Open would apply it (openTable): an additive change to both
// tiers, Iceberg first; a narrowing one quarantines the table. The engine
// reads the table in its new layout from its next statement on, and the
// system tables are refreshed (system.resolution renders the new columns).
// The table's handle is replaced: a *Table taken before keeps the old
// declaration, which the cold table's schema now outgrows (its archival
// halts).
func (s *Store) Evolve(ctx context.Context, tc meterstore.TableConfig) (*Table, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.tables, func(t *Table) bool { return t.cfg.Name() == tc.Name() })
	if i < 0 {
		return nil, fmt.Errorf("evolve %s: the store has no such table", tc.Name())
	}
	t, err := s.openTable(ctx, tc)
	if err != nil {
		return nil, fmt.Errorf("evolve %s: %w", tc.Name(), err)
	}
	if err := s.eng.SetTable(t.engineTable()); err != nil {
		return nil, fmt.Errorf("evolve %s: %w", tc.Name(), err)
	}
	next := slices.Clone(s.tables)
	next[i] = t
	s.tables = next
	if err := s.eng.RefreshSystemTables(ctx, s.cfg.Now()); err != nil {
		return t, fmt.Errorf("evolve %s: %w", tc.Name(), err)
	}
	return t, nil
}

// Redeclare applies a configuration read again while the store runs — another
// process may have added a column with it — as Evolve does, to each table whose
// declaration changed; tables declared as before are left alone. It returns
// the tables it evolved. A table cannot be opened or closed while the store
// runs: one the store lacks, or one tcs no longer declares, is named in the
// error, and every other table is still redeclared.
func (s *Store) Redeclare(ctx context.Context, tcs []meterstore.TableConfig) ([]string, error) {
	var evolved []string
	var errs []error
	held := map[string]*Table{}
	for _, t := range s.tableList() {
		held[t.cfg.Name()] = t
	}
	for _, tc := range tcs {
		t, ok := held[tc.Name()]
		delete(held, tc.Name())
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("table %s is declared but not open: restart the process to open it", tc.Name()))
		case !reflect.DeepEqual(t.declared.Spec(), tc.Spec()):
			if _, err := s.Evolve(ctx, tc); err != nil {
				errs = append(errs, err)
				continue
			}
			evolved = append(evolved, tc.Name())
		}
	}
	for name := range held {
		errs = append(errs, fmt.Errorf("table %s is open but no longer declared: it stays open until the process restarts", name))
	}
	return evolved, errors.Join(errs...)
}
