package engine

import (
	"context"
	"database/sql"
	"fmt"
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
	s.sysMu.Lock()
	confined := make(map[string]*duckDB, len(s.confinedDBs))
	for key, d := range s.confinedDBs {
		confined[confinedLabel(key)] = d
	}
	s.sysMu.Unlock()
	for label, d := range confined {
		if m, err := heldBy(ctx, d.db, label, d.mains.Len()); err == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// heldBy reads db's duckdb_memory().
func heldBy(ctx context.Context, db *sql.DB, label string, kept int) (DatabaseMemory, error) {
	m := DatabaseMemory{Database: label, KeptStatements: kept, Tags: map[string]int64{}}
	rows, err := db.QueryContext(ctx, "SELECT tag, memory_usage_bytes, temporary_storage_bytes FROM duckdb_memory()")
	if err != nil {
		return m, fmt.Errorf("engine: read duckdb_memory() of the %s database: %w", label, err)
	}
	defer rows.Close()
	for rows.Next() {
		var tag string
		var used, temp int64
		if err := rows.Scan(&tag, &used, &temp); err != nil {
			return m, fmt.Errorf("engine: read duckdb_memory() of the %s database: %w", label, err)
		}
		m.Tags[tag] = used
		m.TemporaryBytes += temp
	}
	if err := rows.Err(); err != nil {
		return m, fmt.Errorf("engine: read duckdb_memory() of the %s database: %w", label, err)
	}
	return m, nil
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
// taken for idleFor, in every database, and returns how many it closed. A
// burst of concurrent runs of one plan leaves one statement per run kept,
// each with its connection and physical plan, until it is closed.
func (e *Engine) CloseIdleStatements(idleFor time.Duration) int {
	s := e.shared
	cut := time.Now().Add(-idleFor)
	n := s.fedStatements.CloseIdle(cut)
	s.sysMu.Lock()
	var mains []*keptMains
	for _, d := range s.confinedDBs {
		mains = append(mains, d.mains)
	}
	s.sysMu.Unlock()
	for _, m := range mains {
		n += m.CloseIdle(cut)
	}
	return n
}
