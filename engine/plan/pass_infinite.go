package plan

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltree"
)

// finiteBounds renders every comparison of a time column with a value that
// is ±infinity — anywhere in the statement: a WHERE, an OR, a NOT, a CASE, a
// join's condition, a subquery; a literal, a cast, a DATE, a parameter; =,
// <>, <, <=, >, >=, IS [NOT] DISTINCT FROM, BETWEEN, IN — as an expression
// holding no infinite value that DuckDB evaluates to the same answer.
// DuckDB pushes a comparison of a column with a constant into the scan
// reading that column, and DuckDB's iceberg extension (1.5.5), handed
// "from" > '-infinity' that way by iceberg_scan, fails the statement with
// "Date out of range in timestamp conversion" while pruning by partition
// values; the other paths answer it.
//
// An infinity compared with a value c of a date or timestamp type (each
// -infinity, finite, +infinity or NULL) is true for some of those kinds of c,
// which isfinite(c) and a comparison with a finite instant tell apart:
//
//	c > '-infinity'   (isfinite(c) OR c > TIMESTAMPTZ '1970-01-01 00:00:00+00')
//	c >= '-infinity'  (c IS NOT NULL OR NULL)
//	c < '-infinity'   (c IS NULL AND NULL)
//	c = '-infinity'   (NOT isfinite(c) AND c < TIMESTAMPTZ '1970-01-01 00:00:00+00')
//
// and alike — each NULL where c is NULL, as the comparison is. The stored
// time columns hold no infinity, but the column compared is recognised by
// its name only (a CTE, a subquery or a join may hand it on), so the forms
// stay exact for any value. A value that uses a parameter keeps using it
// (compared with itself, true whatever it is): DuckDB wants a value for
// every argument. A comparison is only evaluated when its value may be
// infinite (mayBeInfinite): a literal spelling an infinity, a parameter
// bound to one, never an ordinary statement's bounds.
func finiteBounds(ctx context.Context, pl *planning) error {
	types := timeColumns(pl.refs)
	if len(types) == 0 {
		return nil
	}
	ids := map[string]any{}
	for i, id := range argumentIDs(pl.in.Args) {
		a := pl.in.Args[i]
		if na, ok := a.(sql.NamedArg); ok {
			a = na.Value
		}
		ids[id] = a
	}
	var found []*infiniteCandidate
	sqltree.Inspect(pl.root, func(n sqltree.Node, _ sqltree.Scope) bool {
		if c := infiniteCandidateOf(n, types); c != nil && c.mayBeInfinite(ids) {
			found = append(found, c)
		}
		return true
	})
	if len(found) == 0 {
		return nil
	}
	var exprs []*sqltree.Cast
	for _, c := range found {
		for _, v := range c.values {
			exprs = append(exprs, sqltree.NewCast(v, castTypeIDs[c.typ], true))
		}
	}
	values, err := evalExprs(ctx, pl.conn, exprs, pl.in.Args)
	if err != nil {
		return boundError{err}
	}
	repl := map[sqltree.Node]sqltree.Node{}
	for _, c := range found {
		signs := make([]int, len(c.values))
		infinite := false
		for i := range c.values {
			signs[i] = infinitySign(values[0], c.typ)
			values = values[1:]
			infinite = infinite || signs[i] != 0
		}
		if !infinite {
			continue
		}
		out, err := c.render(ctx, pl.conn, signs)
		if err != nil {
			return err
		}
		repl[c.n] = out
	}
	if len(repl) == 0 {
		return nil
	}
	if err := keepColumnNames(ctx, pl, repl); err != nil {
		return err
	}
	root, _, err := sqltree.Transform(pl.root, func(n sqltree.Node, _ sqltree.Scope) (sqltree.Node, bool, error) {
		if r, ok := repl[n]; ok {
			setAlias(r, aliasOf(n))
			return r, true, nil
		}
		return n, false, nil
	})
	if err != nil {
		return err
	}
	pl.root = root.(*sqltree.Root)
	return nil
}

// castTypeIDs are the serialized type ids of the time columns' types.
var castTypeIDs = map[string]string{"TIMESTAMPTZ": "TIMESTAMP WITH TIME ZONE", "DATE": "DATE"}

