package engine

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltree"
)

// ErrSystemScope is a system table a scoped session cannot read: its rows
// count or describe every tenant's data and cannot be split by the scope.
var ErrSystemScope = fmt.Errorf("%w: system table not split by the session's scope", ErrNotAQuery)

// systemRef is a statement's reference to a system table.
type systemRef struct{ n *sqltree.BaseTable }

// systemReferences points each system-table reference at the database's own
// catalog ("system" is also DuckDB's own system catalog) and, in a confined
// handle, at only its tables' rows — in a scoped one, at its scope's rows —
// or refuses a table that cannot be narrowed.
func systemReferences(ctx context.Context, pl *planning) error {
	if len(pl.system) == 0 {
		return nil
	}
	if pl.e.view.isolated == "" && len(pl.e.view.scope) == 0 {
		for _, r := range pl.system {
			r.n.CatalogName, r.n.SchemaName = pl.catalog, "system"
		}
		return nil
	}
	repl := map[*sqltree.BaseTable]sqltree.Node{}
	for _, r := range pl.system {
		name := strings.ToLower(r.n.TableName)
		where, err := pl.e.systemFilter(name)
		if err != nil {
			return err
		}
		q := fmt.Sprintf(`SELECT * FROM %s.system.%s WHERE %s`, meterstore.QuoteIdent(pl.catalog), name, where)
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

// systemFilter is the condition on system.name's rows a confined handle sees:
// its tables' rows, and in a scoped handle the scope's partitions. The rest of
// system.* describes a table as a whole (its configuration, resolution and
// commits) and is shown whole; system.tables counts rows of every tenant and
// is refused.
func (e *Engine) systemFilter(name string) (string, error) {
	var names []string
	for _, t := range e.visibleTables() {
		names = append(names, sqlString(t.cfg.ResolvedName()))
	}
	where := fmt.Sprintf(`("table" IN (%s))`, strings.Join(names, ", "))
	if len(e.view.scope) == 0 {
		return where, nil
	}
	switch name {
	case "tables":
		return "", fmt.Errorf("%w: system.tables counts rows of every tenant (invariant_violations, detached_partitions), and this session is scoped to %s; its answers carry the watermark they were read at (EXPLAIN shows it)",
			ErrSystemScope, strings.Join(e.Scope(), ", "))
	case "partitions":
		segs, err := e.scopeSegments()
		if err != nil {
			return "", err
		}
		for _, s := range segs {
			where += fmt.Sprintf(` AND list_contains(string_split("partition", '/'), %s)`, sqlString(s))
		}
	}
	return where, nil
}

// scopeSegments are the partition-path segments (column=value) that name the
// scope, checked against every partition of the handle's tables: a table
// whose partitions are not split by every scoped column cannot be shown per
// tenant, and is refused.
func (e *Engine) scopeSegments() ([]string, error) {
	var cols, segs []string
	for c := range e.view.scope {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	for _, c := range cols {
		segs = append(segs, url.QueryEscape(c)+"="+url.QueryEscape(e.view.scope[c]))
	}
	visible := map[string]bool{}
	for _, t := range e.visibleTables() {
		visible[t.cfg.ResolvedName()] = true
	}
	e.shared.sysMu.Lock()
	rows := e.shared.lastSystem["partitions"]
	e.shared.sysMu.Unlock()
	for _, r := range rows {
		table, _ := r[0].(string)
		part, _ := r[1].(string)
		if !visible[table] {
			continue
		}
		for _, c := range cols {
			if !hasSegment(part, url.QueryEscape(c)+"=") {
				return nil, fmt.Errorf("%w: system.partitions of %s: partition %q is not split by %s, so it holds rows of every %s value; this session is scoped to %s",
					ErrSystemScope, table, part, c, c, strings.Join(e.Scope(), ", "))
			}
		}
	}
	return segs, nil
}

// hasSegment is whether the partition path has a segment starting with prefix.
func hasSegment(path, prefix string) bool {
	for _, s := range strings.Split(path, "/") {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
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
