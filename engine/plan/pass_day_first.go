package plan

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/meterstore/meterstore/internal/sqltree"
)

// groupByDayFirst splits an aggregate over one reference that groups by a
// calendar function of the stored balancing_day — date_trunc('month',
// balancing_day), the month meter_balancing_month becomes — into two levels:
// the reference grouped by balancing_day itself (and by the identifier
// columns the statement also groups by), then those few rows grouped as the
// statement asked. DuckDB's date_trunc over a DATE is a calendar conversion
// per row; grouped by the day first, it runs once per day and group, while
// the grouping itself is no dearer (a day is as small a key as a month).
//
// Only decomposable aggregates are regrouped, so the answer is the same row
// for row, column for column: sum of a DECIMAL column (the sum of exact
// partial sums, of the same type), min and max of a column, and count(*) (the
// sum of the partial counts, cast back to BIGINT). The inner level names each
// partial after its column, so the statement's own sum(value) reads the
// partial sums and keeps its text and its column name. A statement with any
// other aggregate (avg, count of a column, …), a function outside a short
// list of scalar ones, DISTINCT or FILTER in an aggregate, a window, QUALIFY,
// GROUPING SETS or GROUP BY ALL, or column aliases on the reference is left
// as it is.
func groupByDayFirst(_ context.Context, pl *planning) error {
	for i, lv := range pl.levels {
		if split, ok := splitDayGrouping(lv); ok {
			pl.levels[i].sel = split.inner
			pl.daySplits = append(pl.daySplits, split)
		}
	}
	return nil
}

// daySplit is one aggregate split by groupByDayFirst: the statement's own
// SELECT, now the outer level, over inner, the reference grouped by day.
type daySplit struct {
	outer, inner *sqltree.SelectNode
	g            *dayGrouping
}

// dayGrouping is what one level's grouping and aggregates are made of, as
// found by checking that the split keeps its answer.
type dayGrouping struct {
	ref      *reference
	cols     map[string]string // the reference's columns: lower-case name → DuckDB type
	aliases  map[string]bool   // the select list's aliases (lower case)
	groupBy  []string          // plain columns grouped by, balancing_day first
	derived  bool              // a group expression computes from balancing_day
	partials map[string]string // column → the aggregate its partial is (sum, min, max)
	order    []string          // partial columns in the order first met
	counts   bool              // count(*) is used
}

// dayGroupingScalars are the functions the outer level may apply to its
// groups and aggregates: deterministic, and no aggregate among them.
var dayGroupingScalars = map[string]bool{
	"date_trunc": true, "datetrunc": true, "date_part": true, "datepart": true, "year": true, "quarter": true,
	"month": true, "round": true, "+": true, "-": true, "*": true, "/": true,
}

// decomposable are the aggregates regrouped over their partials by
// themselves.
var decomposable = map[string]bool{"sum": true, "min": true, "max": true}

const (
	partialRows  = "_meterstore_rows"
	countStar    = "count_star"
	countStarCol = "count_star()" // the name DuckDB gives an unaliased count(*)
)

