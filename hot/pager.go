package hot

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/meterstore/meterstore"
)

// A Pager reads one ScanRequest a page at a time; each page is its own query,
// so no transaction or snapshot is held between pages (the seeds' rule: a cursor
// spanning the scan would hold back vacuum for its duration).
//
// An ordered request is paged by keyset on the full primary key, through the
// index. An Unordered one is paged by block ranges of each partition in storage
// order (a TID range scan — what COPY reads, ~2× cheaper than the index walk),
// unless it pins malo_id, where the index probe reads far fewer rows. Block
// paging relies on readings never being updated in place (an UPDATE could move
// a row from behind the cursor to ahead of it): the parent refuses UPDATE with a
// trigger, and a partition rewritten between pages (VACUUM FULL, CLUSTER) fails
// the scan rather than answer twice.
type Pager struct {
	plan   *scanPlan
	req    ScanRequest
	done   bool
	cursor []any // keyset mode: the primary key of the last row returned

	blocks bool
	parts  []blockPart // block mode: relations to read, in order; nil until listed
	part   int
	next   int64 // first block of the next page
	span   int64 // blocks per page, adapted towards PageRows
}

// blockPart is one relation of a block scan, as it was when the scan began.
type blockPart struct {
	name         string
	nblocks      int64
	filenode     uint32
	rowsPerBlock float64
}

// Pager plans req; nothing is read until Next.
func (s *Store) Pager(req ScanRequest) (*Pager, error) {
	_, pinned := req.Eq["malo_id"]
	blocks := req.Unordered && !pinned
	plan, err := s.planScan(req, !blocks)
	if err != nil {
		return nil, err
	}
	return &Pager{plan: plan, req: req, blocks: blocks}, nil
}

