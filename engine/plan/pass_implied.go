package plan

import (
	"context"
	"time"

	"github.com/meterstore/meterstore/internal/sqltree"
)

// dropImpliedBounds takes out of a SELECT's WHERE each bound on "from" that
// every row of the relation in its reference's place satisfies. Left in,
// DuckDB pushes it into each read of the cold files and evaluates it on every
// row, though their statistics prove it: the cold half already reads only
// rows of its range (files whose statistics lie within it with no "from"
// filter, the others with one), the hot scans only rows of theirs.
//
// Only in a SELECT that reads that one reference and no other table: in a
// join, a WHERE bound on one side also drops the rows an outer join extended
// with NULLs. A bound holding a parameter becomes a comparison of its value
// with itself — true, as the value it was planned with is known and not NULL
// — so the statement still uses every argument it is given, typed as before.
func dropImpliedBounds(_ context.Context, pl *planning) error {
	for _, lv := range pl.levels {
		if lv.total != 1 || len(lv.mine) != 1 {
			continue
		}
		ref := lv.mine[0]
		implied := map[sqltree.Node][]boundExpr{}
		for _, c := range conjuncts(lv.sel.Where) {
			if bs := ref.boundsOf(c); len(bs) > 0 && ref.implies(bs) {
				implied[c] = bs
			}
		}
		if len(implied) > 0 {
			lv.sel.Where = withoutConjuncts(lv.sel.Where, implied)
		}
	}
	return nil
}

// boundsOf are the bounds on "from" ref took from conjunct c.
func (ref *reference) boundsOf(c sqltree.Node) []boundExpr {
	var out []boundExpr
	for _, b := range ref.bounds {
		if b.src == c {
			out = append(out, b)
		}
	}
	return out
}

// implies: every row of ref's relation satisfies each of bs — each evaluated,
// the cold half's range and each hot scan's within it.
func (ref *reference) implies(bs []boundExpr) bool {
	for _, b := range bs {
		if !b.known {
			return false
		}
		if ref.cold != nil && !ref.cold.rng.within(b) {
			return false
		}
		if ref.hot != nil && !ref.hotScansWithin(b) {
			return false
		}
	}
	return true
}

// hotScansWithin: b is evaluated and every hot scan of ref selects only rows
// that satisfy it.
func (ref *reference) hotScansWithin(b boundExpr) bool {
	for _, sc := range ref.hot.scans {
		if !b.known || !scanRange(sc).within(b) {
			return false
		}
	}
	return true
}

// within: every "from" in r satisfies "from" b.op b.at (timestamps are
// microseconds, so "from" <= t is "from" < t+1µs).
func (r timeRange) within(b boundExpr) bool {
	next := b.at.Add(time.Microsecond)
	switch b.op {
	case ">=":
		return r.lo != nil && !r.lo.Before(b.at)
	case ">":
		return r.lo != nil && r.lo.After(b.at)
	case "<":
		return r.hi != nil && !r.hi.After(b.at)
	case "<=":
		return r.hi != nil && !r.hi.After(next)
	case "=":
		return r.lo != nil && r.hi != nil && r.lo.Equal(b.at) && r.hi.Equal(next)
	}
	return false
}

// scanRange is the range of "from" a hot scan selects (a zero time: open).
func scanRange(sc HotScan) timeRange {
	var r timeRange
	if !sc.From.IsZero() {
		r.lo = &sc.From
	}
	if !sc.To.IsZero() {
		r.hi = &sc.To
	}
	return r
}

// withoutConjuncts is where without the implied conjuncts of its top-level
// AND — each with a parameter replaced by keptParameters — or nil when none
// is left.
func withoutConjuncts(where sqltree.Node, implied map[sqltree.Node][]boundExpr) sqltree.Node {
	if bs, ok := implied[where]; ok {
		return keptParameters(bs)
	}
	c, ok := where.(*sqltree.Conjunction)
	if !ok || c.Op != "CONJUNCTION_AND" {
		return where
	}
	var kept []sqltree.Node
	for _, x := range c.Children {
		if k := withoutConjuncts(x, implied); k != nil {
			kept = append(kept, k)
		}
	}
	switch len(kept) {
	case 0:
		return nil
	case 1:
		return kept[0]
	}
	c.Children = kept
	return c
}

// keptParameters is, for the bounds of one conjunct that hold a parameter,
// each value compared with itself (IS NOT DISTINCT FROM, true whatever it
// is), cast as evaluate cast it; nil when none holds one.
func keptParameters(bs []boundExpr) sqltree.Node {
	var terms []sqltree.Node
	for _, b := range bs {
		if !hasParameter(b.expr) {
			continue
		}
		cast := func() sqltree.Node { return sqltree.NewCast(b.expr, "TIMESTAMP WITH TIME ZONE", false) }
		terms = append(terms, sqltree.NewComparison("COMPARE_NOT_DISTINCT_FROM", cast(), cast()))
	}
	switch len(terms) {
	case 0:
		return nil
	case 1:
		return terms[0]
	}
	return sqltree.NewAnd(terms...)
}

func hasParameter(n sqltree.Node) bool {
	found := false
	sqltree.Inspect(n, func(x sqltree.Node, _ sqltree.Scope) bool {
		if _, ok := x.(*sqltree.Parameter); ok {
			found = true
		}
		return !found
	})
	return found
}
