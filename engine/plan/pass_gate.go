package plan

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/meterstore/meterstore/internal/sqltree"
)

// gate refuses, before anything is prepared, a statement that reads anything
// but the session's relations (and, in a confined session, a setting that
// names a path or the configuration): a table function that reads files, other
// databases or the engine's internals, another database's tables, an unknown
// system table, a DuckDB table of the session or a replacement scan reading a
// file by name. The first refusal in the statement's text is the error.
func gate(_ context.Context, pl *planning) error {
	var refused error
	sqltree.Inspect(pl.root, func(n sqltree.Node, s sqltree.Scope) bool {
		if refused != nil {
			return false
		}
		confined := pl.in.View.Confined
		switch x := n.(type) {
		case *sqltree.TableFunction:
			refused = checkTableFunction(x)
		case *sqltree.Function:
			if confined {
				refused = checkSettingCall(x)
			}
		case *sqltree.BaseTable:
			if confined && !(x.SchemaName == "" && s.IsCTE(strings.ToLower(x.TableName))) {
				refused = checkSettingView(x)
			}
			if refused == nil {
				_, _, refused = pl.classify(x, s)
			}
		}
		return refused == nil
	})
	return refused
}

// allowedTableFunctions are the table functions a statement may call: they
// compute rows rather than read files or other databases. Everything else —
// read_parquet, read_csv, glob, parquet_metadata, attach-style scanners, and the
// engine's own scans — is refused before execution; the unrestricted handle
// (DB) is the door for in-process file work.
var allowedTableFunctions = map[string]bool{
	"range": true, "generate_series": true, "unnest": true, completenessFunction: true,
}

func checkTableFunction(t *sqltree.TableFunction) error {
	fn, _ := t.Function.(*sqltree.Function)
	var name string
	if fn != nil {
		name = fn.Name
	}
	if settingTableFunctions[strings.ToLower(name)] {
		return fmt.Errorf("%w: %s lists the server's settings, secrets, extensions or databases", ErrSetting, name)
	}
	if !allowedTableFunctions[strings.ToLower(name)] {
		return fmt.Errorf("%w: %s reads files, other databases or the engine's internals, which a query session does not", ErrFileFunction, name)
	}
	return nil
}

// allowedSchemas hold catalog views a client may browse.
var allowedSchemas = map[string]bool{"information_schema": true, "pg_catalog": true, "system": true}

// baseKind is what a table name in a statement stands for.
type baseKind uint8

const (
	baseOther      baseKind = iota // a CTE, or a catalog view a client may browse
	baseConfigured                 // readings or readings_versions of a configured table
	baseSystem                     // one of the system tables
)

// classify says what t names in scope s; the error is the gate's refusal.
func (pl *planning) classify(t *sqltree.BaseTable, s sqltree.Scope) (baseKind, relation, error) {
	lname := strings.ToLower(t.TableName)
	if s.IsCTE(lname) && t.SchemaName == "" {
		return baseOther, relation{}, nil
	}
	own := pl.in.Catalog
	if own == "" {
		own = "memory"
	}
	if t.CatalogName != "" && !strings.EqualFold(t.CatalogName, own) {
		return 0, relation{}, fmt.Errorf("%w: relation %s.%s: other databases are not readable here", ErrNotAQuery, t.CatalogName, t.TableName)
	}
	if strings.EqualFold(t.SchemaName, "system") {
		if _, ok := SystemTables[lname]; !ok {
			return 0, relation{}, fmt.Errorf("%w: unknown system table %q (system.tables, system.config, system.resolution, system.snapshots, system.partitions)", ErrNotAQuery, t.TableName)
		}
		return baseSystem, relation{}, nil
	}
	rels := relations(pl.in.Tables)
	rel, ok := rels[lname]
	if ok && (t.SchemaName == "" || strings.EqualFold(t.SchemaName, "main")) {
		return baseConfigured, rel, nil
	}
	if allowedSchemas[strings.ToLower(t.SchemaName)] {
		return baseOther, relation{}, nil
	}
	names := relationNames(rels)
	if guess := closestName(t.TableName, names); guess != "" {
		return 0, relation{}, fmt.Errorf("%w %q: did you mean %s? (the relations here are %s)", ErrUnknownRelation, t.TableName, guess, strings.Join(names, ", "))
	}
	return 0, relation{}, fmt.Errorf("%w %q (the relations here are %s)", ErrUnknownRelation, t.TableName, strings.Join(names, ", "))
}

func relationNames(rels map[string]relation) []string {
	var out []string
	for n := range rels {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
