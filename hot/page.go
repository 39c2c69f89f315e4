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
	plan, err := s.planScan(req)
	if err != nil {
		return nil, err
	}
	var cursor []any
	if after != nil {
		cursor = plan.cursorOf(*after)
	}
	return plan.fetch(ctx, cursor)
}

// fetch runs one page query: the rows after cursor (nil for the first page), at
// most p.pageRows of them, decoded from the wire bytes. Scan and Page both use it.
func (p *scanPlan) fetch(ctx context.Context, cursor []any) ([]meterstore.Row, error) {
	sql, args := p.sql(cursor)
	rows, err := p.s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", p.table, err)
	}
	out, err := p.dec.readAll(rows, make([]meterstore.Row, 0, p.pageRows))
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", p.table, err)
	}
	return out, nil
}