// keepColumnNames gives each select-list expression a rewritten comparison
// lies in, and that has no alias, its text as the alias: DuckDB names such
// a column by its expression, which the finite form would rename.
func keepColumnNames(ctx context.Context, pl *planning, repl map[sqltree.Node]sqltree.Node) error {
	var unnamed []sqltree.Node
	sqltree.Inspect(pl.root, func(n sqltree.Node, _ sqltree.Scope) bool {
		sel, ok := n.(*sqltree.SelectNode)
		if !ok {
			return true
		}
		for _, item := range sel.SelectList {
			if aliasOf(item) == "" && holdsAny(item, repl) {
				unnamed = append(unnamed, item)
			}
		}
		return true
	})
	for _, item := range unnamed {
		tmpl, err := serialize(ctx, pl.conn, "SELECT 1")
		if err != nil {
			return err
		}
		tmpl.Statements[0].Node.(*sqltree.SelectNode).SelectList = []sqltree.Node{item}
		q, err := deserialize(ctx, pl.conn, tmpl)
		if err != nil {
			return err
		}
		setAlias(item, strings.TrimPrefix(q, "SELECT "))
	}
	return nil
}

// holdsAny: n or a node below it is among the keys of nodes.
func holdsAny(n sqltree.Node, nodes map[sqltree.Node]sqltree.Node) bool {
	found := false
	sqltree.Inspect(n, func(x sqltree.Node, _ sqltree.Scope) bool {
		if _, ok := nodes[x]; ok {
			found = true
		}
		return !found
	})
	return found
}

// aliasOf is an expression's alias ("" for none).
func aliasOf(n sqltree.Node) string {
	switch x := n.(type) {
	case *sqltree.Cast:
		return x.Alias
	case *sqltree.ColumnRef:
		return x.Alias
	case *sqltree.Constant:
		return x.Alias
	case *sqltree.Function:
		return x.Alias
	}
	if rest := restOf(n); rest != nil {
		s, _ := rest["alias"].(string)
		return s
	}
	return ""
}

// setAlias gives an expression an alias (none: "").
func setAlias(n sqltree.Node, alias string) {
	switch x := n.(type) {
	case *sqltree.Cast:
		x.Alias = alias
	case *sqltree.ColumnRef:
		x.Alias = alias
	case *sqltree.Constant:
		x.Alias = alias
	case *sqltree.Function:
		x.Alias = alias
	default:
		if rest := restOf(n); rest != nil {
			rest["alias"] = alias
		}
	}
}

// restOf is the unmodelled fields of an expression that keeps its alias there.
func restOf(n sqltree.Node) sqltree.Fields {
	switch x := n.(type) {
	case *sqltree.Comparison:
		return x.Rest
	case *sqltree.Conjunction:
		return x.Rest
	case *sqltree.Between:
		return x.Rest
	case *sqltree.Object:
		return x.Fields
	}
	return nil
}

// timeColumns are the date and timestamp columns of the statement's
// relations, by lower-case name, with their DuckDB types.
func timeColumns(refs []*reference) map[string]string {
	out := map[string]string{}
	for _, r := range refs {
		for _, c := range r.rel.table.Config.Columns() {
			if c.Type == meterstore.TypeTimestamp || c.Type == meterstore.TypeDate {
				if _, dup := out[strings.ToLower(c.Name)]; !dup {
					out[strings.ToLower(c.Name)] = c.Type.DuckDBType()
				}
			}
		}
	}
	return out
}

// infiniteCandidate is one comparison of a time column with values that may
// be infinite.
type infiniteCandidate struct {
	n      sqltree.Node // the comparison replaced
	col    sqltree.Node // the column compared
	typ    string       // its DuckDB type
	values []sqltree.Node
	// kind: a comparison (op, the column on the left), "between" (values
	// lower, upper), "in" or "not in" (values the list)
	kind, op string
}

// The comparisons an infinity can be compared by, as the column op value.
var infinityOps = map[string]string{
	"COMPARE_EQUAL":                "=",
	"COMPARE_NOTEQUAL":             "<>",
	"COMPARE_LESSTHAN":             "<",
	"COMPARE_LESSTHANOREQUALTO":    "<=",
	"COMPARE_GREATERTHAN":          ">",
	"COMPARE_GREATERTHANOREQUALTO": ">=",
	"COMPARE_DISTINCT_FROM":        "distinct",
	"COMPARE_NOT_DISTINCT_FROM":    "not distinct",
}

var flipInfinityOp = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<="}

