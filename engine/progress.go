package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore/internal/duckstream"
)

// Progress reports how far the statement running under a context given to
// WithProgress has got: DuckDB's own estimate of the work done (what the
// DuckDB CLI's progress bar shows) and the rows streamed from PostgreSQL so
// far. A statement does most of its work before its first row (an aggregate,
// a sort), so this is the only way to watch it. Safe for concurrent use: a
// caller polls it from another goroutine while the statement runs.
type Progress struct {
	mu   sync.RWMutex
	conn *bindings.Connection // DuckDB connection of the running statement; nil when none
	hot  func() int64
}

type progressKey struct{}

// WithProgress returns a context under which Rows, Query and Stream report
// their statement's progress to p.
func WithProgress(ctx context.Context, p *Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

func progressOf(ctx context.Context) *Progress {
	p, _ := ctx.Value(progressKey{}).(*Progress)
	return p
}

// Percent is DuckDB's estimate of the running statement's work done, 0–100;
// false when no statement runs or DuckDB cannot estimate its plan (a pipeline
// whose source reports no progress, such as the hot scan).
func (p *Progress) Percent() (float64, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.conn == nil {
		return 0, false
	}
	qp := bindings.QueryProgress(*p.conn)
	pct, _, _ := bindings.QueryProgressTypeMembers(&qp)
	return pct, pct >= 0
}

// HotRows is the number of rows the running statement has streamed from
// PostgreSQL so far.
func (p *Progress) HotRows() int64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.hot == nil {
		return 0
	}
	return p.hot()
}

// Track reports the statements run on conn, a connection of a DuckDB
// database the engine did not open (udf's, for the shell's --scratch), until
// the returned func is called, which must be before conn is closed.
func (p *Progress) Track(conn *sql.Conn) (untrack func(), err error) {
	for _, q := range progressSettings {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			return nil, fmt.Errorf("progress: %w", err)
		}
	}
	raw, err := rawConnection(conn)
	if err != nil {
		return nil, err
	}
	p.attach(raw, nil)
	return p.detach, nil
}

func (p *Progress) attach(raw bindings.Connection, hot func() int64) {
	p.mu.Lock()
	p.conn, p.hot = &raw, hot
	p.mu.Unlock()
}

// detach forgets the connection before it returns to the pool: a poll never
// reads a connection that another statement, or nobody, owns.
func (p *Progress) detach() {
	p.mu.Lock()
	p.conn, p.hot = nil, nil
	p.mu.Unlock()
}

// rawConnection is the DuckDB connection handle behind conn.
func rawConnection(conn *sql.Conn) (bindings.Connection, error) {
	var raw bindings.Connection
	err := conn.Raw(func(dc any) error {
		d, ok := dc.(*duckdb.Conn)
		if !ok {
			return fmt.Errorf("progress: %T is not a duckdb-go connection", dc)
		}
		var err error
		raw, err = duckstream.Connection(d)
		return err
	})
	return raw, err
}

// progressSettings make DuckDB keep its progress estimate for Progress,
// without drawing its own bar on the process's stdout. They are settings of a
// connection, not of the database.
var progressSettings = []string{"SET enable_progress_bar = true", "SET enable_progress_bar_print = false"}

// enableProgress is the engine's connection init hook. It is best-effort: a
// database whose configuration is locked (the confined one) refuses the
// settings, and its statements report no estimate (Percent is false).
func enableProgress(ex driver.ExecerContext) error {
	for _, q := range progressSettings {
		if _, err := ex.ExecContext(context.Background(), q, nil); err != nil {
			return nil
		}
	}
	return nil
}
