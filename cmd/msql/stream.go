package main

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/meterstore/meterstore/engine"
)

// windowRows is how many rows of a result the shell reads before it prints
// anything. A result that fits is printed as before — through the pager when
// it is taller than the terminal, kept for .plot, run again if an archival
// moved the boundary under it. A longer one is printed as it is read, so the
// shell holds one window, not the result: table and box take their column
// widths from this window, and a wider value further down pushes its row out
// of line rather than being cut.
var windowRows = 10000

// rowStream is a result read row by row: its columns first, then rows until
// next returns io.EOF. close ends the statement and reports what ended it —
// for the engine, ErrBoundaryMoved when an archival moved the boundary while
// the hot tier was read (then the rows are incomplete).
type rowStream struct {
	columns []string
	types   []string // DuckDB type names; "" where unknown
	next    func() ([]any, error)
	close   func() error
	prov    string
	plan    bool // EXPLAIN's plan: printed as text in table and box
}

// sqlStream streams rows; closeRows ends them.
func sqlStream(rows *sql.Rows, closeRows func() error) (*rowStream, error) {
	cols, err := rows.ColumnTypes()
	if err != nil {
		closeRows()
		return nil, err
	}
	var names, types []string
	for _, c := range cols {
		names = append(names, c.Name())
		types = append(types, c.DatabaseTypeName())
	}
	next := func() ([]any, error) {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return nil, err
			}
			return nil, io.EOF
		}
		return engine.ScanValues(rows, len(cols))
	}
	return newRowStream(names, types, next, closeRows), nil
}

// cursorStream streams the engine's rows; its close reports whether the
// boundary the rows were read against moved (see engine.Cursor).
func cursorStream(c *engine.Cursor) *rowStream {
	next := func() ([]any, error) {
		if c.Next() {
			return c.Values(), nil
		}
		if err := c.Err(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	return newRowStream(c.Columns, c.Types, next, c.Close)
}

// newRowStream streams rows from next; closeRows runs once, whoever closes.
func newRowStream(columns, types []string, next func() ([]any, error), closeRows func() error) *rowStream {
	var once sync.Once
	var closeErr error
	return &rowStream{columns: columns, types: types, next: next,
		plan: len(columns) == 2 && columns[0] == "explain_key" && columns[1] == "explain_value",
		close: func() error {
			once.Do(func() { closeErr = closeRows() })
			return closeErr
		}}
}

// tableStream streams a result already in memory.
func tableStream(t table) *rowStream {
	i := 0
	return &rowStream{columns: t.columns, types: t.types, close: func() error { return nil },
		next: func() ([]any, error) {
			if i == len(t.rows) {
				return nil, io.EOF
			}
			i++
			return t.rows[i-1], nil
		}}
}

// fill reads up to n rows; complete reports that the stream ended within
// them (and was closed, its error returned).
func (s *rowStream) fill(n int) (window [][]any, complete bool, err error) {
	for len(window) < n {
		row, err := s.next()
		if errors.Is(err, io.EOF) {
			return window, true, s.close()
		}
		if err != nil {
			s.close()
			return nil, true, err
		}
		window = append(window, row)
	}
	return window, false, nil
}

// collectStream reads the whole stream into memory (.plot needs every point).
func collectStream(s *rowStream) (table, error) {
	rows, _, err := s.fill(int(^uint(0) >> 1))
	return table{columns: s.columns, types: s.types, rows: rows}, err
}

// collect runs stmt and reads its whole result (.plot needs every point):
// read ahead whole, it is run again if an archival moves the boundary under it.
func (sh *shell) collect(stmt string, args []any) (table, error) {
	s, err := sh.sess.run(sh.ctx, math.MaxInt, stmt, args...)
	if err != nil {
		return table{}, err
	}
	return collectStream(s)
}

// incomplete is err, when an archival moved the boundary under rows already
// printed, saying that those rows are incomplete.
func incomplete(err error) error {
	if !errors.Is(err, engine.ErrBoundaryMoved) {
		return err
	}
	return withHint(fmt.Errorf("the rows above are incomplete: %w", err), "run the statement again; the tiers' boundary has settled")
}
