package engine

import (
	"maps"
	"strings"
)

// storedBalancingDay rewrites meter_balancing_day("from", sparte) over a
// configured relation into its stored balancing_day column, and
// meter_balancing_month("from", sparte) into that column's month,
// CAST(date_trunc('month', balancing_day) AS DATE). The encoder is the only
// writer of the column and derives it with the same calendar function
// (metering.BalancingDay; metering.BalancingMonth is by definition the first of
// the balancing day's month), so they are equal row for row, and the column is
// a dictionary-encoded DATE where the function is a zone conversion per row.
//
// Only calls whose two arguments provably name the same reference are
// rewritten: qualified by that reference's alias, or unqualified in a SELECT
// that reads exactly one relation. Nested subqueries are left to their own pass.
func storedBalancingDay(sel node, mine []*reference, total int) bool {
	changed := false
	var visit func(v any)
	visit = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				visit(e)
			}
		case node:
			if x["class"] == "SUBQUERY" || x["type"] == "SELECT_NODE" || x["type"] == "SET_OPERATION_NODE" {
				return
			}
			if x["class"] == "FUNCTION" {
				if fn, col, ok := balancingDayColumn(x, mine, total); ok {
					// Keep the name the call would have had: its alias, or
					// the spelling DuckDB gives an unaliased call.
					alias, _ := x["alias"].(string)
					if alias == "" {
						alias = fn + `("from", sparte)`
					}
					for k := range x {
						delete(x, k)
					}
					ref := node{"class": "COLUMN_REF", "type": "COLUMN_REF", "alias": "", "query_location": locationUnknown, "column_names": col}
					if fn == "meter_balancing_day" {
						maps.Copy(x, ref)
					} else {
						maps.Copy(x, monthOf(ref))
					}
					x["alias"] = alias
					changed = true
					return
				}
			}
			for _, e := range x {
				visit(e)
			}
		}
	}
	for _, k := range []string{"select_list", "where_clause", "group_expressions", "having", "qualify", "modifiers"} {
		visit(sel[k])
	}
	return changed
}

// monthOf is CAST(date_trunc('month', ref) AS DATE) as a parse-tree node.
func monthOf(ref node) node {
	month := node{"class": "CONSTANT", "type": "VALUE_CONSTANT", "alias": "", "query_location": locationUnknown,
		"value": node{"is_null": false, "type": node{"id": "VARCHAR", "type_info": nil}, "value": "month"}}
	trunc := node{"class": "FUNCTION", "type": "FUNCTION", "alias": "", "catalog": "", "schema": "", "query_location": locationUnknown,
		"function_name": "date_trunc", "children": []any{month, ref}, "distinct": false, "export_state": false, "filter": nil,
		"is_operator": false, "order_bys": node{"orders": []any{}, "type": "ORDER_MODIFIER"}}
	return node{"class": "CAST", "type": "OPERATOR_CAST", "alias": "", "query_location": locationUnknown,
		"cast_type": node{"id": "DATE", "type_info": nil}, "child": trunc, "try_cast": false}
}

// balancingDayColumn matches meter_balancing_day or meter_balancing_month over
// one configured reference's "from" and sparte, returning the function's name
// and the balancing_day column reference to use instead.
func balancingDayColumn(fn node, mine []*reference, total int) (string, []any, bool) {
	name, _ := fn["function_name"].(string)
	name = strings.ToLower(name)
	if name != "meter_balancing_day" && name != "meter_balancing_month" {
		return "", nil, false
	}
	col, ok := balancingDayRef(fn, mine, total)
	return name, col, ok
}

func balancingDayRef(fn node, mine []*reference, total int) ([]any, bool) {
	if schema, _ := fn["schema"].(string); schema != "" && !strings.EqualFold(schema, "main") {
		return nil, false
	}
	if d, _ := fn["distinct"].(bool); d {
		return nil, false
	}
	args, _ := fn["children"].([]any)
	if len(args) != 2 {
		return nil, false
	}
	q1, c1, ok1 := columnRef(args[0])
	q2, c2, ok2 := columnRef(args[1])
	if !ok1 || !ok2 || c1 != "from" || c2 != "sparte" || !strings.EqualFold(q1, q2) {
		return nil, false
	}
	if q1 == "" {
		if total != 1 || len(mine) != 1 {
			return nil, false
		}
		return []any{"balancing_day"}, true
	}
	for _, r := range mine {
		n := r.alias
		if n == "" {
			n, _ = r.n["table_name"].(string)
		}
		if strings.EqualFold(n, q1) {
			return []any{q1, "balancing_day"}, true
		}
	}
	return nil, false
}

// columnRef reads a one- or two-part column reference.
func columnRef(v any) (qual, col string, ok bool) {
	n, _ := v.(node)
	if n["class"] != "COLUMN_REF" {
		return "", "", false
	}
	names, _ := n["column_names"].([]any)
	switch len(names) {
	case 1:
		col, _ = names[0].(string)
	case 2:
		qual, _ = names[0].(string)
		col, _ = names[1].(string)
	default:
		return "", "", false
	}
	return qual, strings.ToLower(col), true
}