// infiniteCandidateOf is n as a comparison of a time column with foldable
// values, or nil.
func infiniteCandidateOf(n sqltree.Node, types map[string]string) *infiniteCandidate {
	var timeCol func(x sqltree.Node) string
	timeCol = func(x sqltree.Node) string {
		if f, ok := x.(*sqltree.Function); ok && strings.EqualFold(f.Name, "date_trunc") && len(f.Children) == 2 && foldable(f.Children[0]) {
			// DuckDB pushes a bound on date_trunc(part, c) into the scan as one on c.
			return timeCol(f.Children[1])
		}
		c, ok := x.(*sqltree.ColumnRef)
		if !ok || len(c.Names) == 0 {
			return ""
		}
		return types[strings.ToLower(c.Names[len(c.Names)-1])]
	}
	switch x := n.(type) {
	case *sqltree.Comparison:
		op, ok := infinityOps[x.Op]
		if !ok {
			return nil
		}
		if typ := timeCol(x.Left); typ != "" && foldable(x.Right) {
			return &infiniteCandidate{n: n, col: x.Left, typ: typ, values: []sqltree.Node{x.Right}, kind: "compare", op: op}
		}
		if typ := timeCol(x.Right); typ != "" && foldable(x.Left) {
			if f, ok := flipInfinityOp[op]; ok {
				op = f
			}
			return &infiniteCandidate{n: n, col: x.Right, typ: typ, values: []sqltree.Node{x.Left}, kind: "compare", op: op}
		}
	case *sqltree.Between:
		if typ := timeCol(x.Input); typ != "" && foldable(x.Lower) && foldable(x.Upper) {
			return &infiniteCandidate{n: n, col: x.Input, typ: typ, values: []sqltree.Node{x.Lower, x.Upper}, kind: "between"}
		}
	case *sqltree.Object:
		kind := map[any]string{"COMPARE_IN": "in", "COMPARE_NOT_IN": "not in"}[x.Get("type")]
		children, _ := x.Get("children").([]any)
		if kind == "" || len(children) < 2 {
			return nil
		}
		first, _ := children[0].(sqltree.Node)
		typ := timeCol(first)
		if typ == "" {
			return nil
		}
		c := &infiniteCandidate{n: n, col: first, typ: typ, kind: kind}
		for _, v := range children[1:] {
			v, ok := v.(sqltree.Node)
			if !ok || !foldable(v) {
				return nil
			}
			c.values = append(c.values, v)
		}
		return c
	}
	return nil
}

// mayBeInfinite: one of c's values holds a literal whose text names an
// infinity ('-infinity', DATE 'infinity', 'inf'), or a parameter whose
// argument is not plainly finite (a string naming one, a time.Time at
// DuckDB's infinity, a type other than a string, time or integer).
func (c *infiniteCandidate) mayBeInfinite(args map[string]any) bool {
	found := false
	for _, v := range c.values {
		sqltree.Inspect(v, func(n sqltree.Node, _ sqltree.Scope) bool {
			switch x := n.(type) {
			case *sqltree.Constant:
				found = found || strings.Contains(strings.ToLower(fmt.Sprint(x.Value.Get("value"))), "inf")
			case *sqltree.Parameter:
				found = found || argMayBeInfinite(args[x.Identifier])
			}
			return !found
		})
	}
	return found
}

func argMayBeInfinite(a any) bool {
	switch x := a.(type) {
	case nil, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return false
	case string:
		return strings.Contains(strings.ToLower(x), "inf")
	case []byte:
		return strings.Contains(strings.ToLower(string(x)), "inf")
	case time.Time:
		return infinite(x, timestampInfinity) || infinite(x, dateInfinity)
	case float64:
		return math.IsInf(x, 0)
	}
	return true
}

// infinitySign is -1 or +1 for a value DuckDB computed as -infinity or
// +infinity of typ, 0 for any other (a finite value, NULL).
func infinitySign(v any, typ string) int {
	t, ok := v.(time.Time)
	if !ok {
		return 0
	}
	top := int64(timestampInfinity)
	if typ == "DATE" {
		top = dateInfinity
	}
	if !infinite(t, top) {
		return 0
	}
	if t.Before(time.Unix(0, 0)) {
		return -1
	}
	return 1
}

// Which kinds of a date or timestamp value a comparison holds for.
type kinds struct{ neg, fin, pos bool }

// infinityKinds: the kinds of c for which c op ±infinity holds (sign -1, +1).
func infinityKinds(op string, sign int) kinds {
	neg := sign < 0
	switch op {
	case "=":
		return kinds{neg: neg, pos: !neg}
	case "<>":
		return kinds{neg: !neg, fin: true, pos: neg}
	case "<":
		return kinds{neg: !neg, fin: !neg}
	case "<=":
		return kinds{neg: true, fin: !neg, pos: !neg}
	case ">":
		return kinds{fin: neg, pos: neg}
	case ">=":
		return kinds{neg: neg, fin: neg, pos: true}
	}
	panic("plan: no comparison " + op)
}

