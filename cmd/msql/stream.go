package main

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
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

// sqlStream streams rows of n columns; closeRows ends them (the engine's Rows
// close themselves, checking the boundary).
func sqlStream(rows *sql.Rows, closeRows func() error) (*rowStream, error) {
	cols, err := rows.ColumnTypes()
	if err != nil {
		closeRows()
		return nil, err
	}
	var once sync.Once
	var closeErr error
	s := &rowStream{close: func() error {
		once.Do(func() { closeErr = closeRows() })
		return closeErr
	}}
	for _, c := range cols {
		s.columns = append(s.columns, c.Name())
		s.types = append(s.types, c.DatabaseTypeName())
	}
	s.plan = len(s.columns) == 2 && s.columns[0] == "explain_key" && s.columns[1] == "explain_value"
	s.next = func() ([]any, error) {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return nil, err
			}
			return nil, io.EOF
		}
		return engine.ScanValues(rows, len(cols))
	}
	return s, nil
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

// maxAttempts is how often a statement runs when an archival moves the
// boundary under it before any of its rows were printed.
const maxAttempts = 3

// retryMoved runs a statement until it is not refused with ErrBoundaryMoved,
// maxAttempts times at most; once rows were passed on (started), it is not
// run again, and the error says the rows shown are incomplete.
func retryMoved(run func() (started bool, err error)) error {
	for attempt := 1; ; attempt++ {
		started, err := run()
		if !errors.Is(err, engine.ErrBoundaryMoved) {
			return err
		}
		if started {
			return withHint(fmt.Errorf("the rows above are incomplete: %w", err), "run the statement again; the tiers' boundary has settled")
		}
		if attempt == maxAttempts {
			return err
		}
	}
}

// collect runs stmt and reads its whole result (.plot needs every point).
func (sh *shell) collect(stmt string, args []any) (table, error) {
	var t table
	err := retryMoved(func() (bool, error) {
		s, err := sh.sess.run(sh.ctx, stmt, args...)
		if err != nil {
			return false, err
		}
		t, err = collectStream(s)
		return false, err
	})
	return t, err
}