// splitDayGrouping turns lv's SELECT into the outer level over a new inner
// one, when the split keeps the answer and saves the per-row calendar
// function.
func splitDayGrouping(lv level) (daySplit, bool) {
	sel := lv.sel
	if len(lv.mine) != 1 || lv.total != 1 || sel.Qualify != nil || len(sel.GroupExpressions) == 0 ||
		sel.Rest["sample"] != nil || sel.Rest["aggregate_handling"] != "STANDARD_HANDLING" || !oneGroupingSet(sel) {
		return daySplit{}, false
	}
	ref := lv.mine[0]
	if aliases, _ := ref.n.Rest["column_name_alias"].([]any); len(aliases) > 0 {
		return daySplit{}, false
	}
	g := &dayGrouping{ref: ref, cols: map[string]string{}, aliases: map[string]bool{}, partials: map[string]string{},
		groupBy: []string{balancingDayColumn}}
	for _, c := range ref.rel.table.Config.Columns() {
		g.cols[strings.ToLower(c.Name)] = c.Type.DuckDBType()
	}
	for _, item := range sel.SelectList {
		if a := aliasOf(item); a != "" {
			g.aliases[strings.ToLower(a)] = true
		}
	}
	for _, e := range sel.GroupExpressions {
		if !g.group(g.resolveGroupExpr(e, sel.SelectList)) {
			return daySplit{}, false
		}
	}
	if !g.derived || !g.outerChecks(sel) {
		return daySplit{}, false
	}
	inner := g.innerSelect(sel)
	g.rewriteCounts(sel)
	sel.From = sqltree.AsSubqueryRef(ref.n, ref.n.Name(), &sqltree.Statement{Node: inner, Rest: sqltree.Fields{"named_param_map": []any{}}})
	sel.Where = nil
	return daySplit{outer: sel, inner: inner, g: g}, true
}

// oneGroupingSet: a plain GROUP BY, one set of every group expression.
func oneGroupingSet(sel *sqltree.SelectNode) bool {
	sets, _ := sel.Rest["group_sets"].([]any)
	if len(sets) != 1 {
		return false
	}
	set, _ := sets[0].([]any)
	return len(set) == len(sel.GroupExpressions)
}

// resolveGroupExpr is the expression a GROUP BY item stands for, as DuckDB
// binds it: a position names a select item, as does a name that is no column
// but a select item's alias; nil for a position out of range.
func (g *dayGrouping) resolveGroupExpr(e sqltree.Node, list []sqltree.Node) sqltree.Node {
	if c, ok := e.(*sqltree.ColumnRef); ok && len(c.Names) == 1 {
		if _, isColumn := g.cols[strings.ToLower(c.Names[0])]; !isColumn {
			for _, item := range list {
				if strings.EqualFold(aliasOf(item), c.Names[0]) {
					return item
				}
			}
		}
	}
	if c, ok := e.(*sqltree.Constant); ok {
		n, ok := c.Value.Get("value").(json.Number)
		i, err := strconv.Atoi(string(n))
		if !ok || err != nil || c.TypeID() != "INTEGER" || i < 1 || i > len(list) {
			return nil
		}
		return list[i-1]
	}
	return e
}

// group checks one group expression: a plain identifier column (or the day)
// is grouped by in the inner level too; a calendar function of the day alone
// is computed by the outer one.
func (g *dayGrouping) group(e sqltree.Node) bool {
	if e == nil {
		return false
	}
	if col, ok := g.column(e); ok {
		if col == balancingDayColumn {
			return true
		}
		if g.cols[col] != "VARCHAR" {
			return false // an instant or a value: grouping by it first saves nothing
		}
		if !slices.Contains(g.groupBy, col) {
			g.groupBy = append(g.groupBy, col)
		}
		return true
	}
	if !g.ofDayOnly(e) || !g.mentionsDay(e) {
		return false
	}
	g.derived = true
	return true
}

// ofDayOnly: e is made of balancing_day, constants, parameters, casts and
// the deterministic scalar functions the outer level may apply.
func (g *dayGrouping) ofDayOnly(e sqltree.Node) bool {
	switch x := e.(type) {
	case *sqltree.Constant, *sqltree.Parameter:
		return true
	case *sqltree.ColumnRef:
		col, ok := g.column(x)
		return ok && col == balancingDayColumn
	case *sqltree.Cast:
		return g.ofDayOnly(x.Child)
	case *sqltree.Function:
		if !dayGroupingScalars[strings.ToLower(x.Name)] || x.Distinct || x.Schema != "" {
			return false
		}
		for _, c := range x.Children {
			if !g.ofDayOnly(c) {
				return false
			}
		}
		return true
	}
	return false
}

