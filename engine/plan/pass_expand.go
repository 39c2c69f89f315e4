package plan

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/meterstore/meterstore/internal/sqltree"
	"github.com/meterstore/meterstore/metering"
)

// expandTableFunctions replaces every meter_completeness(…) reference with
// its statement over the resolved relation (completenessSQL), which the later
// passes then plan like any other reference.
func expandTableFunctions(ctx context.Context, pl *planning) error {
	_, _, err := sqltree.Transform(pl.root, func(n sqltree.Node, _ sqltree.Scope) (sqltree.Node, bool, error) {
		t, ok := n.(*sqltree.TableFunction)
		if !ok {
			return n, false, nil
		}
		fn, _ := t.Function.(*sqltree.Function)
		if fn == nil || !strings.EqualFold(fn.Name, completenessFunction) {
			return n, false, nil
		}
		out, err := pl.expandCompleteness(ctx, t, fn)
		return out, err == nil, err
	})
	return err
}

func (pl *planning) expandCompleteness(ctx context.Context, t *sqltree.TableFunction, fn *sqltree.Function) (sqltree.Node, error) {
	if len(fn.Children) < 2 || len(fn.Children) > 3 {
		return nil, fmt.Errorf("%s(from, to [, table]) takes two or three arguments, got %d", completenessFunction, len(fn.Children))
	}
	var exprs []*sqltree.Cast
	for i, c := range fn.Children {
		typ := "DATE"
		if i == 2 {
			typ = "VARCHAR"
		}
		if !foldable(c) {
			return nil, fmt.Errorf("%s: argument %d must be a constant or a parameter", completenessFunction, i+1)
		}
		exprs = append(exprs, sqltree.NewCast(c, typ, true))
	}
	vals, err := evalExprs(ctx, pl.conn, exprs, pl.in.Args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", completenessFunction, err)
	}
	from, ok1 := vals[0].(time.Time)
	to, ok2 := vals[1].(time.Time)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%s: from and to must be dates (YYYY-MM-DD; bind a string, a time.Time or a metering.Date's String())", completenessFunction)
	}
	var tableName []string
	if len(vals) == 3 {
		s, _ := vals[2].(string)
		tableName = append(tableName, s)
	}
	tbl, err := CompletenessTable(pl.in.Tables, tableName...)
	if err != nil {
		return nil, err
	}
	fd, td := metering.DateOf(from), metering.DateOf(to)
	if td.Compare(fd) < 0 {
		return nil, fmt.Errorf("%s: to (%s) is before from (%s)", completenessFunction, td, fd)
	}
	sub, err := subqueryOf(ctx, pl.conn, completenessSQL(tbl.Config, fd, td))
	if err != nil {
		return nil, err
	}
	alias := t.Alias
	if alias == "" {
		alias = completenessFunction
	}
	return sqltree.AsSubqueryRef(t, alias, sub), nil
}
