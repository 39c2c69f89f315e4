package plan

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/meterstore/meterstore/internal/duckstream"
	"github.com/meterstore/meterstore/internal/sqltree"
	"github.com/meterstore/meterstore/metering"
)

type boundExpr struct {
	op   string // ">=", ">", "<", "<=", "="
	expr sqltree.Node
	src  sqltree.Node // the WHERE conjunct it came from
	// at is expr's value, where evaluate applied the bound (known).
	at    time.Time
	known bool
}

type eqExpr struct {
	column string
	expr   sqltree.Node
	src    sqltree.Node // the WHERE conjunct it came from
	// value is expr's value, where evaluate applied the equality (known).
	value string
	known bool
}

// extractBounds attaches the WHERE conjuncts of each SELECT to the references
// it reads directly and evaluates them. Conservative by construction
// (invariant 10): only top-level AND conjuncts are considered, OR contributes
// nothing, a column qualified by another alias is not a bound on this
// reference, a value DuckDB cannot compute bounds nothing, and a relation
// the WHERE filters only after it is sampled or searched by an ASOF join is
// bounded by nothing (narrowable).
func extractBounds(ctx context.Context, pl *planning) error {
	for _, lv := range pl.levels {
		for _, c := range conjuncts(lv.sel.Where) {
			lv.attach(c)
		}
	}
	dropSharedDayParameters(pl.root, pl.refs)
	if err := evaluate(ctx, pl.conn, pl.refs, pl.in.Args); err != nil {
		return err
	}
	return integerIdentifiers(pl)
}

// dropSharedDayParameters keeps a bare parameter as a day bound only where
// the statement uses it nowhere but in comparisons with balancing_day. DuckDB
// gives a parameter one type per statement, from the places it is used: there
// it is a DATE (a string or time.Time argument becomes a day, as evaluate's
// cast to DATE makes it), but used elsewhere too it may become a TIMESTAMP WITH
// TIME ZONE, and a timestamp compared with balancing_day is no day bound
// (dateLike).
func dropSharedDayParameters(root sqltree.Node, refs []*reference) {
	inDays := map[*sqltree.Parameter]bool{}
	for _, r := range refs {
		for _, d := range r.days {
			if p, ok := d.expr.(*sqltree.Parameter); ok {
				inDays[p] = true
			}
		}
	}
	if len(inDays) == 0 {
		return
	}
	shared := map[string]bool{}
	sqltree.Inspect(root, func(n sqltree.Node, _ sqltree.Scope) bool {
		if p, ok := n.(*sqltree.Parameter); ok && !inDays[p] {
			shared[p.Identifier] = true
		}
		return true
	})
	for _, r := range refs {
		kept := r.days[:0]
		for _, d := range r.days {
			if p, ok := d.expr.(*sqltree.Parameter); !ok || !shared[p.Identifier] {
				kept = append(kept, d)
			}
		}
		r.days = kept
	}
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
			lv.bind(c, col, op, x.Right)
		} else if col, ok := x.Right.(*sqltree.ColumnRef); ok && foldable(x.Left) {
			lv.bind(c, col, flip[op], x.Left)
		}
	case *sqltree.Between:
		col, ok := x.Input.(*sqltree.ColumnRef)
		if !ok || !foldable(x.Lower) || !foldable(x.Upper) {
			return
		}
		lv.bind(c, col, ">=", x.Lower)
		lv.bind(c, col, "<=", x.Upper)
	}
}

// bind attaches a comparison on col, from conjunct src, to the reference
// col names.
func (lv level) bind(src sqltree.Node, col *sqltree.ColumnRef, op string, expr sqltree.Node) {
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
	if target == nil || !target.owns(column) || !lv.narrowable(target) {
		return
	}
	if column == "from" {
		target.bounds = append(target.bounds, boundExpr{op: op, expr: expr, src: src})
		return
	}
	if column == balancingDayColumn {
		if dateLike(expr) {
			target.days = append(target.days, boundExpr{op: op, expr: expr})
		}
		return
	}
	if op == "=" && target.rel.table.Config.IsMergeKeyColumn(column) && stringLike(expr) {
		target.eqs = append(target.eqs, eqExpr{column: column, expr: expr, src: src})
	}
}

