package plan

import (
	"context"
	"strings"
	"time"

	"github.com/meterstore/meterstore/internal/sqltree"
)

// A reference is one occurrence of a configured relation in a statement, and
// what the later passes decide for it.
type reference struct {
	n   *sqltree.BaseTable // replaced by its tier split in render
	rel relation
	// conjuncts that bound "from", or fix a merge-key column, for this reference
	bounds []boundExpr
	days   []boundExpr // on the stored balancing_day, which bounds "from" through the calendar
	eqs    []eqExpr
	// results, after evaluation
	rng timeRange
	eq  map[string]string
	// the halves split tiers decides on (nil: the tier is not read)
	cold *coldHalf
	hot  *hotHalf
	pin  *tablePin
	// latest: a latest-row-per-key statement's read, whose cold half is
	// read only for the keys the hot half lacks (latest row per key); nil
	// for any other.
	latest *latestRead
}

// relation is a name a statement may use: the resolved or the raw form of a table.
type relation struct {
	table    *Table
	resolved bool
}

// level is one SELECT with the references it reads directly (through joins,
// not through subqueries) and how many table references it has in all: an
// unqualified column names one of them only when it reads exactly one.
type level struct {
	sel   *sqltree.SelectNode
	mine  []*reference
	total int
}

// timeRange is a half-open range [lo, hi) on "from"; nil is unbounded.
type timeRange struct{ lo, hi *time.Time }

func (r timeRange) String() string {
	f := func(t *time.Time, inf string) string {
		if t == nil {
			return inf
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	return "[" + f(r.lo, "-∞") + ", " + f(r.hi, "+∞") + ")"
}

// empty reports whether no instant satisfies the range.
func (r timeRange) empty() bool { return r.lo != nil && r.hi != nil && !r.lo.Before(*r.hi) }

func (r *timeRange) raiseLo(t time.Time) {
	if r.lo == nil || t.After(*r.lo) {
		r.lo = &t
	}
}

func (r *timeRange) lowerHi(t time.Time) {
	if r.hi == nil || t.Before(*r.hi) {
		r.hi = &t
	}
}

// findReferences collects every reference to a configured relation and to a
// system table — CTE-aware: a CTE called readings shadows the relation, as in
// DuckDB's binder — and, per SELECT, the references it reads directly.
//
// A clause on a reference the planner cannot carry onto the relation in its
// place (checkReferenceClauses) refuses the statement.
func findReferences(_ context.Context, pl *planning) error {
	byNode := map[*sqltree.BaseTable]*reference{}
	var refused error
	sqltree.Inspect(pl.root, func(n sqltree.Node, s sqltree.Scope) bool {
		t, ok := n.(*sqltree.BaseTable)
		if !ok || refused != nil {
			return refused == nil
		}
		switch kind, rel, _ := pl.classify(t, s); kind {
		case baseConfigured:
			refused = checkReferenceClauses(t)
			if refused == nil {
				refused = checkColumnAliases(t, rel.table.Config)
			}
			r := &reference{n: t, rel: rel}
			byNode[t] = r
			pl.refs = append(pl.refs, r)
		case baseSystem:
			refused = checkReferenceClauses(t)
			pl.system = append(pl.system, &systemRef{n: t})
		}
		return refused == nil
	})
	if refused != nil {
		return refused
	}
	sqltree.Inspect(pl.root, func(n sqltree.Node, _ sqltree.Scope) bool {
		sel, ok := n.(*sqltree.SelectNode)
		if !ok {
			return true
		}
		bases, total := directTables(sel.From)
		lv := level{sel: sel, total: total}
		for _, b := range bases {
			if r := byNode[b]; r != nil {
				lv.mine = append(lv.mine, r)
			}
		}
		if len(lv.mine) > 0 {
			pl.levels = append(pl.levels, lv)
		}
		return true
	})
	return nil
}

// directTables lists the base tables a SELECT reads directly (through joins,
// not through subqueries), and how many table references it has in all.
func directTables(from sqltree.Node) (bases []*sqltree.BaseTable, total int) {
	switch x := from.(type) {
	case nil, *sqltree.EmptyRef:
		return nil, 0
	case *sqltree.BaseTable:
		return []*sqltree.BaseTable{x}, 1
	case *sqltree.Join:
		lb, lt := directTables(x.Left)
		rb, rt := directTables(x.Right)
		return append(lb, rb...), lt + rt
	}
	return nil, 1
}

// named returns the reference among refs a qualifier names (its alias, else its table name).
func named(refs []*reference, qual string) *reference {
	var out *reference
	for _, r := range refs {
		if strings.EqualFold(r.n.Name(), qual) {
			out = r
		}
	}
	return out
}
