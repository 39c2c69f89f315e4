package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltree"
)

// systemRef is a statement's reference to a system table.
type systemRef struct{ n *sqltree.BaseTable }

// systemReferences points each system-table reference at the database's own
// catalog ("system" is also DuckDB's own system catalog) and, in an isolated
// handle, at only its table's rows.
func systemReferences(ctx context.Context, pl *planning) error {
	if len(pl.system) == 0 {
		return nil
	}
	if pl.e.view.isolated == "" {
		for _, r := range pl.system {
			r.n.CatalogName, r.n.SchemaName = pl.catalog, "system"
		}
		return nil
	}
	repl := map[*sqltree.BaseTable]sqltree.Node{}
	var names []string
	for _, t := range pl.e.visibleTables() {
		names = append(names, sqlString(t.cfg.ResolvedName()))
	}
	for _, r := range pl.system {
		name := strings.ToLower(r.n.TableName)
		q := fmt.Sprintf(`SELECT * FROM %s.system.%s WHERE "table" IN (%s)`, meterstore.QuoteIdent(pl.catalog), name, strings.Join(names, ", "))
		sub, err := subqueryOf(ctx, pl.conn, q)
		if err != nil {
			return err
		}
		alias := r.n.Alias
		if alias == "" {
			alias = name
		}
		repl[r.n] = sqltree.AsSubqueryRef(r.n, alias, sub)
	}
	return replaceTables(pl.root, repl)
}

// replaceTables puts repl[t] in the place of each base table t.
func replaceTables(root sqltree.Node, repl map[*sqltree.BaseTable]sqltree.Node) error {
	_, _, err := sqltree.Transform(root, func(n sqltree.Node, _ sqltree.Scope) (sqltree.Node, bool, error) {
		if t, ok := n.(*sqltree.BaseTable); ok {
			if r, ok := repl[t]; ok {
				return r, true, nil
			}
		}
		return n, false, nil
	})
	return err
}
