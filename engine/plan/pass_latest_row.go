package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltree"
)

// latestRowPerKey marks the references read by a latest-row-per-key statement —
// SELECT DISTINCT ON (k…) … FROM readings [WHERE …k…] ORDER BY [k…,] "from"
// DESC, … — whose cold half render reads only for the keys the hot half
// lacks. The split makes that exact: every cold row has "from" below the
// watermark W (its filter, or its files' statistics on a required column)
// and every hot row "from" at or above it, so a key the hot half holds has
// all its rows of the latest "from" (ties included) there, and DISTINCT ON,
// ordering each key's rows by "from" first, keeps one of them whatever else
// the relation holds. DuckDB then builds its per-row sort key for the hot
// week and the cold rows of keys it lacks, not for every row of the table.
// Only a statement of exactly that shape is touched: one reference, no
// GROUP BY, HAVING, QUALIFY or sample, a select list of its own columns
// under their own names or a plain star (so ORDER BY and DISTINCT ON name
// the columns, not another item's alias), and a WHERE only if it is a
// function of the DISTINCT ON keys alone: it keeps or drops a key's rows
// all together, in either half, so the keys it keeps have their latest row
// where they had it. A WHERE on any other column may drop the hot half's
// rows of a key and keep its cold ones, whose latest the anti join would
// wrongly drop; anything else reads both halves whole. The relation holds
// the resolved or the raw rows alike: readings_versions' rows of one
// reading share its "from", so all versions of a key's latest reading are in
// the half that holds it.
func latestRowPerKey(_ context.Context, pl *planning) error {
	for _, lv := range pl.levels {
		if len(lv.mine) != 1 || lv.total != 1 {
			continue
		}
		ref := lv.mine[0]
		if ref.cold == nil || ref.hot == nil || ref.hot.partials != nil || lv.sel.From != sqltree.Node(ref.n) {
			continue
		}
		if keys, cols, ok := latestPerKey(lv.sel, ref); ok {
			ref.latest = &latestRead{keys: keys, cols: cols}
		}
	}
	return nil
}

// latestRead is a reference latestRowPerKey marked: the DISTINCT ON columns,
// and every column the statement names (the relation carries only those:
// DuckDB does not prune the columns of a materialized CTE or of the UNION
// over it, and would read every column of the cold files).
type latestRead struct{ keys, cols []string }

// latestPerKey is the DISTINCT ON columns of sel and the columns it names
// when sel keeps, per key, a row of the latest "from" (see
// latestRowPerKey), and false otherwise.
func latestPerKey(sel *sqltree.SelectNode, ref *reference) (keys, cols []string, ok bool) {
	if len(sel.GroupExpressions) > 0 || sel.Having != nil || sel.Qualify != nil ||
		!emptyField(sel.Rest["sample"]) || !emptyField(ref.n.Rest["sample"]) || !emptyField(ref.n.Rest["column_name_alias"]) {
		return nil, nil, false
	}
	column := func(n sqltree.Node) (string, bool) {
		name, ok := ref.column(n)
		if ok && !slices.Contains(cols, name) {
			cols = append(cols, name)
		}
		return strings.ToLower(name), ok
	}
	// A star makes the relation carry every column, in the table's order,
	// which the star then expands to as over the table itself.
	for _, item := range sel.SelectList {
		if ownStar(item, ref) && cols == nil {
			for _, c := range ref.rel.table.Config.Columns() {
				cols = append(cols, c.Name)
			}
		}
	}
	for _, item := range sel.SelectList {
		if ownStar(item, ref) {
			continue
		}
		col, ok := column(item)
		if !ok || !strings.EqualFold(aliasOf(item), col) && aliasOf(item) != "" {
			return nil, nil, false
		}
	}
	var orders []any
	for _, m := range sel.Modifiers {
		o, ok := m.(*sqltree.Object)
		if !ok {
			return nil, nil, false
		}
		switch o.Get("type") {
		case "DISTINCT_MODIFIER":
			targets, _ := o.Get("distinct_on_targets").([]any)
			if keys != nil || len(targets) == 0 {
				return nil, nil, false
			}
			for _, t := range targets {
				n, _ := t.(sqltree.Node)
				col, ok := column(n)
				if !ok || col == "from" {
					return nil, nil, false
				}
				keys = append(keys, col)
			}
		case "ORDER_MODIFIER":
			if orders != nil {
				return nil, nil, false
			}
			orders, _ = o.Get("orders").([]any)
		case "LIMIT_MODIFIER", "LIMIT_PERCENT_MODIFIER":
		default:
			return nil, nil, false
		}
	}
	if keys == nil {
		return nil, nil, false
	}
	// Each key's rows must be ordered by "from" DESC first: only keys may
	// come before it (they are the same within a key). Every term is a
	// column of the reference, which the relation then carries.
	latest := false
	for _, ob := range orders {
		o, ok := ob.(*sqltree.Object)
		if !ok {
			return nil, nil, false
		}
		n, _ := o.Get("expression").(sqltree.Node)
		col, ok := column(n)
		switch {
		case !ok:
			return nil, nil, false
		case latest || slices.Contains(keys, col):
		case col == "from" && o.Get("type") == "DESCENDING":
			latest = true
		default:
			return nil, nil, false
		}
	}
	if !latest || sel.Where != nil && !keysOnly(sel.Where, ref, keys) {
		return nil, nil, false
	}
	return keys, cols, true
}

