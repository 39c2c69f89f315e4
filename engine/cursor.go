package engine

import (
	"context"
	"database/sql"
	"errors"

	"github.com/meterstore/meterstore/internal/duckstream"
)

// statementAttempts is how often Cursor runs a statement an archival keeps
// moving the boundary under. An archival moves one window at a time, so a
// statement meets it once or twice; a third failure means something keeps
// moving the boundary, and the caller is told so.
const statementAttempts = 3

// Cursor is a streaming result, row by row, that reads through an archival:
// it holds the first rows back and, when an archival moved the tiers'
// boundary while they were read, runs the statement again before any row is
// handed out. Provenance is the boundary of the run whose rows are handed out.
//
//	c, err := eng.Cursor(ctx, 10000, "SELECT … FROM readings WHERE malo_id = $1", malo)
//	if err != nil { … }
//	defer c.Close()
//	for c.Next() { row := c.Values() /* DECIMAL as decimal.Decimal */ }
//	err = c.Err() // ErrBoundaryMoved: rows already handed out are incomplete
//
// A result of fewer than readAhead rows is read whole before Cursor returns,
// so it is checked against the boundary and retried transparently. A longer one
// is handed out as DuckDB computes it; if the boundary moved under it, Err
// reports ErrBoundaryMoved after the last row — the rows handed out may miss a
// window, and the caller must discard them (or say so) and may run it again.
type Cursor struct {
	Columns    []string
	Types      []string // DuckDB type names
	Provenance *Provenance

	rows  *Rows
	scan  rowScanner
	ahead [][]any // rows read, not yet handed out
	row   []any
	ended bool // rows read to their end; ahead holds the rest
	err   error
}

// Cursor plans and starts one SELECT, reads up to readAhead rows of it, and
// runs it again (Rerun) while an archival moves the boundary under those
// rows. Parameters ($1, ?, $name) are bound, never concatenated.
func (e *Engine) Cursor(ctx context.Context, readAhead int, q string, args ...any) (c *Cursor, err error) {
	err = Rerun(ctx, func() error {
		c, err = e.startCursor(ctx, readAhead, q, args)
		return err
	})
	return c, err
}

// Rerun runs fn, and runs it again — statementAttempts times in all — while
// it fails with ErrBoundaryMoved and ctx is live. It is the policy for a
// consumer that keeps a statement's output aside until the statement has
// ended (rows held back, a file written aside and renamed into place): a run
// an archival moved the boundary under is then discarded unseen. What still
// fails after the last attempt is ErrBoundaryMoved.
//
//	err := engine.Rerun(ctx, func() error { return writeReport(ctx, eng, out) })
func Rerun(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if !errors.Is(err, ErrBoundaryMoved) || attempt == statementAttempts || ctx.Err() != nil {
			return err
		}
	}
}

func (e *Engine) startCursor(ctx context.Context, readAhead int, q string, args []any) (*Cursor, error) {
	rows, d, err := e.describedRows(ctx, duckstream.ExactDecimals, q, args)
	if err != nil {
		return nil, err
	}
	c := &Cursor{rows: rows, Columns: d.Columns, Types: d.Types, Provenance: rows.Provenance}
	for len(c.ahead) < readAhead {
		row, ok, err := c.read()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		c.ahead = append(c.ahead, row)
	}
	return c, nil
}

// read reads the next row from DuckDB; at the end it closes the rows and
// returns the boundary check's answer.
func (c *Cursor) read() ([]any, bool, error) {
	if c.ended {
		return nil, false, nil
	}
	if !c.rows.Next() {
		c.ended = true
		return nil, false, c.rows.Close()
	}
	row, err := c.scan.scan(c.rows.Rows, len(c.Columns))
	if err != nil {
		c.ended = true
		c.rows.Close()
		return nil, false, err
	}
	return row, true, nil
}

// Next moves to the next row; false at the end or on an error (see Err).
func (c *Cursor) Next() bool {
	c.row = nil
	if len(c.ahead) > 0 {
		c.row, c.ahead[0], c.ahead = c.ahead[0], nil, c.ahead[1:]
		return true
	}
	if c.err != nil {
		return false
	}
	row, ok, err := c.read()
	c.row, c.err = row, err
	return ok
}

// Values is the current row: DECIMAL as decimal.Decimal, TIMESTAMPTZ and DATE
// as time.Time, NULL as nil. It stays valid after the next call to Next.
func (c *Cursor) Values() []any { return c.row }

// Err is what ended the rows, if not their end: DuckDB's error, the
// context's, or ErrBoundaryMoved once rows were handed out.
func (c *Cursor) Err() error { return c.err }

// Close ends the statement — DuckDB stops where it is — and reports what
// ended it or, if the rows were not read to the end, whether the boundary
// they read moved.
func (c *Cursor) Close() error {
	err := c.rows.Close()
	if c.err != nil {
		return c.err
	}
	return err
}

// rowBlockValues is how many values rowScanner allocates at once: 16 KiB,
// some 290 rows of the readings' seven columns.
const rowBlockValues = 1024

// rowScanner scans rows without allocating per row: each row's values are
// cut from a block allocated for many rows, and the scan's pointers are
// reused. A row handed out is never written again — the block is not reused —
// so rows stay valid after the next scan, as Cursor.Values and Query's Rows
// promise; a row kept alive keeps its block (at most 16 KiB) alive.
type rowScanner struct {
	block []any
	ptrs  []any
}

// scan scans the current row of n columns, normalised (see ScanValues).
func (s *rowScanner) scan(rows *sql.Rows, n int) ([]any, error) {
	if len(s.block) < n {
		s.block = make([]any, max(n, rowBlockValues))
	}
	if len(s.ptrs) != n {
		s.ptrs = make([]any, n)
	}
	vals := s.block[:n:n]
	s.block = s.block[n:]
	return vals, scanInto(rows, vals, s.ptrs)
}