// sql is the expression over the column __c that is true exactly for those
// kinds of its value, NULL where it is NULL; epoch is a finite literal of its
// type.
func (k kinds) sql(epoch string) string {
	switch k {
	case kinds{}:
		return "(__c IS NULL AND NULL)"
	case kinds{neg: true, fin: true, pos: true}:
		return "(__c IS NOT NULL OR NULL)"
	case kinds{neg: true}:
		return "(NOT isfinite(__c) AND __c < " + epoch + ")"
	case kinds{pos: true}:
		return "(NOT isfinite(__c) AND __c > " + epoch + ")"
	case kinds{fin: true, pos: true}:
		return "(isfinite(__c) OR __c > " + epoch + ")"
	case kinds{neg: true, fin: true}:
		return "(isfinite(__c) OR __c < " + epoch + ")"
	}
	panic(fmt.Sprintf("plan: no comparison with an infinity holds for %+v", k))
}

// epochOf is a finite literal of a time column's type.
func epochOf(typ string) string {
	if typ == "DATE" {
		return "DATE '1970-01-01'"
	}
	return typ + " '1970-01-01 00:00:00+00'"
}

// render is c with each infinite value's comparison in its finite form.
func (c *infiniteCandidate) render(ctx context.Context, conn *sql.Conn, signs []int) (sqltree.Node, error) {
	nodes := map[string]sqltree.Node{"__c": c.col}
	compare := func(op string, i int) string {
		v := fmt.Sprintf("__v%d", i)
		nodes[v] = c.values[i]
		if signs[i] == 0 {
			return fmt.Sprintf("(__c %s %s)", op, v)
		}
		var text string
		switch op {
		case "not distinct": // c = v, where NULL is false
			text = "coalesce(" + infinityKinds("=", signs[i]).sql(epochOf(c.typ)) + ", false)"
		case "distinct":
			text = "(NOT coalesce(" + infinityKinds("=", signs[i]).sql(epochOf(c.typ)) + ", false))"
		default:
			text = infinityKinds(op, signs[i]).sql(epochOf(c.typ))
		}
		if hasParameter(c.values[i]) {
			// TRY_CAST: whatever the argument, the statement uses it and the term is true.
			text = fmt.Sprintf("(%s AND TRY_CAST(%s AS %s) IS NOT DISTINCT FROM TRY_CAST(%s AS %s))", text, v, c.typ, v, c.typ)
		}
		return text
	}
	var text string
	switch c.kind {
	case "compare":
		text = compare(c.op, 0)
	case "between":
		text = "(" + compare(">=", 0) + " AND " + compare("<=", 1) + ")"
	case "in", "not in":
		var finite, terms []string
		for i := range c.values {
			if signs[i] == 0 {
				v := fmt.Sprintf("__v%d", i)
				nodes[v] = c.values[i]
				finite = append(finite, v)
			} else {
				terms = append(terms, compare("=", i))
			}
		}
		if len(finite) > 0 {
			terms = append([]string{"__c IN (" + strings.Join(finite, ", ") + ")"}, terms...)
		}
		text = "(" + strings.Join(terms, " OR ") + ")"
		if c.kind == "not in" {
			text = "(NOT " + text + ")"
		}
	}
	return expressionOf(ctx, conn, text, nodes)
}

// expressionOf parses the expression text and puts nodes in the place of
// the columns named by their keys.
func expressionOf(ctx context.Context, conn *sql.Conn, text string, nodes map[string]sqltree.Node) (sqltree.Node, error) {
	root, err := serialize(ctx, conn, "SELECT "+text)
	if err != nil {
		return nil, fmt.Errorf("finite form %s: %w", text, err)
	}
	sel, ok := root.Statements[0].Node.(*sqltree.SelectNode)
	if !ok || len(sel.SelectList) != 1 {
		return nil, fmt.Errorf("finite form %s: not one expression", text)
	}
	out, _, err := sqltree.Transform(sel.SelectList[0], func(n sqltree.Node, _ sqltree.Scope) (sqltree.Node, bool, error) {
		if c, ok := n.(*sqltree.ColumnRef); ok && len(c.Names) == 1 {
			if x, ok := nodes[c.Names[0]]; ok {
				return x, true, nil
			}
		}
		return n, false, nil
	})
	return out, err
}
