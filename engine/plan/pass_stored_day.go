package plan

import (
	"context"
	"strings"

	"github.com/meterstore/meterstore/internal/sqltree"
)

// storedBalancingDay rewrites meter_balancing_day("from", sparte) over a
// configured relation into its stored balancing_day column, and
// meter_balancing_month("from", sparte) into that column's month,
// CAST(date_trunc('month', balancing_day) AS DATE). The store's encoder
// derives the column with the same calendar function (metering.BalancingDay;
// metering.BalancingMonth is by definition the first of the balancing day's
// month) and marks every file it writes so (catalog.MarkBalancingDay), so
// they are equal row for row, and the column is a dictionary-encoded DATE
// where the function is a zone conversion per row. A cold file whose footer
// does not carry that mark and prove it holds the column — another writer
// added it, with the column or without — is read with the column computed by
// the function (readParquet, coldScanPath; iceberg_scan reads such a file one
// by one), so the rewrite holds for its rows too: a foreign writer's stored
// days are never answered (msql verify reports them,
// store.Table.BalancingDayMismatches).
//
// Only calls whose two arguments provably name the same reference are
// rewritten: qualified by that reference's alias, or unqualified in a SELECT
// that reads exactly one relation. Each SELECT rewrites its own expressions;
// those of a nested query are its own level's.
func storedBalancingDay(_ context.Context, pl *planning) error {
	for _, lv := range pl.levels {
		rule := func(n sqltree.Node, _ sqltree.Scope) (sqltree.Node, bool, error) {
			fn, ok := n.(*sqltree.Function)
			if !ok {
				return n, false, nil
			}
			out, ok := lv.storedDay(fn)
			return out, ok, nil
		}
		sel := lv.sel
		var err error
		for _, slot := range []*sqltree.Node{&sel.Where, &sel.Having, &sel.Qualify} {
			if *slot, _, err = transformLevel(*slot, rule); err != nil {
				return err
			}
		}
		for _, list := range [][]sqltree.Node{sel.SelectList, sel.GroupExpressions, sel.Modifiers} {
			for i := range list {
				if list[i], _, err = transformLevel(list[i], rule); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func transformLevel(n sqltree.Node, f sqltree.Func) (sqltree.Node, bool, error) {
	if n == nil {
		return nil, false, nil
	}
	return sqltree.TransformLevel(n, f)
}

// storedDay is the column expression a balancing-day call over one of the
// level's references stands for, keeping the name the call would have had:
// its alias, or the spelling DuckDB gives an unaliased call.
func (lv level) storedDay(fn *sqltree.Function) (sqltree.Node, bool) {
	name := strings.ToLower(fn.Name)
	if name != "meter_balancing_day" && name != "meter_balancing_month" {
		return fn, false
	}
	col, ok := lv.balancingDayRef(fn)
	if !ok {
		return fn, false
	}
	alias := fn.Alias
	if alias == "" {
		alias = name + `("from", sparte)`
	}
	if name == "meter_balancing_day" {
		col.Alias = alias
		return col, true
	}
	month := monthOf(col)
	month.Alias = alias
	return month, true
}

// monthOf is CAST(date_trunc('month', ref) AS DATE).
func monthOf(ref sqltree.Node) *sqltree.Cast {
	return sqltree.NewCast(sqltree.NewFunction("date_trunc", sqltree.NewString("month"), ref), "DATE", false)
}

// balancingDayRef is the balancing_day column of the reference a call's
// ("from", sparte) arguments name.
func (lv level) balancingDayRef(fn *sqltree.Function) (*sqltree.ColumnRef, bool) {
	if fn.Schema != "" && !strings.EqualFold(fn.Schema, "main") || fn.Distinct || len(fn.Children) != 2 {
		return nil, false
	}
	q1, c1, ok1 := columnRef(fn.Children[0])
	q2, c2, ok2 := columnRef(fn.Children[1])
	if !ok1 || !ok2 || c1 != "from" || c2 != "sparte" || !strings.EqualFold(q1, q2) {
		return nil, false
	}
	target := named(lv.mine, q1)
	if q1 == "" && lv.total == 1 && len(lv.mine) == 1 {
		target = lv.mine[0]
	}
	if target == nil || !target.owns("from") || !target.owns("sparte") || !target.owns(balancingDayColumn) {
		return nil, false
	}
	if q1 == "" {
		return sqltree.NewColumnRef(balancingDayColumn), true
	}
	return sqltree.NewColumnRef(q1, balancingDayColumn), true
}

// column is the table's own spelling of the column e names, when e is a
// column reference to r — unqualified, or qualified by r's name — and the
// table has that column.
func (r *reference) column(e sqltree.Node) (string, bool) {
	q, col, ok := columnRef(e)
	if !ok || q != "" && !strings.EqualFold(q, r.n.Name()) {
		return "", false
	}
	for _, c := range r.rel.table.Config.Columns() {
		if strings.EqualFold(c.Name, col) {
			return c.Name, true
		}
	}
	return "", false
}

// columnRef reads a one- or two-part column reference.
func columnRef(n sqltree.Node) (qual, col string, ok bool) {
	c, ok := n.(*sqltree.ColumnRef)
	if !ok {
		return "", "", false
	}
	switch len(c.Names) {
	case 1:
		col = c.Names[0]
	case 2:
		qual, col = c.Names[0], c.Names[1]
	default:
		return "", "", false
	}
	return qual, strings.ToLower(col), true
}