// narrowable: the relation in ref's place may hold only the rows the
// WHERE keeps — DuckDB applies the WHERE to ref's rows themselves, after
// the FROM. Not so where the FROM uses the other rows first:
//   - a sample (TABLESAMPLE on ref, USING SAMPLE on its SELECT) is drawn
//     before the WHERE, so a sample of k rows holds the k rows of a narrow
//     range only by chance; narrowed, the sample would be all of them;
//   - an ASOF join matches each row of its left side with the nearest row
//     of its right side, and a bound on that row drops the match after
//     the join; narrowed, the join would find a nearer row inside the
//     range and keep what the statement drops.
func (lv level) narrowable(ref *reference) bool {
	return emptyField(lv.sel.Rest["sample"]) && emptyField(ref.n.Rest["sample"]) && !asofSearched(lv.sel.From, ref.n)
}

// asofSearched: t is read on the right side of an ASOF join in from.
func asofSearched(from sqltree.Node, t *sqltree.BaseTable) bool {
	j, ok := from.(*sqltree.Join)
	if !ok {
		return false
	}
	if j.Rest["ref_type"] == "ASOF" {
		if right, _ := directTables(j.Right); slices.Contains(right, t) {
			return true
		}
	}
	return asofSearched(j.Left, t) || asofSearched(j.Right, t)
}

// foldable: a constant, a parameter, a cast of one, or a built-in scalar
// function or operator over them that DuckDB declares CONSISTENT
// (to_timestamp($1), $1 + INTERVAL '1 day', date_trunc('month', …), AT TIME
// ZONE) — something DuckDB can evaluate before the statement runs and that
// means the same then as in the statement, since evaluate computes it on the
// statement's own connection with its arguments. A function whose value
// depends on the moment or on chance (now(), current_date, random()) is not
// CONSISTENT and bounds nothing.
func foldable(n sqltree.Node) bool {
	switch x := n.(type) {
	case *sqltree.Constant:
		return !x.IsNull()
	case *sqltree.Parameter:
		return true
	case *sqltree.Cast:
		return foldable(x.Child)
	case *sqltree.Function:
		if x.Schema != "" && !strings.EqualFold(x.Schema, "main") || x.Catalog != "" || x.Distinct ||
			x.Rest["filter"] != nil || !consistentFunctions().has(x.Name) {
			return false
		}
		for _, c := range x.Children {
			if !foldable(c) {
				return false
			}
		}
		return true
	}
	return false
}

// functionSet is a set of DuckDB function names, lower-case.
type functionSet map[string]bool

func (s functionSet) has(name string) bool { return s[strings.ToLower(name)] }

// consistentFunctions are the built-in scalar functions and operators DuckDB
// marks CONSISTENT — the same result for the same arguments, whenever and
// wherever they run. A name that also has a volatile overload is left out.
// Read once from a fresh in-memory database: the built-ins of this release.
var consistentFunctions = sync.OnceValue(func() functionSet {
	set := functionSet{}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return set
	}
	defer func() {
		db.Close()
		// DuckDB's close turned its allocator's background threads off
		// for the whole process: on again where they were on.
		_, _ = duckstream.KeepReturningFreedMemory()
	}()
	rows, err := db.Query(`SELECT lower(function_name) FROM duckdb_functions()
		WHERE internal AND function_type = 'scalar' AND schema_name IN ('main', 'pg_catalog')
		GROUP BY 1 HAVING bool_and(stability = 'CONSISTENT')`)
	if err != nil {
		return set
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if rows.Scan(&name) == nil {
			set[name] = true
		}
	}
	return set
})

