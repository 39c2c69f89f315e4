package engine

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"meterstore/internal/sqltree"
)

type boundExpr struct {
	op   string // ">=", ">", "<", "<=", "="
	expr sqltree.Node
}

type eqExpr struct {
	column string
	expr   sqltree.Node
}

// extractBounds attaches the WHERE conjuncts of each SELECT to the references
// it reads directly and evaluates them. Conservative by construction
// (invariant 10): only top-level AND conjuncts are considered, OR contributes
// nothing, a column qualified by another alias is not a bound on this
// reference, and a value DuckDB cannot compute bounds nothing.
func extractBounds(ctx context.Context, pl *planning) error {
	for _, lv := range pl.levels {
		for _, c := range conjuncts(lv.sel.Where) {
			lv.attach(c)
		}
	}
	return evaluate(ctx, pl.conn, pl.refs, pl.args)
}

func conjuncts(n sqltree.Node) []sqltree.Node {
	if n == nil {
		return nil
	}
	if c, ok := n.(*sqltree.Conjunction); ok && c.Op == "CONJUNCTION_AND" {
		var out []sqltree.Node
		for _, x := range c.Children {
			out = append(out, conjuncts(x)...)
		}
		return out
	}
	return []sqltree.Node{n}
}

var flip = map[string]string{">=": "<=", ">": "<", "<": ">", "<=": ">=", "=": "="}

var comparisonOps = map[string]string{
	"COMPARE_EQUAL":                "=",
	"COMPARE_GREATERTHAN":          ">",
	"COMPARE_GREATERTHANOREQUALTO": ">=",
	"COMPARE_LESSTHAN":             "<",
	"COMPARE_LESSTHANOREQUALTO":    "<=",
}

func (lv level) attach(c sqltree.Node) {
	switch x := c.(type) {
	case *sqltree.Comparison:
		op, ok := comparisonOps[x.Op]
		if !ok {
			return
		}
		if col, ok := x.Left.(*sqltree.ColumnRef); ok && foldable(x.Right) {
			lv.bind(col, op, x.Right)
		} else if col, ok := x.Right.(*sqltree.ColumnRef); ok && foldable(x.Left) {
			lv.bind(col, flip[op], x.Left)
		}
	case *sqltree.Between:
		col, ok := x.Input.(*sqltree.ColumnRef)
		if !ok || !foldable(x.Lower) || !foldable(x.Upper) {
			return
		}
		lv.bind(col, ">=", x.Lower)
		lv.bind(col, "<=", x.Upper)
	}
}

// bind attaches a comparison on col to the reference col names.
func (lv level) bind(col *sqltree.ColumnRef, op string, expr sqltree.Node) {
	qual, column, ok := columnRef(col)
	if !ok {
		return
	}
	var target *reference
	if qual == "" {
		if lv.total != 1 || len(lv.mine) != 1 {
			return // unqualified in a join: which side it names is the binder's call, not ours
		}
		target = lv.mine[0]
	} else {
		target = named(lv.mine, qual)
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
func foldable(n sqltree.Node) bool {
	switch x := n.(type) {
	case *sqltree.Constant:
		return !x.IsNull()
	case *sqltree.Parameter:
		return true
	case *sqltree.Cast:
		return foldable(x.Child)
	}
	return false
}

// stringLike accepts only a VARCHAR literal or a parameter for an equality that
// will be pushed into both tiers: a number compared with a text column is cast by
// DuckDB's rules, which the pushed-down form need not share.
func stringLike(n sqltree.Node) bool {
	switch x := n.(type) {
	case *sqltree.Parameter:
		return true
	case *sqltree.Constant:
		return x.TypeID() == "VARCHAR"
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
	var exprs []*sqltree.Cast
	for _, r := range refs {
		for i := range r.bounds {
			slots = append(slots, slot{ref: r, b: &r.bounds[i]})
			exprs = append(exprs, sqltree.NewCast(r.bounds[i].expr, "TIMESTAMP WITH TIME ZONE", true))
		}
		for i := range r.eqs {
			slots = append(slots, slot{ref: r, e: &r.eqs[i]})
			exprs = append(exprs, sqltree.NewCast(r.eqs[i].expr, "VARCHAR", true))
		}
	}
	if len(exprs) == 0 {
		return nil
	}
	for i, e := range exprs {
		sub, ok, err := bindParams(e, args)
		if err != nil {
			return err
		}
		if !ok {
			sub = sqltree.NewCast(sqltree.NewNull(), "VARCHAR", true) // unknown parameter: no bound
		}
		exprs[i] = sub
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

// bindParams returns a copy of c with every positional parameter replaced by
// the statement's argument as a literal. Only text and time arguments are
// understood; anything else reports false and the bound is dropped.
func bindParams(c *sqltree.Cast, args []any) (*sqltree.Cast, bool, error) {
	cp, err := sqltree.Clone(c)
	if err != nil {
		return nil, false, err
	}
	known := true
	out, _, err := sqltree.Transform(cp, func(n sqltree.Node, _ sqltree.Scope) (sqltree.Node, bool, error) {
		p, ok := n.(*sqltree.Parameter)
		if !ok {
			return n, false, nil
		}
		lit, ok := argLiteral(p, args)
		if !ok {
			known = false
			return n, false, nil
		}
		return lit, true, nil
	})
	if err != nil || !known {
		return nil, false, err
	}
	return out.(*sqltree.Cast), true, nil
}

// argLiteral is the argument a parameter stands for, as a literal.
func argLiteral(p *sqltree.Parameter, args []any) (sqltree.Node, bool) {
	var idx int
	if _, err := fmt.Sscanf(p.Identifier, "%d", &idx); err != nil || idx < 1 || idx > len(args) {
		return nil, false
	}
	instant := func(t time.Time) sqltree.Node {
		return sqltree.NewCast(sqltree.NewString(t.UTC().Format("2006-01-02 15:04:05.999999Z07:00")), "TIMESTAMP WITH TIME ZONE", true)
	}
	switch v := args[idx-1].(type) {
	case string:
		return sqltree.NewString(v), true
	case time.Time:
		return instant(v), true
	case *time.Time:
		if v != nil {
			return instant(*v), true
		}
	}
	return nil, false
}

// evalExprs runs SELECT <e1>, <e2>, … through DuckDB.
func evalExprs(ctx context.Context, conn *sql.Conn, exprs []*sqltree.Cast) ([]any, error) {
	tmpl, err := serialize(ctx, conn, "SELECT 1")
	if err != nil {
		return nil, err
	}
	sel := tmpl.Statements[0].Node.(*sqltree.SelectNode)
	sel.SelectList = make([]sqltree.Node, len(exprs))
	for i, e := range exprs {
		e.Alias = fmt.Sprintf("b%d", i)
		sel.SelectList[i] = e
	}
	q, err := deserialize(ctx, conn, tmpl)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(exprs))
	ptrs := make([]any, len(exprs))
	for i := range out {
		ptrs[i] = &out[i]
	}
	if err := conn.QueryRowContext(ctx, q).Scan(ptrs...); err != nil {
		return nil, err
	}
	return out, nil
}
