package engine

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// A confined handle (Scoped or Isolated) runs its statements in a second DuckDB
// database of the engine, walled off from the file system by DuckDB itself:
//
//	allowed_directories          = the tables' Iceberg locations (the planned cold scans), local or s3://
//	enable_external_access       = false (no other file, no ATTACH, no INSTALL/LOAD of a path)
//	autoinstall/autoload of extensions off
//	lock_configuration           = true  (no SET/RESET/PRAGMA can undo the above)
//
// This is the second wall: the first is the planner's gate (one SELECT, no
// file-reading table function, no unknown relation — a replacement scan of
// 'file.parquet' included), which runs before anything is prepared. Both
// settings are database-wide and lock_configuration cannot be lifted, so the
// wall cannot live in the database that also serves the unrestricted handle
// DB() (its COPY … TO and read_parquet of arbitrary paths must keep working);
// hence a separate database. What the wall still allows — reading Parquet below
// a table's data directory — is unreachable from SQL because read_parquet is
// refused by the gate; only the engine's own rewritten cold scans use it, and
// they carry the scope below resolution.
func (e *Engine) confined(ctx context.Context) (*duckDB, error) {
	s := e.shared
	s.confinedMu.Lock()
	defer s.confinedMu.Unlock()
	if d := s.currentConfined(); d != nil {
		return d, nil
	}
	return s.openConfined(ctx)
}

// openConfined opens the confined database with the system tables last
// refreshed and makes it current.
func (s *Engine) openConfined(ctx context.Context) (*duckDB, error) {
	var dirs []string
	for _, t := range s.tableList() {
		d := t.cold.DataDirectory()
		switch {
		case d == "":
		case isRemote(d):
			dirs = append(dirs, sqlString(strings.TrimSuffix(d, "/")+"/"))
		default:
			// read_parquet names local paths, iceberg_scan file:// URIs.
			d = strings.TrimSuffix(d, "/") + "/"
			dirs = append(dirs, sqlString(d), sqlString("file://"+d))
		}
	}
	sort.Strings(dirs)
	extra := []string{
		"SET GLOBAL autoinstall_known_extensions = false",
		"SET GLOBAL autoload_known_extensions = false",
	}
	if len(dirs) > 0 {
		extra = append(extra, "SET GLOBAL allowed_directories = ["+strings.Join(dirs, ", ")+"]")
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
	s.confinedDB = d
	return d, nil
}

func (s *Engine) currentConfined() *duckDB {
	s.sysMu.Lock()
	defer s.sysMu.Unlock()
	return s.confinedDB
}

// dropConfined forgets the confined database d, which a fatal error
// invalidated, and closes it: the next confined statement opens a fresh one.
func (s *Engine) dropConfined(d *duckDB) {
	s.sysMu.Lock()
	if s.confinedDB == d {
		s.confinedDB = nil
	}
	s.sysMu.Unlock()
	d.db.Close()
}

// invalidated is whether err is DuckDB's refusal of a database that an
// earlier fatal error invalidated; such a database fails every statement.
func invalidated(err error) bool {
	return err != nil && strings.Contains(err.Error(), "database has been invalidated")
}

// session is the DuckDB database this handle's statements run in.
func (e *Engine) session(ctx context.Context) (*duckDB, error) {
	if e.Confined() {
		return e.confined(ctx)
	}
	return &duckDB{db: e.shared.db, catalog: e.shared.catalog}, nil
}

// conn takes a connection of the handle's database. A confined handle's
// connection is checked first: the confined database serves every server
// session, so one that a fatal error invalidated is replaced, not kept
// failing for everyone until a restart.
func (e *Engine) conn(ctx context.Context) (*sql.Conn, string, error) {
	for {
		d, err := e.session(ctx)
		if err != nil {
			return nil, "", err
		}
		c, err := d.db.Conn(ctx)
		if err == nil && e.Confined() {
			if _, err = c.ExecContext(ctx, "SELECT 1"); err != nil {
				c.Close()
			}
		}
		if invalidated(err) && e.Confined() {
			e.shared.dropConfined(d)
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return c, d.catalog, nil
	}
}

// databases lists the engine's DuckDB databases (the confined one once opened).
func (e *Engine) databases() []*duckDB {
	out := []*duckDB{{db: e.db, catalog: e.catalog}}
	if e.confinedDB != nil { // the caller holds sysMu
		out = append(out, e.confinedDB)
	}
	return out
}