func (g *dayGrouping) mentionsDay(e sqltree.Node) bool {
	found := false
	sqltree.Inspect(e, func(n sqltree.Node, _ sqltree.Scope) bool {
		if col, ok := g.column(n); ok && col == balancingDayColumn {
			found = true
		}
		return !found
	})
	return found
}

// column is the reference's column e names (lower case), if it is a column
// reference to it.
func (g *dayGrouping) column(e sqltree.Node) (string, bool) {
	name, ok := g.ref.column(e)
	return strings.ToLower(name), ok
}

// outerChecks walks what the outer level computes — the select list, HAVING,
// ORDER BY, LIMIT, DISTINCT ON — recording the partials it needs, and fails
// on anything the split could change.
func (g *dayGrouping) outerChecks(sel *sqltree.SelectNode) bool {
	for _, item := range sel.SelectList {
		if !g.expr(item, false) {
			return false
		}
		if f, ok := item.(*sqltree.Function); ok && strings.EqualFold(f.Name, countStar) {
			continue // a count(*) of its own keeps its name (rewriteCounts)
		}
		if aliasOf(item) == "" && hasCountStar(item) {
			return false // DuckDB would name the column after the rewritten text
		}
	}
	if sel.Having != nil && !g.expr(sel.Having, true) {
		return false
	}
	for _, m := range sel.Modifiers {
		if !g.modifier(m) {
			return false
		}
	}
	return true
}

// modifier checks an ORDER BY, LIMIT or DISTINCT modifier: containers of
// expressions, each checked as HAVING is.
func (g *dayGrouping) modifier(n sqltree.Node) bool {
	o, ok := n.(*sqltree.Object)
	if !ok {
		return n == nil || g.expr(n, true)
	}
	if _, isExpr := o.Fields["class"]; isExpr {
		return false
	}
	for _, v := range o.Fields {
		if !g.modifierValue(v) {
			return false
		}
	}
	return true
}

func (g *dayGrouping) modifierValue(v any) bool {
	switch x := v.(type) {
	case sqltree.Node:
		return g.modifier(x)
	case []any:
		for _, e := range x {
			if !g.modifierValue(e) {
				return false
			}
		}
	}
	return true
}

// expr checks one outer expression: grouped columns and aliases outside
// aggregates, decomposable aggregates of plain columns, scalar functions.
func (g *dayGrouping) expr(e sqltree.Node, aliasesVisible bool) bool {
	switch x := e.(type) {
	case *sqltree.Constant, *sqltree.Parameter:
		return true
	case *sqltree.ColumnRef:
		if col, ok := g.column(x); ok {
			return slices.Contains(g.groupBy, col)
		}
		return aliasesVisible && len(x.Names) == 1 && g.aliases[strings.ToLower(x.Names[0])]
	case *sqltree.Cast:
		return g.expr(x.Child, aliasesVisible)
	case *sqltree.Comparison:
		return g.expr(x.Left, aliasesVisible) && g.expr(x.Right, aliasesVisible)
	case *sqltree.Between:
		return g.expr(x.Input, aliasesVisible) && g.expr(x.Lower, aliasesVisible) && g.expr(x.Upper, aliasesVisible)
	case *sqltree.Conjunction:
		for _, c := range x.Children {
			if !g.expr(c, aliasesVisible) {
				return false
			}
		}
		return true
	case *sqltree.Function:
		return g.function(x, aliasesVisible)
	}
	return false
}

func (g *dayGrouping) function(f *sqltree.Function, aliasesVisible bool) bool {
	name := strings.ToLower(f.Name)
	plainCall := f.Schema == "" && !f.Distinct && f.Rest["filter"] == nil && !hasOrderBys(f)
	switch {
	case !plainCall:
		return false
	case name == countStar:
		g.counts = true
		return len(f.Children) == 0
	case decomposable[name]:
		return len(f.Children) == 1 && g.partial(name, f.Children[0])
	case dayGroupingScalars[name]:
		for _, c := range f.Children {
			if !g.expr(c, aliasesVisible) {
				return false
			}
		}
		return true
	}
	return false
}

