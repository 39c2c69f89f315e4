package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// DefaultConfinedDatabases is how many confined databases an engine keeps
// open at once when Config.ConfinedDatabases is 0.
const DefaultConfinedDatabases = 4

// ErrConfinedBusy refuses a statement of a scope whose confined database is
// not open while every open one, as many as the cap allows, runs a statement.
var ErrConfinedBusy = errors.New("every confined database is running a statement")

// ConfinedBusyError is ErrConfinedBusy with the cap that was reached, so a
// server can name it to its client.
type ConfinedBusyError struct {
	Cap int // Config.ConfinedDatabases in effect
}

func (e *ConfinedBusyError) Error() string {
	return fmt.Sprintf("%v: all %d of them (engine.Config.ConfinedDatabases) run statements of other scopes; retry when a statement ends, or raise the cap (each confined database then gets a smaller share of memory_limit)", ErrConfinedBusy, e.Cap)
}

func (e *ConfinedBusyError) Unwrap() error { return ErrConfinedBusy }

// maxConfined is the cap on open confined databases.
func (e *Engine) maxConfined() int {
	if n := e.cfg.ConfinedDatabases; n > 0 {
		return n
	}
	return DefaultConfinedDatabases
}

// makeRoomForConfined closes the least recently used confined database that
// runs no statement while as many as the cap allows are open, so a server
// with many tenants holds at most the cap's worth of DuckDB memory: each
// confined database has a share of the budget (confinedMemoryShare), never
// the whole. A database runs a statement while a connection of it is taken
// (Rows, Describe and Explain hold theirs to the end; the system-table
// refresh holds sysMu). The scope reopens its database on its next statement,
// with the system tables last refreshed: closing changes no answer. When
// every open database runs a statement, the new scope is refused rather than
// kept waiting: a statement that waited for another to end could wait for
// ever. The caller holds confinedMu.
func (s *Engine) makeRoomForConfined() error {
	s.sysMu.Lock()
	defer s.sysMu.Unlock()
	limit := s.maxConfined()
	for len(s.confinedDBs) >= limit {
		var lruKey string
		var lru *duckDB
		for k, d := range s.confinedDBs {
			if d.busy() {
				continue
			}
			if lru == nil || d.lastUse < lru.lastUse {
				lruKey, lru = k, d
			}
		}
		if lru == nil {
			return fmt.Errorf("engine: %w", &ConfinedBusyError{Cap: limit})
		}
		delete(s.confinedDBs, lruKey)
		lru.close()
	}
	return nil
}

// confinedMemoryShare is the memory_limit of each confined database: the
// engine's own database's limit (MemoryLimit) divided by the cap + 1, so the
// open confined databases together stay below the engine's budget and the
// unrestricted database keeps a share.
func (e *Engine) confinedMemoryShare(ctx context.Context) (string, error) {
	b, err := e.MemoryLimit(ctx)
	if err != nil {
		return "", err
	}
	kib := b / int64(e.maxConfined()+1) / 1024
	return fmt.Sprintf("%dKiB", max(kib, 1)), nil
}

// MemoryLimit is the engine's own database's memory_limit in bytes, as
// DuckDB reads it: Config.MemoryLimit in any notation DuckDB accepts, or
// DuckDB's default of 80 % of the machine. DuckDB prints the setting to a
// tenth of its unit ("3.7 GiB" for 4GB), so the answer is that close. The
// one reading of the budget: the confined databases' shares and msql serve's
// Go heap limit are derived from it.
func (e *Engine) MemoryLimit(ctx context.Context) (int64, error) {
	var limit string
	if err := e.db.QueryRowContext(ctx, "SELECT current_setting('memory_limit')").Scan(&limit); err != nil {
		return 0, fmt.Errorf("read memory_limit: %w", err)
	}
	b, err := duckDBBytes(limit)
	if err != nil {
		return 0, err
	}
	return int64(b), nil
}

// duckDBBytes reads a size as DuckDB prints a setting ("286.1 MiB", "512 bytes").
func duckDBBytes(s string) (float64, error) {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), " ")
	units := map[string]float64{"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50}
	f, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || units[unit] == 0 {
		return 0, fmt.Errorf("memory_limit %q: not a size in DuckDB's notation (\"286.1 MiB\")", s)
	}
	return f * units[unit], nil
}
