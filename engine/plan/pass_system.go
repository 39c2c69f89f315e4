package plan

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltext"
	"github.com/meterstore/meterstore/internal/sqltree"
)

// ErrSystemScope is a system table a scoped session cannot read: its rows
// count or describe every tenant's data and cannot be split by the scope.
var ErrSystemScope = fmt.Errorf("%w: system table not split by the session's scope", ErrNotAQuery)

// SystemTables are the system tables (name → columns): snapshots of state in the DuckDB schema "system",
// recomputed only by RefreshSystemTables: a query never silently pays for a
// round trip to both tiers.
//
//	system.tables      table, physical_table, watermark, watermark_lag_seconds, snapshot_id,
//	                   invariant_violations, detached_partitions, healthy, quarantine, refreshed_at
//	                   (quarantine: each narrowing schema change that halts archival, NULL when none)
//	system.config      table, setting, value — the settings that interact
//	system.resolution  table, setting, value — setting = 'resolution_sql' is ResolutionSQL() exactly
//	system.snapshots   table, snapshot_id, committed_at, watermark (NULL where a snapshot carries none), operation
//	system.partitions  table, partition, month, files, rows, bytes, closed, compacted, last_compaction,
//	                   newest_uncompacted — the cold tier's partitions and what compaction made of them
//
// "system" is also the name of DuckDB's own system catalog, so the schema lives
// in the database's catalog and the planner qualifies references to it.
var SystemTables = map[string]string{
	"tables": `"table" VARCHAR, physical_table VARCHAR, watermark TIMESTAMPTZ, watermark_lag_seconds BIGINT,
		snapshot_id BIGINT, invariant_violations BIGINT, detached_partitions INTEGER, healthy BOOLEAN, quarantine VARCHAR, refreshed_at TIMESTAMPTZ`,
	"config":     `"table" VARCHAR, setting VARCHAR, value VARCHAR`,
	"resolution": `"table" VARCHAR, setting VARCHAR, value VARCHAR`,
	"snapshots":  `"table" VARCHAR, snapshot_id BIGINT, committed_at TIMESTAMPTZ, watermark TIMESTAMPTZ, operation VARCHAR`,
	"partitions": `"table" VARCHAR, "partition" VARCHAR, month DATE, files INTEGER, "rows" BIGINT, bytes BIGINT, closed BOOLEAN,
		compacted BOOLEAN, last_compaction TIMESTAMPTZ, newest_uncompacted TIMESTAMPTZ`,
}

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
	if !pl.in.View.Isolated && len(pl.in.View.Scope) == 0 {
		for _, r := range pl.system {
			r.n.CatalogName, r.n.SchemaName = pl.in.Catalog, "system"
		}
		return nil
	}
	repl := map[*sqltree.BaseTable]sqltree.Node{}
	for _, r := range pl.system {
		name := strings.ToLower(r.n.TableName)
		where, err := pl.systemFilter(name)
		if err != nil {
			return err
		}
		q := fmt.Sprintf(`SELECT * FROM %s.system.%s WHERE %s`, meterstore.QuoteIdent(pl.in.Catalog), name, where)
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
// system.* describes a table as a whole (its configuration and resolution) and
// is shown whole; system.tables (rows of every tenant counted) and
// system.snapshots (every tenant's commits) cannot be split by the scope and
// are refused.
func (pl *planning) systemFilter(name string) (string, error) {
	var names []string
	for _, t := range pl.in.Tables {
		names = append(names, sqltext.String(t.Config.ResolvedName()))
	}
	where := fmt.Sprintf(`("table" IN (%s))`, strings.Join(names, ", "))
	scope := pl.in.View.Scope
	if len(scope) == 0 {
		return where, nil
	}
	switch name {
	case "tables":
		return "", fmt.Errorf("%w: system.tables counts rows of every tenant (invariant_violations, detached_partitions), and this session is scoped to %s; its answers carry the watermark they were read at (EXPLAIN shows it)",
			ErrSystemScope, strings.Join(ScopePairs(scope), ", "))
	case "snapshots":
		return "", fmt.Errorf("%w: system.snapshots says when every tenant's writes were committed and what they did, and this session is scoped to %s; an answer carries the snapshot and watermark it was read at (EXPLAIN shows them), and AsOf reads take a point in time",
			ErrSystemScope, strings.Join(ScopePairs(scope), ", "))
	case "partitions":
		segs, err := pl.scopeSegments()
		if err != nil {
			return "", err
		}
		for _, s := range segs {
			where += fmt.Sprintf(` AND list_contains(string_split("partition", '/'), %s)`, sqltext.String(s))
		}
	}
	return where, nil
}

// scopeSegments are the partition-path segments (column=value) that name the
// scope, checked against every partition of the handle's tables: a table
// whose partitions are not split by every scoped column cannot be shown per
// tenant, and is refused.
func (pl *planning) scopeSegments() ([]string, error) {
	scope := pl.in.View.Scope
	var cols, segs []string
	for c := range scope {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	for _, c := range cols {
		segs = append(segs, ScopeSegment(c, scope[c]))
	}
	visible := map[string]bool{}
	for _, t := range pl.in.Tables {
		visible[t.Config.ResolvedName()] = true
	}
	var rows [][]any
	if pl.in.SystemRows != nil {
		rows = pl.in.SystemRows("partitions")
	}
	for _, r := range rows {
		table, _ := r[0].(string)
		part, _ := r[1].(string)
		if !visible[table] {
			continue
		}
		for _, c := range cols {
			if !hasSegment(part, ScopeSegment(c, "")) {
				return nil, fmt.Errorf("%w: system.partitions of %s: partition %q is not split by %s, so it holds rows of every %s value; this session is scoped to %s",
					ErrSystemScope, table, part, c, c, strings.Join(ScopePairs(scope), ", "))
			}
		}
	}
	return segs, nil
}

// ScopeSegment is the partition-path segment that names column = value: a
// partition holds one scope's rows only when its path has the segment of every
// scoped column (ScopeSegment(column, "") is the segment's prefix).
func ScopeSegment(column, value string) string {
	return url.QueryEscape(column) + "=" + url.QueryEscape(value)
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