// partial records that column arg is aggregated by kind: one kind per
// column (its partial takes the column's name), never a grouped column,
// and a sum only of an exact DECIMAL.
func (g *dayGrouping) partial(kind string, arg sqltree.Node) bool {
	col, ok := g.column(arg)
	if !ok || slices.Contains(g.groupBy, col) || kind == "sum" && !strings.HasPrefix(g.cols[col], "DECIMAL") {
		return false
	}
	if have, seen := g.partials[col]; seen {
		return have == kind
	}
	g.partials[col] = kind
	g.order = append(g.order, col)
	return true
}

// innerSelect is the reference grouped by the day and the plain group
// columns, with each partial under its column's name; it takes sel's FROM
// and WHERE.
func (g *dayGrouping) innerSelect(sel *sqltree.SelectNode) *sqltree.SelectNode {
	var list, groups []sqltree.Node
	set := make([]any, 0, len(g.groupBy))
	for i, col := range g.groupBy {
		list = append(list, sqltree.NewColumnRef(col))
		groups = append(groups, sqltree.NewColumnRef(col))
		set = append(set, json.Number(strconv.Itoa(i)))
	}
	for _, col := range g.order {
		f := sqltree.NewFunction(g.partials[col], sqltree.NewColumnRef(col))
		f.Alias = col
		list = append(list, f)
	}
	if g.counts {
		f := sqltree.NewFunction(countStar)
		f.Alias = partialRows
		list = append(list, f)
	}
	return &sqltree.SelectNode{SelectList: list, From: sel.From, Where: sel.Where, GroupExpressions: groups,
		Modifiers: []sqltree.Node{}, Rest: sqltree.Fields{"cte_map": &sqltree.Object{Fields: sqltree.Fields{"map": []any{}}},
			"group_sets": []any{set}, "aggregate_handling": "STANDARD_HANDLING", "sample": nil}}
}

// rewriteCounts replaces each count(*) of the outer level by the sum of the
// partial counts, as BIGINT, keeping a select item's column name.
func (g *dayGrouping) rewriteCounts(sel *sqltree.SelectNode) {
	rule := func(n sqltree.Node, _ sqltree.Scope) (sqltree.Node, bool, error) {
		f, ok := n.(*sqltree.Function)
		if !ok || !strings.EqualFold(f.Name, countStar) {
			return n, false, nil
		}
		c := sqltree.NewCast(sqltree.NewFunction("sum", sqltree.NewColumnRef(partialRows)), "BIGINT", false)
		c.Alias = f.Alias
		return c, true, nil
	}
	for i, item := range sel.SelectList {
		if f, ok := item.(*sqltree.Function); ok && strings.EqualFold(f.Name, countStar) && f.Alias == "" {
			f.Alias = countStarCol
		}
		sel.SelectList[i], _, _ = sqltree.TransformLevel(item, rule)
	}
	if sel.Having != nil {
		sel.Having, _, _ = sqltree.TransformLevel(sel.Having, rule)
	}
	for i, m := range sel.Modifiers {
		sel.Modifiers[i], _, _ = sqltree.TransformLevel(m, rule)
	}
}

func hasCountStar(e sqltree.Node) bool {
	found := false
	sqltree.Inspect(e, func(n sqltree.Node, _ sqltree.Scope) bool {
		if f, ok := n.(*sqltree.Function); ok && strings.EqualFold(f.Name, countStar) {
			found = true
		}
		return !found
	})
	return found
}

func hasOrderBys(f *sqltree.Function) bool {
	o, _ := f.Rest["order_bys"].(*sqltree.Object)
	if o == nil {
		return false
	}
	orders, _ := o.Get("orders").([]any)
	return len(orders) > 0
}
