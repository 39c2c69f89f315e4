package engine

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"strings"
	"time"
)

// DatabaseMemory is what one of the engine's DuckDB databases holds, as
// DuckDB accounts for it. duckdb_memory() counts only what DuckDB's buffer
// manager allocates (table data, hash tables, sort runs); a kept statement's
// plan and connection are not in it, so the statements kept are counted
// beside it.
type DatabaseMemory struct {
	// Database is "engine" (the unrestricted database, which also reads
	// the cold files confined statements are fed) or "confined" followed
	// by the scope it serves.
	Database string
	// KeptStatements are the statements kept prepared between runs, each
	// on a connection of its own.
	KeptStatements int
	// Tags are duckdb_memory()'s memory_usage_bytes by tag (BASE_TABLE,
	// HASH_TABLE, ORDER_BY, …), TemporaryBytes its temporary_storage_bytes
	// summed over them (spilled to the database's temp directory).
	Tags           map[string]int64
	TemporaryBytes int64
}

// HeldMemory is each open DuckDB database's own account of its memory and
// the statements it keeps, the engine's database first. A confined database
// closed while it is read is left out.
func (e *Engine) HeldMemory(ctx context.Context) ([]DatabaseMemory, error) {
	s := e.shared
	engineDB, err := heldBy(ctx, s.db, "engine", s.fedStatements.Len())
	if err != nil {
		return nil, err
	}
	out := []DatabaseMemory{engineDB}
	for key, d := range s.confinedOpen() {
		if m, err := heldBy(ctx, d.db, confinedLabel(key), d.mains.Len()); err == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// confinedOpen is a copy of the open confined databases by key, taken under
// sysMu, so that each can be read without holding it.
func (e *Engine) confinedOpen() map[string]*duckDB {
	e.sysMu.Lock()
	defer e.sysMu.Unlock()
	return maps.Clone(e.confinedDBs)
}

// heldBy reads db's duckdb_memory().
func heldBy(ctx context.Context, db *sql.DB, label string, kept int) (DatabaseMemory, error) {
	m := DatabaseMemory{Database: label, KeptStatements: kept, Tags: map[string]int64{}}
	if err := readMemory(ctx, db, &m); err != nil {
		return m, fmt.Errorf("engine: read duckdb_memory() of the %s database: %w", label, err)
	}
	return m, nil
}

// readMemory adds db's duckdb_memory() rows to m.
func readMemory(ctx context.Context, db *sql.DB, m *DatabaseMemory) error {
	rows, err := db.QueryContext(ctx, "SELECT tag, memory_usage_bytes, temporary_storage_bytes FROM duckdb_memory()")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var tag string
		var used, temp int64
		if err := rows.Scan(&tag, &used, &temp); err != nil {
			return err
		}
		m.Tags[tag] = used
		m.TemporaryBytes += temp
	}
	return rows.Err()
}

// confinedLabel names the confined database under key by the scope and
// table it serves.
func confinedLabel(key string) string {
	scope, table, _ := strings.Cut(key, "\x01")
	label := "confined scope=" + strings.ReplaceAll(scope, "\x00", ",")
	if table != "" {
		label += " table=" + table
	}
	return label
}

// CloseIdleStatements closes the statements kept prepared that no run has
// taken for idleFor, in every database, and drops the hot scans' buffers
// kept for the next scans that none has taken for idleFor; it returns how
// many statements and buffers it closed or dropped. A burst of concurrent
// runs of one plan leaves one statement per run kept, each with its
// connection and physical plan, until it is closed; a burst of concurrent
// hot scans leaves up to keptScanBuffers buffers of their largest pages in
// the Go heap (the buffers are the process's, not one engine's).
func (e *Engine) CloseIdleStatements(idleFor time.Duration) int {
	s := e.shared
	cut := time.Now().Add(-idleFor)
	n := s.fedStatements.CloseIdle(cut)
	for _, d := range s.confinedOpen() {
		n += d.mains.CloseIdle(cut)
	}
	return n + dropIdleScanBuffers(cut)
}