// Next returns the next page, decoded into buf's storage (nil: a new slice); an
// empty page is the end. The rows of the previous page may be overwritten.
func (p *Pager) Next(ctx context.Context, buf []meterstore.Row) ([]meterstore.Row, error) {
	if p.done {
		return buf[:0], nil
	}
	if !p.blocks {
		out, err := p.plan.fetch(ctx, p.cursor, buf)
		if err != nil {
			return nil, err
		}
		if len(out) < p.plan.pageRows {
			p.done = true
		}
		if len(out) > 0 {
			p.cursor = p.plan.cursorOf(out[len(out)-1])
		}
		return out, nil
	}
	if p.parts == nil {
		if err := p.listParts(ctx); err != nil {
			return nil, err
		}
		p.startPart()
	}
	for p.part < len(p.parts) {
		if p.next >= p.parts[p.part].nblocks {
			p.part++
			p.startPart()
			continue
		}
		out, err := p.fetchBlocks(ctx, p.parts[p.part], buf)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	if err := p.checkUnchanged(ctx); err != nil {
		return nil, err
	}
	p.done = true
	return buf[:0], nil
}

// NextScaled is Next with each row's value handed as decimal(18,6)'s scaled
// integer (value × 10⁶, exact), appended to values[:0] in row order, and
// Row.Value left zero: what a DECIMAL(18,6) column of DuckDB holds, without
// a decimal.Decimal's big.Int for every row. values is empty if the scan
// does not project the value.
func (p *Pager) NextScaled(ctx context.Context, buf []meterstore.Row, values []int64) ([]meterstore.Row, []int64, error) {
	values = values[:0]
	p.plan.dec.values = &values
	defer func() { p.plan.dec.values = nil }()
	rows, err := p.Next(ctx, buf)
	return rows, values, err
}

func (p *Pager) startPart() {
	p.next = 0
	if p.part < len(p.parts) {
		p.span = max(int64(float64(p.plan.pageRows)/p.parts[p.part].rowsPerBlock), 1)
	}
}

// listParts lists the relations a block scan reads — the named table, or the
// parent's attached partitions overlapping the request's range — with their size
// and file identity as the scan begins. Empty ones are skipped; blocks appended
// to the others later are read too, by their open-ended last page.
func (p *Pager) listParts(ctx context.Context) error {
	var names []string
	if p.req.Table != "" {
		names = []string{p.req.Table}
	} else {
		all, err := p.plan.s.partitions(ctx, p.plan.s.pool)
		if err != nil {
			return fmt.Errorf("scan %s: %w", p.plan.table, err)
		}
		for _, part := range all {
			if (!p.req.To.IsZero() && !part.From.Before(p.req.To)) || (!p.req.From.IsZero() && !part.To.After(p.req.From)) {
				continue
			}
			names = append(names, part.Name)
		}
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = meterstore.QuoteIdent(n)
	}
	rows, err := p.plan.s.pool.Query(ctx, `SELECT n.ord, pg_relation_size(c.oid) / current_setting('block_size')::bigint,
		pg_relation_filenode(c.oid)::bigint,
		CASE WHEN c.relpages > 0 AND c.reltuples > 0 THEN c.reltuples / c.relpages ELSE 32 END
		FROM unnest($1::text[]) WITH ORDINALITY AS n(name, ord)
		LEFT JOIN pg_class c ON c.oid = to_regclass(n.name)
		ORDER BY n.ord`, quoted)
	if err != nil {
		return fmt.Errorf("scan %s: size partitions: %w", p.plan.table, err)
	}
	p.parts = []blockPart{}
	var (
		ord      int
		nblocks  *int64
		filenode *int64
		perBlock *float64
	)
	_, err = pgx.ForEachRow(rows, []any{&ord, &nblocks, &filenode, &perBlock}, func() error {
		name := names[ord-1]
		if nblocks == nil {
			return fmt.Errorf("partition %s disappeared (archived?): %w", name, ErrPartitionDetached)
		}
		if *nblocks > 0 {
			p.parts = append(p.parts, blockPart{name: name, nblocks: *nblocks, filenode: uint32(*filenode), rowsPerBlock: max(*perBlock, 1)})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("scan %s: size partitions: %w", p.plan.table, err)
	}
	return nil
}

// blockSQL is one block page's query; the block bounds are the last parameters,
// so every page of a scan reuses one prepared statement.
func (p *Pager) blockSQL(relation string, bounded bool) string {
	n := len(p.plan.args)
	where := append([]string{fmt.Sprintf(`ctid >= $%d`, n+1)}, p.plan.where...)
	if bounded {
		where = append(where, fmt.Sprintf(`ctid < $%d`, n+2))
	}
	return fmt.Sprintf("SELECT %s FROM %s WHERE %s", p.plan.dec.selectList(""), relation, strings.Join(where, " AND "))
}

// SQL is what the first page sends, for EXPLAIN.
func (p *Pager) SQL() string {
	if !p.blocks {
		sql, _ := p.plan.sql(nil)
		return sql
	}
	rel := "<each partition of " + meterstore.QuoteIdent(p.plan.table) + ">"
	if p.req.Table != "" {
		rel = meterstore.QuoteIdent(p.req.Table)
	}
	return p.blockSQL(rel, true) + " -- paged by block ranges in storage order"
}

func tid(block int64) pgtype.TID {
	return pgtype.TID{BlockNumber: uint32(block), Valid: true}
}

func (p *Pager) fetchBlocks(ctx context.Context, part blockPart, buf []meterstore.Row) ([]meterstore.Row, error) {
	from := p.next
	bounded := from+p.span < part.nblocks
	args := append(slices.Clone(p.plan.args), tid(from))
	if bounded {
		args = append(args, tid(from+p.span))
		p.next = from + p.span
	} else {
		p.next = part.nblocks
	}
	sql := p.blockSQL(meterstore.QuoteIdent(part.name), bounded)
	out, err := p.plan.query(ctx, sql, args, buf)
	if droppedMeanwhile(err) {
		return nil, fmt.Errorf("scan %s: partition %s was dropped during the scan (archived): %w: %w", p.plan.table, part.name, ErrPartitionDetached, err)
	}
	if err != nil {
		return nil, err
	}
	// Steer the span towards PageRows rows per page: filters thin pages out.
	if bounded {
		if n := int64(len(out)); n > 0 {
			p.span = min(max(p.span*int64(p.plan.pageRows)/n, 1), p.span*4)
		} else {
			p.span *= 2
		}
	}
	return out, nil
}

// checkUnchanged fails the scan when a partition's file changed under it: a
// rewrite (VACUUM FULL, CLUSTER) reorders rows, so pages before and after it
// could hold one row twice. One query at the end covers every partition read.
func (p *Pager) checkUnchanged(ctx context.Context) error {
	if len(p.parts) == 0 {
		return nil
	}
	quoted := make([]string, len(p.parts))
	for i, part := range p.parts {
		quoted[i] = meterstore.QuoteIdent(part.name)
	}
	rows, err := p.plan.s.pool.Query(ctx, `SELECT coalesce(pg_relation_filenode(to_regclass(n.name))::bigint, 0)
		FROM unnest($1::text[]) WITH ORDINALITY AS n(name, ord) ORDER BY n.ord`, quoted)
	if err != nil {
		return fmt.Errorf("scan %s: recheck partitions: %w", p.plan.table, err)
	}
	nodes, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("scan %s: recheck partitions: %w", p.plan.table, err)
	}
	for i, part := range p.parts {
		if nodes[i] == 0 {
			return fmt.Errorf("scan %s: partition %s was dropped during the scan (archived); run the statement again: %w", p.plan.table, part.name, ErrPartitionDetached)
		}
		if uint32(nodes[i]) != part.filenode {
			return fmt.Errorf("scan %s: partition %s was rewritten or dropped during the scan (VACUUM FULL, CLUSTER, archival); run the statement again", p.plan.table, part.name)
		}
	}
	return nil
}
