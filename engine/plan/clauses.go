package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltree"
)

// ErrReferenceClause is wrapped by the refusal of a clause on a reference to
// readings or readings_versions that the planner cannot carry onto the
// relation it puts in the reference's place. Such a clause is refused, never
// dropped: a dropped TABLESAMPLE counts every row, a dropped AT answers with
// current data.
var ErrReferenceClause = fmt.Errorf("%w: a clause on a table reference", ErrNotAQuery)

// clause is what the planner does with one field of a base-table reference
// as DuckDB serializes it (BaseTableRef and the TableRef it extends) when
// the reference names a configured relation.
type clause uint8

const (
	clauseNames   clause = iota // names the relation; find references reads it
	clauseKept                  // carried onto the relation in the reference's place
	clauseRefused               // refused when set (refuseClause says why and what to use)
)

// referenceClauses is every field of a serialized base-table reference. A
// field not listed here is refused when it holds anything but its empty
// value, so a DuckDB release that grows a clause cannot have it dropped
// silently (TestReferenceClausesAreKnown compares this list with what
// DuckDB serializes).
var referenceClauses = map[string]clause{
	"type":         clauseNames,
	"table_name":   clauseNames,
	"schema_name":  clauseNames,
	"catalog_name": clauseNames,
	// The alias and column aliases name the replacement as they named the
	// table; the position keeps parse errors pointing into the user's text.
	"alias":             clauseKept,
	"column_name_alias": clauseKept,
	"query_location":    clauseKept,
	// TABLESAMPLE samples the relation in the reference's place, which is
	// the resolved one: the sample is of the readings the statement sees,
	// never of versions a resolution would have left out.
	"sample":    clauseKept,
	"at_clause": clauseRefused,
}

// checkReferenceClauses refuses what the planner cannot carry from ref to
// the relation that replaces it.
func checkReferenceClauses(ref *sqltree.BaseTable) error {
	for _, k := range slices.Sorted(maps.Keys(ref.Rest)) {
		v := ref.Rest[k]
		switch how, known := referenceClauses[k]; {
		case !known && !emptyField(v):
			return fmt.Errorf("%w: %s carries %s = %s, a clause the planner does not know how to apply to the resolved relation it reads in its place; "+
				"it is refused rather than dropped — remove it, or apply it in an outer query over %s",
				ErrReferenceClause, ref.TableName, k, fieldText(v), ref.TableName)
		case how == clauseRefused && !emptyField(v):
			return refuseClause(ref, k, v)
		}
	}
	return nil
}

// checkColumnAliases refuses column aliases on a reference to a configured
// relation that give a column the name of another of its columns. The
// planner reads bounds on "from", equalities on the merge key and the stored
// balancing day by column name, so an alias list such as r(…, "to", "from")
// would have it prune by the relation's "from" where the statement filters
// its "to" — an answer short by every row the pruning dropped, without an
// error. Aliases naming no column of the relation, or each its own, are kept.
func checkColumnAliases(ref *sqltree.BaseTable, cfg meterstore.TableConfig) error {
	aliases, _ := ref.Rest["column_name_alias"].([]any)
	cols := cfg.Columns()
	for i, a := range aliases {
		if i >= len(cols) {
			break // DuckDB refuses more aliases than columns
		}
		name, _ := a.(string)
		for j, c := range cols {
			if j != i && strings.EqualFold(name, c.Name) {
				return fmt.Errorf("%w: column alias %q on %s names its column %q but stands for its column %q; "+
					"the planner bounds and prunes by column name, so the statement would be filtered by another column than it says — "+
					"give the columns names %s does not use, or rename in an outer query: SELECT … FROM (SELECT * FROM %s) AS %s(…)",
					ErrReferenceClause, name, ref.TableName, c.Name, cols[i].Name, ref.TableName, ref.TableName, ref.Name())
			}
		}
	}
	return nil
}

// owns reports whether column (lower case) still names one of the
// reference's columns: a column its alias list renamed is the reference's
// under the new name only, and the old name binds elsewhere — to an outer
// query's column in a correlated subquery — so it neither bounds the
// reference nor becomes its stored balancing day.
func (r *reference) owns(column string) bool {
	aliases, _ := r.n.Rest["column_name_alias"].([]any)
	cols := r.rel.table.Config.Columns()
	for i, a := range aliases {
		if i >= len(cols) {
			break
		}
		name, _ := a.(string)
		if strings.EqualFold(cols[i].Name, column) && !strings.EqualFold(name, column) {
			return false
		}
	}
	return true
}

// refuseClause is the refusal of a set refused clause, naming what to use.
func refuseClause(ref *sqltree.BaseTable, key string, v any) error {
	if key != "at_clause" {
		return fmt.Errorf("%w: %s on %s", ErrReferenceClause, key, ref.TableName)
	}
	unit := ""
	if o, ok := v.(*sqltree.Object); ok {
		unit, _ = o.Get("unit").(string)
	}
	switch strings.ToUpper(unit) {
	case "VERSION":
		return fmt.Errorf("%w: AT (VERSION => …) on %s: DuckDB reads a table version there (an Iceberg snapshot id), which is not a reading's version and would not pin the hot tier; "+
			"for the versions up to N filter readings_versions by version (WHERE version <= N) or read through a version ceiling (engine AsOf(snapshot, &N), shell .asof SNAPSHOT N); "+
			"for a past snapshot use AsOf(snapshotID) (.asof SNAPSHOT)",
			ErrReferenceClause, ref.TableName)
	case "TIMESTAMP":
		return fmt.Errorf("%w: AT (TIMESTAMP => …) on %s: a time-travel read is a property of the session, not of one reference (every reference to a table splits at one watermark); "+
			"read the cold tier as committed at t through AsOfTime(t, nil) (shell .asof TIMESTAMP), or both tiers as known at t through AsKnownAt(t) (shell .known-at TIMESTAMP)",
			ErrReferenceClause, ref.TableName)
	}
	return fmt.Errorf("%w: AT (%s => …) on %s: not a time-travel read this store offers; use AsOf/AsOfTime (.asof) or AsKnownAt (.known-at)",
		ErrReferenceClause, unit, ref.TableName)
}

// keptClauses are ref's fields the relation in its place carries.
func keptClauses(ref *sqltree.BaseTable) sqltree.Fields {
	out := sqltree.Fields{}
	for k, v := range ref.Rest {
		if referenceClauses[k] == clauseKept {
			out[k] = v
		}
	}
	return out
}

// emptyField reports a field holding its empty value: null, "", false, 0,
// an empty list or object.
func emptyField(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case json.Number:
		return x == "0"
	case []any:
		return len(x) == 0
	case *sqltree.Object:
		return x == nil || len(x.Fields) == 0
	}
	return false
}

// fieldText is a field's value as DuckDB serialized it, for a refusal.
func fieldText(v any) string {
	if n, ok := v.(sqltree.Node); ok {
		if s, err := sqltree.Encode(n); err == nil {
			return s
		}
	}
	return fmt.Sprint(v)
}
