package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// A reference is one occurrence of a configured relation in a statement.
type reference struct {
	n     node // the BASE_TABLE node; rewritten in place into a SUBQUERY
	rel   relation
	alias string
	// conjuncts that bound "from", or fix a merge-key column, for this reference
	bounds []boundExpr
	eqs    []eqExpr
	// results, after evaluation
	rng timeRange
	eq  map[string]string
}

// relation is a name a statement may use: the resolved or the raw form of a table.
type relation struct {
	table    *tableState
	resolved bool
}

type boundExpr struct {
	op   string // ">=", ">", "<", "<=", "="
	expr any
}

type eqExpr struct {
	column string
	expr   any
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

// finder walks a parse tree and collects every reference to a configured relation
// together with the conjuncts that provably apply to it.
type finder struct {
	relations map[string]relation // lower-case name → relation
	refs      []*reference
	system    []systemRef
	catalog   string // the session database's catalog name ("" = "memory")
	refused   error
}

// walk visits every object of the tree. ctes holds the CTE names in scope: a
// CTE called "readings" shadows the relation, exactly as in DuckDB's binder.
func (f *finder) walk(v any, ctes map[string]bool) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			f.walk(e, ctes)
		}
	case node:
		if cm, ok := x["cte_map"].(node); ok {
			if entries, ok := cm["map"].([]any); ok && len(entries) > 0 {
				inner := make(map[string]bool, len(ctes)+len(entries))
				for k := range ctes {
					inner[k] = true
				}
				for _, e := range entries {
					if en, ok := e.(node); ok {
						if k, ok := en["key"].(string); ok {
							inner[strings.ToLower(k)] = true
						}
					}
				}
				ctes = inner
			}
		}
		switch x["type"] {
		case "SELECT_NODE":
			f.extract(x, ctes)
		case "BASE_TABLE":
			f.base(x, ctes)
		case "TABLE_FUNCTION":
			f.tableFunction(x)
		}
		for k, e := range x {
			if k == "cte_map" || k == "from_table" || k == "where_clause" || k == "select_list" ||
				k == "group_expressions" || k == "having" || k == "qualify" || k == "modifiers" ||
				k == "left" || k == "right" || k == "subquery" || k == "node" || k == "children" ||
				k == "child" || k == "condition" || k == "function" || k == "map" || k == "value" ||
				k == "query" || k == "input" || k == "lower" || k == "upper" || k == "orders" ||
				k == "expression" || k == "partitions" || k == "order_bys" || k == "check" ||
				k == "case_checks" || k == "else_expr" || k == "then_expr" || k == "when_expr" ||
				k == "statements" || k == "filter" || k == "start_expr" || k == "end_expr" ||
				k == "offset_expr" || k == "default_expr" || k == "limit" || k == "offset" ||
				k == "source" || k == "pivots" || k == "unpivots" || k == "entries" || k == "values" ||
				k == "sample" || k == "lambda_expr" || k == "key_targets" || k == "arg_orders" {
				f.walk(e, ctes)
				continue
			}
			// Any other nested object or list might still hold a table reference;
			// walking it costs nothing and a missed reference would run the stub.
			switch e.(type) {
			case node, []any:
				f.walk(e, ctes)
			}
		}
	}
}

// allowedTableFunctions are the table functions a statement may call: they
// compute rows rather than read files or other databases. Everything else —
// read_parquet, read_csv, glob, parquet_metadata, attach-style scanners, and the
// engine's own scans — is refused before execution; the unrestricted handle
// (DB) is the door for in-process file work.
var allowedTableFunctions = map[string]bool{
	"range": true, "generate_series": true, "unnest": true, "meter_completeness": true,
}

func (f *finder) refuse(err error) {
	if f.refused == nil {
		f.refused = err
	}
}

func (f *finder) tableFunction(x node) {
	fn, _ := x["function"].(node)
	name, _ := fn["function_name"].(string)
	if !allowedTableFunctions[strings.ToLower(name)] {
		f.refuse(fmt.Errorf("%w: table function %s is not available in a query session (it reads files, other databases or the engine's internals); export and file work go through the shell's unrestricted handle", ErrNotAQuery, name))
	}
}

// allowedSchemas hold catalog views a client may browse.
var allowedSchemas = map[string]bool{"information_schema": true, "pg_catalog": true, "system": true}

