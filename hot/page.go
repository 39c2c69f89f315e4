package hot

import (
	"context"
	"fmt"

	"github.com/meterstore/meterstore"
)

// fetch runs one page query: the rows after cursor (nil for the first page), at
// most p.pageRows of them, decoded from the wire bytes into buf's storage (nil:
// a new page).
func (p *scanPlan) fetch(ctx context.Context, cursor []any, buf []meterstore.Row) ([]meterstore.Row, error) {
	sql, args := p.sql(cursor)
	return p.query(ctx, sql, args, buf)
}

// query runs one page's SQL and decodes its rows into buf's storage.
func (p *scanPlan) query(ctx context.Context, sql string, args []any, buf []meterstore.Row) ([]meterstore.Row, error) {
	rows, err := p.s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", p.table, err)
	}
	// buf grows as rows arrive: a page sized for scan_chunk_rows up front
	// cost every scan megabytes, however few rows it read.
	out, err := p.dec.readAll(rows, buf[:0])
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", p.table, err)
	}
	return out, nil
}
