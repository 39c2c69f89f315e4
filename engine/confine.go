package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore/internal/duckstream"
	"github.com/meterstore/meterstore/internal/sqltext"
)

// A confined handle (Scoped, Isolated or Walled) runs its statements in a
// DuckDB database of its own kind, walled off by DuckDB itself:
//
//	no extension loaded, no database attached, no secret
//	enable_external_access       = false (no file, no URL, no ATTACH, no INSTALL/LOAD of a path)
//	allowed_directories          = its own spill directory only, which DuckDB
//	                               adds itself so that the database can spill:
//	                               a fresh directory per database (spillDirectory),
//	                               holding nothing but what this database wrote
//	autoinstall/autoload of extensions off
//	lock_configuration           = true  (no SET/RESET/PRAGMA can undo the above)
//
// Rows reach it only through relations the engine hands it, with the scope
// applied below them: the hot half through meter_hot_scan (the Go page scan,
// scope pushed into PostgreSQL's WHERE), the cold half through meter_fed_scan
// from the engine's own database, which reads the planned files with the
// scope and range in the file reader's filter (confine_feed.go). The gate (one
// SELECT, no file-reading table function, no unknown relation, no setting)
// runs first and gives the clear refusal; this wall is the boundary: a
// statement that slipped past the gate reaches no file but its own spill
// directory's — not the warehouse, not its own tenant's files, not another
// database's spill directory.
// Databases are keyed by the handle's scope and isolation (one per scope in
// use); at most Config.ConfinedDatabases are open at once, each with its share
// of the memory limit (makeRoomForConfined).
// Both settings are database-wide and lock_configuration cannot be lifted, so
// the wall cannot live in the database that also serves the unrestricted
// handle DB() (its COPY … TO and read_parquet of arbitrary paths must keep
// working).
func (e *Engine) confined(ctx context.Context) (*sql.Conn, *duckDB, error) {
	key := e.confinedKey()
	s := e.shared
	s.confinedMu.Lock()
	defer s.confinedMu.Unlock()
	d := s.currentConfined(key)
	if d == nil {
		if err := s.makeRoomForConfined(); err != nil {
			return nil, nil, err
		}
		var err error
		if d, err = s.openConfined(ctx, key, e.systemView()); err != nil {
			return nil, nil, err
		}
	}
	s.confinedUses++
	d.lastUse = s.confinedUses
	// The connection is taken under confinedMu: from here on the database
	// counts as running a statement, and makeRoomForConfined leaves it open.
	c, err := d.db.Conn(ctx)
	return c, d, err
}

// confinedKey names the handle's confined database: its scope and the table
// it is isolated to. Handles that see the same rows share one.
func (e *Engine) confinedKey() string {
	return strings.Join(e.Scope(), "\x00") + "\x01" + e.view.isolated
}

// openConfined opens a confined database with the system tables last
// refreshed, as far as sys shows them, and keeps it under key.
func (s *Engine) openConfined(ctx context.Context, key string, sys *systemView) (*duckDB, error) {
	extra := []string{
		"SET GLOBAL memory_limit = " + sqltext.String(s.confinedMemory),
		"SET GLOBAL autoinstall_known_extensions = false",
		"SET GLOBAL autoload_known_extensions = false",
	}
	// The wall limits what a statement may reach, never how DuckDB plans
	// it: the optimizers are the main database's (top_n_window_elimination
	// on, which turns a ROW_NUMBER() top-n — ranked resolution, the latest
	// reading per meter — into an aggregate), so a statement runs under one
	// plan in the shell and in a server.
	extra = append(extra, "SET GLOBAL enable_external_access = false", "SET GLOBAL lock_configuration = true")
	d, err := s.openDuckDB(ctx, "", extra, func(c *sql.Conn) error { return s.registerConfinedScans(c, key) }, sys.held(s.tableList()))
	if err != nil {
		return nil, fmt.Errorf("engine: open the confined session database: %w", err)
	}
	d.system, d.mains = sys, duckstream.NewKept[uint64, *keptMain](maxKeptMains)
	s.sysMu.Lock()
	defer s.sysMu.Unlock()
	if rows := s.lastSystem; rows != nil {
		if err := writeSystemTables(ctx, d.db, d.catalog, sys.visible(rows)); err != nil {
			d.db.Close()
			return nil, err
		}
	}
	if s.confinedDBs == nil {
		s.confinedDBs = map[string]*duckDB{}
	}
	s.confinedDBs[key] = d
	return d, nil
}

func (s *Engine) currentConfined(key string) *duckDB {
	s.sysMu.Lock()
	defer s.sysMu.Unlock()
	return s.confinedDBs[key]
}