func (f *finder) base(x node, ctes map[string]bool) {
	name, _ := x["table_name"].(string)
	schema, _ := x["schema_name"].(string)
	catalog, _ := x["catalog_name"].(string)
	lname := strings.ToLower(name)
	if ctes[lname] && schema == "" {
		return
	}
	own := f.catalog
	if own == "" {
		own = "memory"
	}
	if catalog != "" && !strings.EqualFold(catalog, own) {
		f.refuse(fmt.Errorf("%w: relation %s.%s: other databases are not readable here", ErrNotAQuery, catalog, name))
		return
	}
	if strings.EqualFold(schema, "system") {
		if _, ok := systemTables[lname]; !ok {
			f.refuse(fmt.Errorf("%w: unknown system table %q (system.tables, system.config, system.resolution, system.snapshots)", ErrNotAQuery, name))
			return
		}
		for _, r := range f.system {
			if sameNode(r.n, x) {
				return
			}
		}
		f.system = append(f.system, systemRef{n: x, name: lname})
		return
	}
	rel, ok := f.relations[lname]
	if !ok || (schema != "" && !strings.EqualFold(schema, "main")) {
		if ctes[lname] && schema == "" || allowedSchemas[strings.ToLower(schema)] {
			return
		}
		// Anything else would be a DuckDB table of the session or a replacement
		// scan reading a file by name: neither belongs in a query session.
		f.refuse(fmt.Errorf("%w: unknown relation %q (the relations here are %s)", ErrNotAQuery, name, f.names()))
		return
	}
	for _, r := range f.refs {
		if sameNode(r.n, x) {
			return
		}
	}
	alias, _ := x["alias"].(string)
	f.refs = append(f.refs, &reference{n: x, rel: rel, alias: alias})
}

