package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/meterstore/meterstore/engine/plan"
)

// A confined handle (Scoped, Isolated or Walled) runs its statements in a
// DuckDB database of its own kind, walled off by DuckDB itself:
//
//	no extension loaded, no database attached, no secret (the hot half through
//	                              meter_hot_scan, files on object storage through meter_cold_scan)
//	allowed_directories          = per visible table, the directory that holds only what the
//	                              handle may see: a scoped handle's partition directory
//	                              (<location>/data/tenant=T/), an unscoped one's table location;
//	                              none for a warehouse on object storage
//	enable_external_access       = false (no other file, no ATTACH, no INSTALL/LOAD of a path)
//	autoinstall/autoload of extensions off
//	lock_configuration           = true  (no SET/RESET/PRAGMA can undo the above)
//
// The gate (one SELECT, no file-reading table function, no unknown relation,
// no setting) runs first and gives the clear refusal; this wall is the
// boundary. A statement that slipped past the gate still reaches no file of
// another tenant: the engine's own relations hand the database every other
// row — a cold file outside the allowed directory through the Go reader, the
// hot tier through the Go page scan — with the scope applied below them.
// Databases are keyed by their allowed directories (one per scope in use);
// at most Config.ConfinedDatabases are open at once, each with its share of
// the memory limit (makeRoomForConfined).
// Both settings are database-wide and lock_configuration cannot be lifted, so
// the wall cannot live in the database that also serves the unrestricted
// handle DB() (its COPY … TO and read_parquet of arbitrary paths must keep
// working).
func (e *Engine) confined(ctx context.Context) (*sql.Conn, *duckDB, error) {
	dirs := e.confinedDirs()
	key := strings.Join(dirs, "\x00")
	s := e.shared
	s.confinedMu.Lock()
	defer s.confinedMu.Unlock()
	d := s.currentConfined(key)
	if d == nil {
		if err := s.makeRoomForConfined(); err != nil {
			return nil, nil, err
		}
		var err error
		if d, err = s.openConfined(ctx, key, dirs); err != nil {
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

// confinedDirs are the directories the handle's confined database may read
// files below (plan.ConfinedDirs).
func (e *Engine) confinedDirs() []string {
	return plan.ConfinedDirs(e.planTables(), e.view.scope)
}

// openConfined opens the confined database of the allowed directories dirs
// with the system tables last refreshed and keeps it under key.
func (s *Engine) openConfined(ctx context.Context, key string, dirs []string) (*duckDB, error) {
	extra := []string{
		"SET GLOBAL memory_limit = " + sqlString(s.confinedMemory),
		"SET GLOBAL autoinstall_known_extensions = false",
		"SET GLOBAL autoload_known_extensions = false",
	}
	quoted := make([]string, len(dirs))
	for i, d := range dirs {
		quoted[i] = sqlString(d)
	}
	// An empty list is DuckDB's default: no directory.
	if len(dirs) > 0 {
		extra = append(extra, "SET GLOBAL allowed_directories = ["+strings.Join(quoted, ", ")+"]")
	}
	// The wall limits what a statement may reach, never how DuckDB plans
	// it: the optimizers are the main database's (top_n_window_elimination
	// on, which turns a ROW_NUMBER() top-n — ranked resolution, the latest
	// reading per meter — into an aggregate), so a statement runs under one
	// plan in the shell and in a server.
	extra = append(extra, "SET GLOBAL enable_external_access = false", "SET GLOBAL lock_configuration = true")
	d, err := s.openDuckDB(ctx, "", extra)
	if err != nil {
		return nil, fmt.Errorf("engine: open the confined session database: %w", err)
	}
	s.sysMu.Lock()
	defer s.sysMu.Unlock()
	if rows := s.lastSystem; rows != nil {
		if err := writeSystemTables(ctx, d.db, d.catalog, rows); err != nil {
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
func (s *Engine) dropConfined(d *duckDB) {
	s.sysMu.Lock()
	for k, x := range s.confinedDBs {
		if x == d {
			delete(s.confinedDBs, k)
		}
	}
	s.sysMu.Unlock()
	d.db.Close()
}

// invalidated is whether err is DuckDB's refusal of a database that an
// earlier fatal error invalidated; such a database fails every statement.
func invalidated(err error) bool {
	return err != nil && strings.Contains(err.Error(), "database has been invalidated")
}

// conn takes a connection of the handle's database. A confined handle's
// connection is checked first: the confined database serves every server
// session, so one that a fatal error invalidated is replaced, not kept
// failing for everyone until a restart.
func (e *Engine) conn(ctx context.Context) (*sql.Conn, string, error) {
	if !e.Confined() {
		c, err := e.shared.db.Conn(ctx)
		return c, e.shared.catalog, err
	}
	for {
		c, d, err := e.confined(ctx)
		if d == nil {
			return nil, "", err
		}
		if err == nil {
			if _, err = c.ExecContext(ctx, "SELECT 1"); err != nil {
				c.Close()
			}
		}
		if invalidated(err) {
			e.shared.dropConfined(d)
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return c, d.catalog, nil
	}
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
		err = errors.Join(err, d.db.Close())
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
	files := "no directory: every cold file through meter_cold_scan"
	if dirs := e.confinedDirs(); len(dirs) > 0 {
		files = "read_parquet below " + strings.Join(dirs, ", ") + " only, any other cold file through meter_cold_scan"
	}
	return fmt.Sprintf("session: confined (%s) — a DuckDB database without extensions, attached databases or secrets, external access off, configuration locked; hot tier through meter_hot_scan; %s",
		strings.Join(who, "; "), files)
}
