package engine

import "strings"

// storedBalancingDay rewrites meter_balancing_day("from", sparte) over a
// configured relation into its stored balancing_day column. The encoder is the
// only writer of that column and derives it with the same calendar function
// (metering.BalancingDay), so the two are equal row for row, and the column is
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
				if col, ok := balancingDayColumn(x, mine, total); ok {
					// Keep the name the call would have had: its alias, or
					// the spelling DuckDB gives an unaliased call.
					alias, _ := x["alias"].(string)
					if alias == "" {
						alias = `meter_balancing_day("from", sparte)`
					}
					for k := range x {
						delete(x, k)
					}
					x["class"] = "COLUMN_REF"
					x["type"] = "COLUMN_REF"
					x["alias"] = alias
					x["query_location"] = locationUnknown
					x["column_names"] = col
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

func balancingDayColumn(fn node, mine []*reference, total int) ([]any, bool) {
	name, _ := fn["function_name"].(string)
	if !strings.EqualFold(name, "meter_balancing_day") {
		return nil, false
	}
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
