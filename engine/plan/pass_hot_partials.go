package plan

import (
	"context"
	"fmt"
	"strings"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltree"
)

// hotPartials lets PostgreSQL compute the hot half's partials of an
// aggregate group by day first split: the hot rows of the reference,
// resolved there to the rows resolution.sql keeps (HotAggregator), grouped
// by the inner level's columns, so one row per day and group leaves PostgreSQL instead of every
// row. Render unions them with the inner level's own partials over the cold
// half; the outer level sums, minimises, maximises and counts them as it
// does the inner level's — a day with rows in both tiers is two partial rows.
//
// Partials per tier are the answer's partials because the tiers hold
// disjoint resolution keys: "from" is part of the merge key, the hot half
// holds "from" at or above the watermark and the cold half below it, and a
// late correction below the watermark is written to Iceberg, never to
// PostgreSQL. So no hot row supersedes a cold one, and the per-tier
// resolution the plan already runs is the whole resolution.
//
// The statement's WHERE runs over the inner level's rows, which PostgreSQL
// does not see: the split is made only where every conjunct of it holds for
// every row the hot scans select (hotScanImplies) — a bound on "from" the
// scans' range lies within, an equality on a text merge-key column the
// scans push with the same value. A session with a scope, or a confined
// one, and a hot tier that computes no partials keep reading rows.
func hotPartials(_ context.Context, pl *planning) error {
	for _, s := range pl.daySplits {
		ref := s.g.ref
		if ref.hot == nil || !pl.partialsAllowed(s) {
			continue
		}
		partials := s.g.hotPartials()
		q, err := ref.rel.table.Hot.(HotAggregator).PartialsQuery(ref.hot.scans, partials, ref.rel.resolved)
		if err != nil {
			return fmt.Errorf("hot partials of %s: %w", ref.rel.table.Config.Name(), err)
		}
		ref.hot.partials = &hotPartialsRead{sql: q, partials: partials}
	}
	return nil
}

// hotPartialsRead is a hot half PostgreSQL aggregates: its query and its
// columns, in the order of the inner level's select list.
type hotPartialsRead struct {
	sql      string
	partials []Partial
}

// partialsAllowed: PostgreSQL's partials of s's hot half are the inner
// level's partials of the same rows.
func (pl *planning) partialsAllowed(s daySplit) bool {
	ref, v := s.g.ref, pl.in.View
	if v.Confined || len(v.Scope) > 0 || !emptyField(ref.n.Rest["sample"]) {
		return false
	}
	if _, ok := ref.rel.table.Hot.(HotAggregator); !ok {
		return false
	}
	for _, col := range s.g.order {
		if !strings.HasPrefix(s.g.cols[col], "DECIMAL") {
			return false
		}
	}
	for _, c := range conjuncts(s.inner.Where) {
		if !ref.hotScansImply(c, s.g.cols) {
			return false
		}
	}
	return true
}

// hotScansImply: every row each hot scan of ref selects satisfies conjunct
// c — c is a bound on "from" or an equality on a text merge-key column,
// evaluated, and the scans push a range within it or the same equality.
func (ref *reference) hotScansImply(c sqltree.Node, cols map[string]string) bool {
	bs := ref.boundsOf(c)
	found := len(bs) > 0
	for _, b := range bs {
		if !ref.hotScansWithin(b) {
			return false
		}
	}
	for _, e := range ref.eqs {
		if e.src != c {
			continue
		}
		found = true
		for _, sc := range ref.hot.scans {
			if v, ok := sc.Eq[e.column]; !e.known || cols[e.column] != "VARCHAR" || !ok || v != e.value {
				return false
			}
		}
	}
	return found
}

// hotPartials are the inner level's columns as PostgreSQL computes them:
// the columns grouped by, balancing_day first, each partial under its
// column's name, the rows counted.
func (g *dayGrouping) hotPartials() []Partial {
	var out []Partial
	for _, col := range g.groupBy {
		out = append(out, Partial{Kind: "group", Column: col, Name: col})
	}
	for _, col := range g.order {
		out = append(out, Partial{Kind: g.partials[col], Column: col, Name: col})
	}
	if g.counts {
		out = append(out, Partial{Kind: "count", Name: partialRows})
	}
	return out
}

// partialsRelation is the hot half's partials as DuckDB reads them, each
// text column cast back to the type the inner level's column has, through
// meter_hot_partials, handed the query by a token — on the postgres
// extension's hot path too: the hot tier runs the query with the planner
// setting that makes its anti join cheap (HotAggregator), which
// postgres_query cannot set.
func (pl *planning) partialsRelation(ctx context.Context, s daySplit) string {
	ref := s.g.ref
	h := ref.hot
	names := make([]string, len(h.partials.partials))
	for i, p := range h.partials.partials {
		names[i] = p.Name
	}
	tok := pl.out.register(&Scan{Ctx: ctx, Config: ref.rel.table.Config, Pager: ref.rel.table.Hot, Rows: &RowCounter{},
		What: partialsWhat, Partials: &PartialsScan{SQL: h.partials.sql, Columns: names}})
	list := make([]string, len(h.partials.partials))
	for i, p := range h.partials.partials {
		q := meterstore.QuoteIdent(p.Name)
		list[i] = fmt.Sprintf("CAST(%s AS %s) AS %s", q, s.g.partialType(p), q)
	}
	return fmt.Sprintf("SELECT %s FROM %s('%s')", strings.Join(list, ", "), partialsFunction, tok)
}

// partialsExplain is the EXPLAIN line of a hot half PostgreSQL aggregates.
func (ref *reference) partialsExplain() string {
	h := ref.hot
	status := "resolution applied"
	if !ref.rel.resolved {
		status = "unresolved relation"
	}
	return fmt.Sprintf("  hot: from %s, %d relation(s), %s, partial aggregates by day computed by PostgreSQL; through %s; PostgreSQL: %s",
		h.rng, len(h.scans), status, partialsFunction, h.partials.sql)
}

const (
	partialsFunction = "meter_hot_partials"
	partialsWhat     = "hot partials"
)

// partialType is the DuckDB type of the inner level's column for p: a
// grouped column's own, a min or max of its column's, a sum of a
// DECIMAL(p,s) DECIMAL(38,s) as DuckDB's sum makes it, a count BIGINT.
func (g *dayGrouping) partialType(p Partial) string {
	t := g.cols[p.Column]
	switch p.Kind {
	case "count":
		return "BIGINT"
	case "sum":
		_, scale, _ := strings.Cut(strings.TrimSuffix(t, ")"), ",")
		return "DECIMAL(38," + scale + ")"
	}
	return t
}

// renderPartials puts each split whose hot half PostgreSQL aggregates
// together: the inner level, over the cold half alone, rendered on its own,
// UNION ALL the hot partials, in the place of the outer level's FROM.
func (pl *planning) renderPartials(ctx context.Context, slots *relationSlots) error {
	for _, s := range pl.daySplits {
		h := s.g.ref.hot
		if h == nil || h.partials == nil {
			continue
		}
		inner, err := deserialize(ctx, pl.conn, &sqltree.Root{Statements: []*sqltree.Statement{
			{Node: s.inner, Rest: sqltree.Fields{"named_param_map": []any{}}}}})
		if err != nil {
			return err
		}
		inner = slots.inline(inner)
		s.outer.From = slots.named(s.g.ref.n.Name(),
			"SELECT * FROM ("+inner+") UNION ALL SELECT * FROM ("+pl.partialsRelation(ctx, s)+")")
	}
	return nil
}
