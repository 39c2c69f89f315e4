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
// SELECT DISTINCT ON (k…) … FROM readings ORDER BY [k…,] "from" DESC, … — whose
// cold half render reads only for the keys the hot half lacks. The split
// makes that exact: every cold row has "from" below the watermark W (its
// filter, or its files' statistics on a required column) and every hot row
// "from" at or above it, so a key the hot half holds has its latest row there,
// and DISTINCT ON, ordering each key's rows by "from" first, keeps that row
// whatever else the relation holds. DuckDB then builds its per-row sort key
// for the hot week and the cold rows of keys it lacks, not for every row of
// the table. Only a statement of exactly that shape is touched: one
// reference, no WHERE, GROUP BY, HAVING, QUALIFY or sample, a select list of
// its own columns under their own names (so ORDER BY and DISTINCT ON name
// the columns, not another item's alias); anything else reads both halves
// whole.
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
	if sel.Where != nil || len(sel.GroupExpressions) > 0 || sel.Having != nil || sel.Qualify != nil ||
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
	for _, item := range sel.SelectList {
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
	if !latest {
		return nil, nil, false
	}
	return keys, cols, true
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
