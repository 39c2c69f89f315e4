package plan

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/meterstore/meterstore/internal/sqltree"
)

// ErrIntegerForText is an integer argument compared with a text identifier
// whose values it cannot name exactly (IntegerForTextError).
var ErrIntegerForText = errors.New("an integer argument compared with a text identifier")

// maloColumn holds Marktlokations-IDs as the store writes them: 11 digits,
// the first 1–9 (RowValidator refuses any other spelling), so an integer's
// decimal text names exactly the rows whose malo_id equals it as a number.
const maloColumn = "malo_id"

// IntegerForTextError refuses an integer argument for a parameter the
// statement compares with a text identifier column other than malo_id: the
// integer's text form drops the leading zeros (and signs, spaces) a value
// of that column may be spelt with, so which rows it names is a guess.
// PostgreSQL refuses text = bigint outright.
type IntegerForTextError struct {
	Param  string // as the statement names it: "1" for $1, "meter" for $meter
	Column string
	Value  any
}

func (e *IntegerForTextError) Error() string {
	return fmt.Sprintf("parameter $%s is compared with the text column %s and was sent as an integer (%v): its digits "+
		"lose the leading zeros a value of %s may be written with, so it cannot name those values exactly; "+
		"send the parameter as text (a string argument, JDBC setString, or $%s::text in the statement)",
		e.Param, e.Column, e.Value, e.Column, e.Param)
}

// Is makes the error ErrIntegerForText.
func (e *IntegerForTextError) Is(target error) bool { return target == ErrIntegerForText }

// integerIdentifiers binds an integer argument the statement compares only
// in equalities with malo_id (merge-key equalities, extractBounds) as its
// decimal text. DuckDB types such a parameter VARCHAR from the comparison,
// but given an integer it binds the statement again with the column cast to
// BIGINT — a filter no Parquet statistics or pushed-down equality can serve —
// while the scans below were already narrowed by the same value's text
// (evaluate). As text the comparison stays on the column. An integer
// compared in such an equality with another text column is refused
// (IntegerForTextError); one the statement also uses elsewhere is left as
// it is, typed by those uses too.
func integerIdentifiers(pl *planning) error {
	columns := map[string][]string{} // parameter identifier → the columns of its equalities
	for _, r := range pl.refs {
		for _, e := range r.eqs {
			if p, ok := e.expr.(*sqltree.Parameter); ok {
				columns[p.Identifier] = append(columns[p.Identifier], e.column)
			}
		}
	}
	if len(columns) == 0 || len(pl.in.Args) == 0 {
		return nil
	}
	uses := parameterUses(pl.root)
	names := parameterNames(pl.root.Statements[0])
	var args []any
	for id, cols := range columns {
		i, ok := argumentIndex(id, names, len(pl.in.Args))
		if !ok || uses[id] != len(cols) {
			continue
		}
		text, ok := integerText(pl.in.Args[i])
		if !ok {
			continue
		}
		for _, c := range cols {
			if c != maloColumn {
				return &IntegerForTextError{Param: id, Column: c, Value: pl.in.Args[i]}
			}
		}
		if args == nil {
			args = append([]any(nil), pl.in.Args...)
		}
		args[i] = text
	}
	if args != nil {
		pl.in.Args = args
	}
	return nil
}

// parameterUses counts each parameter's occurrences in the statement.
func parameterUses(root sqltree.Node) map[string]int {
	uses := map[string]int{}
	sqltree.Inspect(root, func(n sqltree.Node, _ sqltree.Scope) bool {
		if p, ok := n.(*sqltree.Parameter); ok {
			uses[p.Identifier]++
		}
		return true
	})
	return uses
}

// argumentIndex is the index of the argument bound to the parameter id
// among n: $k's is k−1, a named parameter's its place in names (the order
// Input.Bind binds them in); false where there is none.
func argumentIndex(id string, names []string, n int) (int, bool) {
	if k, err := strconv.Atoi(id); err == nil {
		return k - 1, k >= 1 && k <= n
	}
	for i, name := range names {
		if name == id {
			return i, i < n
		}
	}
	return 0, false
}

// integerText is v's decimal text if v is a Go integer (a sql.NamedArg is
// not: it binds by its name).
func integerText(v any) (string, bool) {
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return strconv.FormatInt(rv.Int(), 10), true
	case rv.CanUint() && rv.Kind() != reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10), true
	}
	return "", false
}