// dateLike accepts only a value compared with a DATE column as a date: a
// VARCHAR literal (DuckDB casts it to DATE), a DATE-typed cast or literal, or a
// parameter (DuckDB types it DATE from the comparison, unless the statement
// uses it elsewhere: dropSharedDayParameters). A TIMESTAMP compared with
// balancing_day is compared as a timestamp (balancing_day < TIMESTAMP '…
// 12:00' holds for that day), which the day bounds below would not cover.
func dateLike(n sqltree.Node) bool {
	switch x := n.(type) {
	case *sqltree.Constant:
		return x.TypeID() == "VARCHAR" || x.TypeID() == "DATE"
	case *sqltree.Cast:
		return x.TypeID() == "DATE" && foldable(x.Child)
	case *sqltree.Parameter:
		return true
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
// the statement's own connection (its session time zone) and with the
// statement's own arguments bound to the same parameters, so a literal, a cast
// or a parameter means exactly what it means in the statement: DuckDB's rules
// for casts, zones and binding a Go value decide, not a copy of them. A value
// that computes to NULL drops the bound: the range only ever widens
// (invariant 10). A literal or argument DuckDB refuses (a timestamp it cannot
// cast) is the statement's own error, returned as DuckDB words it — the
// statement fails on it as soon as it meets a row, so neither a plan nor an
// empty result may hide it.
func evaluate(ctx context.Context, conn *sql.Conn, refs []*reference, args []any) error {
	type slot struct {
		ref *reference
		b   *boundExpr
		day *boundExpr
		e   *eqExpr
	}
	var slots []slot
	var exprs []*sqltree.Cast
	for _, r := range refs {
		for i := range r.bounds {
			slots = append(slots, slot{ref: r, b: &r.bounds[i]}, slot{ref: r})
			// A plain cast, as DuckDB casts the other side of a comparison with "from",
			// and the value's own type, which says whether DuckDB does (comparedAsCast).
			exprs = append(exprs, sqltree.NewCast(r.bounds[i].expr, "TIMESTAMP WITH TIME ZONE", false),
				sqltree.NewCast(sqltree.NewFunction("typeof", r.bounds[i].expr), "VARCHAR", false))
		}
		for i := range r.days {
			slots = append(slots, slot{ref: r, day: &r.days[i]})
			exprs = append(exprs, sqltree.NewCast(r.days[i].expr, "DATE", true))
		}
		for i := range r.eqs {
			slots = append(slots, slot{ref: r, e: &r.eqs[i]})
			exprs = append(exprs, sqltree.NewCast(r.eqs[i].expr, "VARCHAR", true))
		}
	}
	if len(exprs) == 0 {
		return nil
	}
	values, err := evalExprs(ctx, conn, exprs, args)
	if err != nil {
		return boundError{err}
	}
	for i, s := range slots {
		switch {
		case s.b != nil:
			t, ok := values[i].(time.Time)
			typ, _ := values[i+1].(string)
			if !ok || infinite(t, timestampInfinity) || !representable(t) ||
				!comparedAsCast(typ) && !isParameter(s.b.expr) {
				continue
			}
			applyBound(&s.ref.rng, s.b.op, t.UTC())
			s.b.at, s.b.known = t.UTC(), true
		case s.day != nil:
			d, ok := values[i].(time.Time)
			if !ok || infinite(d, dateInfinity) || !representable(d) {
				continue
			}
			applyDayBound(&s.ref.rng, s.day.op, metering.DateOf(d.UTC()))
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
			s.e.value, s.e.known = v, true
		}
	}
	return nil
}

// DuckDB keeps ±infinity as the extreme values of its types — a TIMESTAMPTZ
// as ±MaxInt64 microseconds, a DATE as ±MaxInt32 days — which duckdb-go
// hands over as the instants those counts name (the year -290308 for
// TIMESTAMPTZ '-infinity'): no literal spells them back, so such a bound
// would fail the statement it came from.
const (
	timestampInfinity = math.MaxInt64 // microseconds
	dateInfinity      = math.MaxInt32 // days
)

// infinite reports whether t, computed by DuckDB, is one of its infinities
// (top: timestampInfinity or dateInfinity). An infinite value bounds nothing:
// "from" >= '-infinity' holds for every row, and dropping a bound only widens
// the range (invariant 10).
func infinite(t time.Time, top int64) bool {
	n := t.UnixMicro()
	if top == dateInfinity {
		n = t.Unix() / 86400
	}
	return n == top || n == -top
}

// representable: t lies in the years every tier and path spells and
// compares as a timestamp (0001–9999). A bound beyond them bounds no stored
// row, and applied it would be rendered into scans as a literal PostgreSQL
// or DuckDB refuses (balancing_day < DATE '300000-01-01').
func representable(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 1 && y <= 9999
}

// comparedAsCast: DuckDB compares "from" with a value of type typ as with
// its cast to TIMESTAMP WITH TIME ZONE, which evaluate computes. Not so for
// the other precisions: "from" = TIMESTAMP_NS '… 02:30:00.000000001' holds
// for no row, while its cast, 02:30:00, bounds the range to that instant
// (and the bound would be dropped as implied); TIMESTAMP_S and TIMESTAMP_MS
// DuckDB refuses to compare at all.
func comparedAsCast(typ string) bool {
	switch typ {
	case "TIMESTAMP WITH TIME ZONE", "TIMESTAMP", "DATE", "VARCHAR":
		return true
	}
	return false
}

func isParameter(n sqltree.Node) bool {
	_, ok := n.(*sqltree.Parameter)
	return ok
}

// boundError is DuckDB's refusal of a bound, without the pointer DuckDB adds
// into the evaluating SELECT, which is not the statement the user wrote.
type boundError struct{ err error }

func (e boundError) Error() string {
	msg, _, _ := strings.Cut(e.err.Error(), "\n\nLINE ")
	return msg
}

func (e boundError) Unwrap() error { return e.err }

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

// balancingDayColumn is the stored balancing day, a core column of every
// table: metering.BalancingDay of the row's "from" and sparte (the encoder
// derives it, never the caller).
const balancingDayColumn = "balancing_day"

// applyDayBound narrows r by a comparison on the balancing day: the "from" of
// a row of balancing day d lies in d's bounds for its Sparte, so the union of
// those bounds over every Sparte (00:00 local to 06:00 local the next day)
// is a superset of the rows, whatever their Sparte.
func applyDayBound(r *timeRange, op string, d metering.Date) {
	switch op {
	case ">=":
		r.raiseLo(dayRange(d).lo)
	case ">":
		r.raiseLo(dayRange(d.AddDays(1)).lo)
	case "<=":
		r.lowerHi(dayRange(d).hi)
	case "<":
		r.lowerHi(dayRange(d.AddDays(-1)).hi)
	case "=":
		b := dayRange(d)
		r.raiseLo(b.lo)
		r.lowerHi(b.hi)
	}
}

// dayRange is the span of "from" that balancing day d covers in any Sparte.
func dayRange(d metering.Date) struct{ lo, hi time.Time } {
	var out struct{ lo, hi time.Time }
	for i, s := range metering.Sparten() {
		from, to := metering.DayBounds(d, s)
		if i == 0 || from.Before(out.lo) {
			out.lo = from
		}
		if i == 0 || to.After(out.hi) {
			out.hi = to
		}
	}
	return out
}

// argumentIDs names the parameter each argument binds: $n by position, $name
// for a sql.NamedArg — as database/sql hands them to DuckDB.
func argumentIDs(args []any) []string {
	ids := make([]string, len(args))
	for i, a := range args {
		if na, ok := a.(sql.NamedArg); ok {
			ids[i] = na.Name
		} else {
			ids[i] = strconv.Itoa(i + 1)
		}
	}
	return ids
}

// supplied reports whether every parameter below n is among ids, adding them
// to used.
func supplied(n sqltree.Node, ids map[string]bool, used map[string]bool) bool {
	ok := true
	sqltree.Inspect(n, func(n sqltree.Node, _ sqltree.Scope) bool {
		if p, is := n.(*sqltree.Parameter); is {
			ok = ok && ids[p.Identifier]
			used[p.Identifier] = true
		}
		return ok
	})
	return ok
}

// evalExprs runs SELECT <e1>, <e2>, … through DuckDB on conn with args bound
// as the statement binds them: DuckDB wants a value for every argument, so a
// parameter no expression uses is selected too. An expression using a
// parameter no argument supplies is NULL.
func evalExprs(ctx context.Context, conn *sql.Conn, exprs []*sqltree.Cast, args []any) ([]any, error) {
	ids := argumentIDs(args)
	have := map[string]bool{}
	for _, id := range ids {
		have[id] = true
	}
	used := map[string]bool{}
	list := make([]sqltree.Node, 0, len(exprs)+len(ids))
	for i, e := range exprs {
		if !supplied(e, have, used) {
			e = sqltree.NewCast(sqltree.NewNull(), "VARCHAR", true)
		}
		e.Alias = fmt.Sprintf("b%d", i)
		list = append(list, e)
	}
	for _, id := range ids {
		if !used[id] {
			list = append(list, sqltree.NewParameter(id))
		}
	}
	tmpl, err := serialize(ctx, conn, "SELECT 1")
	if err != nil {
		return nil, err
	}
	tmpl.Statements[0].Node.(*sqltree.SelectNode).SelectList = list
	q, err := deserialize(ctx, conn, tmpl)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(list))
	ptrs := make([]any, len(list))
	for i := range out {
		ptrs[i] = &out[i]
	}
	// Through duckstream, which binds a time.Time to a DATE parameter as the
	// statement's run does: the bounds are the statement's own.
	db, err := duckstream.Open(conn, duckstream.DriverDecimals, nil)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, q, args...).Scan(ptrs...); err != nil {
		return nil, err
	}
	return out[:len(exprs)], nil
}