// ownStar: n is a plain * or ref.*, or one that only excludes columns —
// every item it expands to is a column of ref under its own name.
func ownStar(n sqltree.Node, ref *reference) bool {
	o, ok := n.(*sqltree.Object)
	if !ok || o.Get("class") != "STAR" {
		return false
	}
	rel, _ := o.Get("relation_name").(string)
	alias, _ := o.Get("alias").(string)
	columns, _ := o.Get("columns").(bool)
	return (rel == "" || strings.EqualFold(rel, ref.n.Name())) && alias == "" && !columns && o.Get("expr") == nil &&
		emptyField(o.Get("replace_list")) && emptyField(o.Get("rename_list")) && emptyField(o.Get("qualified_exclude_list"))
}

// keysOnly: e is a function of the key columns alone — keys, constants,
// parameters, casts, comparisons, AND/OR/NOT, IN lists, IS [NOT] NULL,
// BETWEEN and the built-in functions DuckDB declares CONSISTENT (LIKE is
// one) — so it holds for all of a key's rows or for none. No other column,
// no subquery, nothing that depends on chance (random()).
func keysOnly(e sqltree.Node, ref *reference, keys []string) bool {
	all := func(ns ...sqltree.Node) bool {
		for _, n := range ns {
			if !keysOnly(n, ref, keys) {
				return false
			}
		}
		return true
	}
	switch x := e.(type) {
	case *sqltree.Constant, *sqltree.Parameter:
		return true
	case *sqltree.ColumnRef:
		col, ok := ref.column(x)
		return ok && slices.Contains(keys, strings.ToLower(col))
	case *sqltree.Cast:
		return all(x.Child)
	case *sqltree.Comparison:
		return all(x.Left, x.Right)
	case *sqltree.Conjunction:
		return all(x.Children...)
	case *sqltree.Between:
		return all(x.Input, x.Lower, x.Upper)
	case *sqltree.Function:
		orders, _ := x.Rest["order_bys"].(*sqltree.Object)
		if x.Schema != "" && !strings.EqualFold(x.Schema, "main") || x.Catalog != "" || x.Distinct ||
			x.Rest["filter"] != nil || orders != nil && !emptyField(orders.Get("orders")) || !consistentFunctions().has(x.Name) {
			return false
		}
		return all(x.Children...)
	case *sqltree.Object:
		switch x.Get("type") {
		case "COMPARE_IN", "COMPARE_NOT_IN", "OPERATOR_NOT", "OPERATOR_IS_NULL", "OPERATOR_IS_NOT_NULL":
		default:
			return false
		}
		children, _ := x.Get("children").([]any)
		for _, c := range children {
			n, ok := c.(sqltree.Node)
			if !ok || !keysOnly(n, ref, keys) {
				return false
			}
		}
		return len(children) > 0
	}
	return false
}

// latestRowRelation is the split of a reference latestRowPerKey marked, in
// the columns cols (keys among them): the hot half, materialized once, and
// the cold half's rows of the keys it lacks.
func latestRowRelation(keys, cols []string, cold, hot string) string {
	on := make([]string, len(keys))
	for i, k := range keys {
		q := meterstore.QuoteIdent(k)
		on[i] = fmt.Sprintf("_meterstore_row.%s IS NOT DISTINCT FROM _meterstore_newer.%s", q, q)
	}
	c := meterstore.QuoteIdents(cols)
	return fmt.Sprintf("WITH _meterstore_hot AS MATERIALIZED (SELECT %s FROM (%s) AS _meterstore_src) SELECT * FROM _meterstore_hot UNION ALL "+
		"SELECT * FROM (SELECT %s FROM (%s) AS _meterstore_src) AS _meterstore_row ANTI JOIN (SELECT DISTINCT %s FROM _meterstore_hot) AS _meterstore_newer ON %s",
		c, hot, c, cold, meterstore.QuoteIdents(keys), strings.Join(on, " AND "))
}