// dropConfined forgets the confined database d, which a fatal error
// invalidated, and closes it: the next confined statement opens a fresh one.
// Statements that ran in d at once all fail and all drop it: only the first
// closes it.
func (s *Engine) dropConfined(d *duckDB) {
	s.sysMu.Lock()
	kept := false
	for k, x := range s.confinedDBs {
		if x == d {
			delete(s.confinedDBs, k)
			kept = true
		}
	}
	s.sysMu.Unlock()
	if kept {
		d.close()
	}
}

// invalidated is whether err is DuckDB's refusal of a database that an
// earlier fatal error invalidated; such a database fails every statement.
func invalidated(err error) bool {
	return err != nil && strings.Contains(err.Error(), "database has been invalidated")
}

// mayInvalidate is whether err can be an error that invalidated the
// database it ran in: DuckDB's fatal and internal errors (duckdb-go types
// them by the message's prefix, "FATAL Error" / "INTERNAL Error", which an
// error passed on as text still carries). A syntax, binder, conversion or
// constraint error, an interrupt or an error of the engine's own leave the
// database as it was.
func mayInvalidate(err error) bool {
	var de *duckdb.Error
	if errors.As(err, &de) {
		return de.Type == duckdb.ErrorTypeFatal || de.Type == duckdb.ErrorTypeInternal
	}
	msg := err.Error()
	return strings.Contains(msg, "FATAL Error") || strings.Contains(msg, "INTERNAL Error")
}

// conn takes a connection of the handle's database, and names that
// database.
func (e *Engine) conn(ctx context.Context) (*sql.Conn, *duckDB, error) {
	if !e.Confined() {
		c, err := e.shared.db.Conn(ctx)
		return c, &duckDB{db: e.shared.db, catalog: e.shared.catalog}, err
	}
	for {
		c, d, err := e.confined(ctx)
		if d != nil && invalidated(err) {
			e.shared.dropConfined(d)
			continue
		}
		return c, d, err
	}
}

// afterFailure checks the database a statement failed in (err) and, if a
// fatal error invalidated it, drops it: the confined database serves every
// server session, so one that a fatal error invalidated is replaced, not kept
// failing for everyone until a restart. Only a failed statement can have
// been the fatal one, and only with an error that can be fatal
// (mayInvalidate), so a statement that succeeds, or fails with a user's
// syntax error or a cancel, costs no check.
func (e *Engine) afterFailure(d *duckDB, err error) {
	if err == nil || d == nil || !e.Confined() {
		return
	}
	if !invalidated(err) {
		if !mayInvalidate(err) {
			return
		}
		e.shared.failureProbes.Add(1)
		if _, err = d.db.ExecContext(context.Background(), "SELECT 1"); !invalidated(err) {
			return
		}
	}
	e.shared.dropConfined(d)
}

// close closes the database and the statements it keeps prepared. DuckDB's
// close turns its allocator's background threads off for the whole process,
// so they are turned on again where the process had them on: otherwise the
// memory every other database frees stays resident while the server idles.
func (d *duckDB) close() error {
	var err error
	if d.mains != nil {
		err = d.mains.Close()
	}
	err = errors.Join(err, d.db.Close())
	_, restoreErr := duckstream.KeepReturningFreedMemory()
	return errors.Join(err, restoreErr)
}

// busy is whether a statement runs in the database: a connection is in use
// besides those its kept statements hold.
func (d *duckDB) busy() bool {
	held := 0
	if d.mains != nil {
		held = d.mains.Len()
	}
	return d.db.Stats().InUse > held
}

// databases lists the engine's DuckDB databases (the confined ones opened).
func (e *Engine) databases() []*duckDB {
	out := []*duckDB{{db: e.db, catalog: e.catalog}}
	for _, d := range e.confinedDBs { // the caller holds sysMu
		out = append(out, d)
	}
	return out
}

// closeConfined closes every confined database.
func (e *Engine) closeConfined() error {
	e.sysMu.Lock()
	defer e.sysMu.Unlock()
	var err error
	for k, d := range e.confinedDBs {
		err = errors.Join(err, d.close())
		delete(e.confinedDBs, k)
	}
	return err
}

// confinementLine is EXPLAIN's line on the handle's wall.
func (e *Engine) confinementLine() string {
	var who []string
	if sc := e.Scope(); len(sc) > 0 {
		who = append(who, "scope "+strings.Join(sc, ", "))
	}
	if e.view.isolated != "" {
		who = append(who, "table "+e.view.isolated)
	}
	if len(who) == 0 {
		who = append(who, "walled")
	}
	return fmt.Sprintf("session: confined (%s) — a DuckDB database without extensions, attached databases or secrets, external access off, configuration locked; no file readable; hot tier through meter_hot_scan; cold tier read by the engine's database and fed through meter_fed_scan",
		strings.Join(who, "; "))
}