func (f *finder) names() string {
	var out []string
	for n := range f.relations {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func sameNode(a, b node) bool {
	return fmt.Sprintf("%p", a) == fmt.Sprintf("%p", b)
}

// directTables lists the BASE_TABLE nodes a SELECT reads directly (through joins,
// not through subqueries), and how many table references it has in all.
func directTables(from any) (bases []node, total int) {
	n, ok := from.(node)
	if !ok {
		return nil, 0
	}
	switch n["type"] {
	case "BASE_TABLE":
		return []node{n}, 1
	case "JOIN":
		lb, lt := directTables(n["left"])
		rb, rt := directTables(n["right"])
		return append(lb, rb...), lt + rt
	case "EMPTY":
		return nil, 0
	}
	return nil, 1
}

// extract attaches the WHERE conjuncts of a SELECT to the references it reads
// directly. Conservative by construction (invariant 10): only top-level AND
// conjuncts are considered, OR contributes nothing, and a column qualified by
// another alias is not a bound on this reference.
func (f *finder) extract(sel node, ctes map[string]bool) {
	bases, total := directTables(sel["from_table"])
	if len(bases) == 0 {
		return
	}
	// Register the direct references first so conjuncts can attach to them.
	var mine []*reference
	for _, b := range bases {
		f.base(b, ctes)
		for _, r := range f.refs {
			if sameNode(r.n, b) {
				mine = append(mine, r)
			}
		}
	}
	if len(mine) == 0 {
		return
	}
	storedBalancingDay(sel, mine, total)
	for _, c := range conjuncts(sel["where_clause"]) {
		f.attach(c, mine, total)
	}
}

func conjuncts(e any) []node {
	n, ok := e.(node)
	if !ok {
		return nil
	}
	if n["class"] == "CONJUNCTION" && n["type"] == "CONJUNCTION_AND" {
		var out []node
		for _, c := range n["children"].([]any) {
			out = append(out, conjuncts(c)...)
		}
		return out
	}
	return []node{n}
}

var flip = map[string]string{">=": "<=", ">": "<", "<": ">", "<=": ">=", "=": "="}

var comparisonOps = map[string]string{
	"COMPARE_EQUAL":                "=",
	"COMPARE_GREATERTHAN":          ">",
	"COMPARE_GREATERTHANOREQUALTO": ">=",
	"COMPARE_LESSTHAN":             "<",
	"COMPARE_LESSTHANOREQUALTO":    "<=",
}

func (f *finder) attach(c node, mine []*reference, total int) {
	switch c["class"] {
	case "COMPARISON":
		op, ok := comparisonOps[c["type"].(string)]
		if !ok {
			return
		}
		left, right := c["left"], c["right"]
		if col, ok := left.(node); ok && col["class"] == "COLUMN_REF" && foldable(right) {
			f.bind(col, op, right, mine, total)
		} else if col, ok := right.(node); ok && col["class"] == "COLUMN_REF" && foldable(left) {
			f.bind(col, flip[op], left, mine, total)
		}
	case "BETWEEN":
		col, ok := c["input"].(node)
		if !ok || col["class"] != "COLUMN_REF" || !foldable(c["lower"]) || !foldable(c["upper"]) {
			return
		}
		f.bind(col, ">=", c["lower"], mine, total)
		f.bind(col, "<=", c["upper"], mine, total)
	}
}

// bind attaches a comparison on col to the reference col names.
func (f *finder) bind(col node, op string, expr any, mine []*reference, total int) {
	names, _ := col["column_names"].([]any)
	var qual, column string
	switch len(names) {
	case 1:
		column, _ = names[0].(string)
	case 2:
		qual, _ = names[0].(string)
		column, _ = names[1].(string)
	default:
		return
	}
	column = strings.ToLower(column)
	var target *reference
	if qual == "" {
		if total != 1 || len(mine) != 1 {
			return // unqualified in a join: which side it names is the binder's call, not ours
		}
		target = mine[0]
	} else {
		for _, r := range mine {
			name := r.alias
			if name == "" {
				name, _ = r.n["table_name"].(string)
			}
			if strings.EqualFold(name, qual) {
				target = r
			}
		}
	}
	if target == nil {
		return
	}
	if column == "from" {
		target.bounds = append(target.bounds, boundExpr{op: op, expr: expr})
		return
	}
	if op == "=" && target.rel.table.cfg.IsMergeKeyColumn(column) && stringLike(expr) {
		target.eqs = append(target.eqs, eqExpr{column: column, expr: expr})
	}
}

// foldable: a constant, a parameter, or a cast of one — something DuckDB can
// evaluate before the statement runs.
func foldable(e any) bool {
	n, ok := e.(node)
	if !ok {
		return false
	}
	switch n["class"] {
	case "CONSTANT":
		v, _ := n["value"].(node)
		isNull, _ := v["is_null"].(bool)
		return !isNull
	case "PARAMETER":
		return true
	case "CAST":
		return foldable(n["child"])
	}
	return false
}

// stringLike accepts only a VARCHAR literal or a parameter for an equality that
// will be pushed into both tiers: a number compared with a text column is cast by
// DuckDB's rules, which the pushed-down form need not share.
func stringLike(e any) bool {
	n, _ := e.(node)
	switch n["class"] {
	case "PARAMETER":
		return true
	case "CONSTANT":
		v, _ := n["value"].(node)
		t, _ := v["type"].(node)
		return t["id"] == "VARCHAR"
	}
	return false
}

// evaluate computes every collected bound and equality with DuckDB itself, on
// the statement's own connection and arguments, so a literal means exactly what
// it means in the statement (time zone, casts, formats). A value DuckDB cannot
// compute drops the bound: the range only ever widens (invariant 10).
func evaluate(ctx context.Context, conn *sql.Conn, refs []*reference, args []any) error {
	type slot struct {
		ref *reference
		b   *boundExpr
		e   *eqExpr
	}
	var slots []slot
	var exprs []node
	for _, r := range refs {
		for i := range r.bounds {
			slots = append(slots, slot{ref: r, b: &r.bounds[i]})
			exprs = append(exprs, castNode(r.bounds[i].expr, "TIMESTAMP WITH TIME ZONE"))
		}
		for i := range r.eqs {
			slots = append(slots, slot{ref: r, e: &r.eqs[i]})
			exprs = append(exprs, castNode(r.eqs[i].expr, "VARCHAR"))
		}
	}
	if len(exprs) == 0 {
		return nil
	}
	for i, e := range exprs {
		sub, ok := bindParams(e, args)
		if !ok {
			sub = castNode(nullConstant(), "VARCHAR") // unknown parameter: no bound
		}
		exprs[i] = sub.(node)
	}
	values, err := evalExprs(ctx, conn, exprs)
	if err != nil {
		values = make([]any, len(exprs)) // widen everything rather than guess
	}
	for i, s := range slots {
		switch {
		case s.b != nil:
			t, ok := values[i].(time.Time)
			if !ok {
				continue
			}
			applyBound(&s.ref.rng, s.b.op, t.UTC())
		case s.e != nil:
			v, ok := values[i].(string)
			if !ok {
				continue
			}
			if s.ref.eq == nil {
				s.ref.eq = map[string]string{}
			}
			if prev, dup := s.ref.eq[s.e.column]; dup && prev != v {
				// col = 'a' AND col = 'b': no row qualifies; scanning one of them is still a superset.
				continue
			}
			s.ref.eq[s.e.column] = v
		}
	}
	return nil
}

// applyBound narrows r by one comparison. Timestamps are microseconds, so the
// tightest exclusive bound above t is t+1µs; rounding outward keeps it a superset.
func applyBound(r *timeRange, op string, t time.Time) {
	next := t.Add(time.Microsecond)
	switch op {
	case ">=", ">":
		r.raiseLo(t)
	case "<":
		r.lowerHi(t)
	case "<=":
		r.lowerHi(next)
	case "=":
		r.raiseLo(t)
		r.lowerHi(next)
	}
}

func castNode(child any, typ string) node {
	return node{
		"class": "CAST", "type": "OPERATOR_CAST", "alias": "", "query_location": locationUnknown,
		"child": child, "cast_type": node{"id": typ, "type_info": nil}, "try_cast": true,
	}
}

// locationUnknown is DuckDB's query_location for synthesized nodes (UINT64_MAX).
var locationUnknown = json.Number("18446744073709551615")

func nullConstant() node {
	return node{"class": "CONSTANT", "type": "VALUE_CONSTANT", "alias": "", "query_location": locationUnknown,
		"value": node{"type": node{"id": "NULL", "type_info": nil}, "is_null": true}}
}

func varcharConstant(s string) node {
	return node{"class": "CONSTANT", "type": "VALUE_CONSTANT", "alias": "", "query_location": locationUnknown,
		"value": node{"type": node{"id": "VARCHAR", "type_info": nil}, "is_null": false, "value": s}}
}

// bindParams returns a copy of e with every positional parameter replaced by
// the statement's argument as a literal. Only text and time arguments are
// understood; anything else reports false and the bound is dropped.
func bindParams(e any, args []any) (any, bool) {
	switch x := e.(type) {
	case node:
		if x["class"] == "PARAMETER" {
			id, _ := x["identifier"].(string)
			var idx int
			if _, err := fmt.Sscanf(id, "%d", &idx); err != nil || idx < 1 || idx > len(args) {
				return nil, false
			}
			switch v := args[idx-1].(type) {
			case string:
				return varcharConstant(v), true
			case time.Time:
				return castNode(varcharConstant(v.UTC().Format("2006-01-02 15:04:05.999999Z07:00")), "TIMESTAMP WITH TIME ZONE"), true
			case *time.Time:
				if v == nil {
					return nil, false
				}
				return castNode(varcharConstant(v.UTC().Format("2006-01-02 15:04:05.999999Z07:00")), "TIMESTAMP WITH TIME ZONE"), true
			}
			return nil, false
		}
		out := make(node, len(x))
		for k, v := range x {
			c, ok := bindParams(v, args)
			if !ok {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			c, ok := bindParams(v, args)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return e, true
}

// evalExprs runs SELECT <e1>, <e2>, … through DuckDB.
func evalExprs(ctx context.Context, conn *sql.Conn, exprs []node) ([]any, error) {
	tmpl, err := serialize(ctx, conn, "SELECT 1")
	if err != nil {
		return nil, err
	}
	sel := statementNode(tmpl)
	list := make([]any, len(exprs))
	for i, e := range exprs {
		e["alias"] = fmt.Sprintf("b%d", i)
		list[i] = e
	}
	sel["select_list"] = list
	q, err := deserialize(ctx, conn, tmpl)
	if err != nil {
		return nil, err
	}
	row := conn.QueryRowContext(ctx, q)
	out := make([]any, len(exprs))
	ptrs := make([]any, len(exprs))
	for i := range out {
		ptrs[i] = &out[i]
	}
	if err := row.Scan(ptrs...); err != nil {
		return nil, err
	}
	return out, nil
}
