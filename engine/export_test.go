package engine

import (
	"context"
	"database/sql"
	"unsafe"

	"github.com/meterstore/meterstore"
)

// ConfinedConn is a connection of the handle's confined database and its
// catalog, bypassing the planner: what a statement that slipped past the gate
// would reach.
func ConfinedConn(ctx context.Context, e *Engine) (*sql.Conn, string, error) {
	c, d, err := e.conn(ctx)
	if err != nil {
		return nil, "", err
	}
	return c, d.catalog, nil
}

// FedStatementsKept is the text of each fed relation kept prepared in the
// engine's database for its next run.
func FedStatementsKept(e *Engine) []string { return e.shared.fedStatements.Kept() }

// MainStatementsKept is the text of each statement the confined database of
// e's scope keeps prepared for a plan's next run, the most recently given
// back first; nil if that database is not open.
func MainStatementsKept(e *Engine) []string {
	d := e.shared.currentConfined(e.confinedKey())
	if d == nil || d.mains == nil {
		return nil
	}
	var out []string
	for _, m := range d.mains.Values() {
		out = append(out, m.stmt.Query())
	}
	return out
}

// ConfinedBinds is how many times DuckDB has bound what a confined
// database's statements read (Engine.confinedBinds).
func ConfinedBinds(e *Engine) int64 { return e.shared.confinedBinds.Load() }

// FailureProbes is how many times a failed statement had its confined
// database probed for invalidation (Engine.afterFailure).
func FailureProbes(e *Engine) int64 { return e.shared.failureProbes.Load() }

// KeptScanBufferBytes is what the hot scans' buffers kept for the next scans
// (freeScanBuffers) hold: their pages' rows and values and their columns'
// string buffers, by capacity.
func KeptScanBufferBytes() int64 {
	var kept []*scanBuffers
	for {
		select {
		case b := <-freeScanBuffers:
			kept = append(kept, b)
			continue
		default:
		}
		break
	}
	var n int64
	for _, b := range kept {
		n += b.bytes()
		select {
		case freeScanBuffers <- b:
		default:
		}
	}
	return n
}

// bytes is what b holds, by capacity: its pages' rows and values and its
// columns' string buffers.
func (b *scanBuffers) bytes() int64 {
	var n int64
	for _, p := range b.pages {
		n += int64(cap(p.rows))*int64(unsafe.Sizeof(meterstore.Row{})) + int64(cap(p.values))*8
	}
	for i := range b.strings {
		n += int64(b.strings[i].Capacity())
	}
	return n
}
