package hot

import (
	"context"
	"fmt"

	"meterstore"
)

// Page returns one keyset page of req: the rows after the primary key of after
// (nil for the first page), at most req.PageRows of them; an empty page is the
// end. It is the pull form of Scan, for a consumer that asks for rows when it
// wants them (the engine's table function): no transaction is held between calls.
func (s *Store) Page(ctx context.Context, req ScanRequest, after *meterstore.Row) ([]meterstore.Row, error) {
	return s.PageInto(ctx, req, after, nil)
}

// PageInto is Page decoding into buf's storage (grown when too small), for a
// consumer that pages through many rows and can reuse one buffer: a fresh page
// of 50 000 rows is ~17 MB to allocate, clear and collect. after may point into
// buf: the cursor is taken from it before anything is decoded.
func (s *Store) PageInto(ctx context.Context, req ScanRequest, after *meterstore.Row, buf []meterstore.Row) ([]meterstore.Row, error) {
	plan, err := s.planScan(req)
	if err != nil {
		return nil, err
	}
	var cursor []any
	if after != nil {
		cursor = plan.cursorOf(*after)
	}
	return plan.fetch(ctx, cursor, buf)
}

// fetch runs one page query: the rows after cursor (nil for the first page), at
// most p.pageRows of them, decoded from the wire bytes into buf's storage (nil:
// a new page). Scan and Page both use it.
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
	if cap(buf) < p.pageRows {
		buf = make([]meterstore.Row, 0, p.pageRows)
	}
	out, err := p.dec.readAll(rows, buf[:0])
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", p.table, err)
	}
	return out, nil
}
