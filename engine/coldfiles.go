package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/meterstore/meterstore/engine/plan"
)

// ColdFilesQuery is a statement over some cold files of one table
// (Engine.QueryColdFiles).
type ColdFilesQuery struct {
	Table string     // the table's name
	Files []ColdFile // at least one
	// Below keeps the rows from before it; zero keeps every row.
	Below time.Time
	// SQL is the statement over rel, the files' rows as a parenthesised
	// relation.
	SQL func(rel string) string
	// GoReader reads the files through meter_cold_scan even where the
	// database opens them itself: for a test to read local files as files
	// on object storage without httpfs are read.
	GoReader bool
}

// QueryColdFiles runs q on the engine's own database over the rows of q's
// files read as a cold half of this engine reads them (plan.FilesRelation):
// with DuckDB's reader where the database opens them itself (the local file
// system, object storage through httpfs), with the warehouse's Go reader
// (meter_cold_scan) where it does not. It answers the statement's rows,
// normalised as Query's. It is for checks reading the files no plan singles
// out — those whose footer does not prove what the check looks for — in
// every deployment the engine reads its cold halves in.
func (e *Engine) QueryColdFiles(ctx context.Context, q ColdFilesQuery) ([][]any, error) {
	s := e.shared
	t, ok := e.tableByRelation(q.Table)
	if !ok {
		return nil, fmt.Errorf("cold files of %s: the engine has no such table", q.Table)
	}
	var tokens []string
	defer func() {
		for _, tok := range tokens {
			s.scans.Remove(tok)
		}
	}()
	register := func(sc *plan.Scan) string {
		tok := s.scans.Add(sc)
		tokens = append(tokens, tok)
		return tok
	}
	goReader := q.GoReader || !(plan.Paths{Cold: s.ext.cold, HTTPFS: s.ext.httpfs}).Opens(q.Files)
	rel, err := plan.FilesRelation(ctx, &plan.Table{Config: t.cfg, Cold: t.cold}, goReader, register, q.Files, q.Below)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, q.SQL("("+rel+")"))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		vals, err := ScanValues(rows, len(cols))
		if err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}
