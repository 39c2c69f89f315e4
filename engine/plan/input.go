package plan

import (
	"database/sql"
	"sort"
	"time"
)

// Input is one statement and everything the planner reads besides it: the
// session's connection, tables, view of them and read paths.
type Input struct {
	// Conn is the statement's own connection: literals and parameters are
	// evaluated there, in its time zone, and the statement runs there.
	Conn *sql.Conn
	// Catalog is Conn's database catalog name ("" = "memory").
	Catalog string
	SQL     string
	Args    []any
	// Bind, when set, binds the statement's parameters instead of Args: it
	// is given their names as DuckDB's parser lists them (named_param_map:
	// "malo" for $malo, "1" for $1 and the first ?), in order, and its
	// answer is the arguments — a caller holding values by name binds them
	// from the parse planning makes anyway.
	Bind func(names []string) ([]any, error)
	// Tables are the tables the session sees.
	Tables []*Table
	View   View
	Paths  Paths
	// Scans registers the scans the rendered statement's table functions read.
	Scans Registry
	// Feeder, when set, runs each cold half elsewhere and hands it to the
	// statement (a confined session's).
	Feeder Feeder
	// SystemRows are a system table's rows as last refreshed (nil: none).
	SystemRows func(name string) [][]any
	// TimeZone is the session time zone, for the provenance.
	TimeZone string
}

// View is what the session may see: its read mode, pins, ceilings and
// confinement.
type View struct {
	Mode       ReadMode
	Snapshot   int64      // AsOf: the pinned snapshot
	AsOfTime   *time.Time // AsOf by instant: each table's snapshot current at it
	MaxVersion *uint64    // AsOf: the version ceiling, enforced below the projection
	KnownAt    *time.Time // AsKnownAt: only versions recorded at or before it
	Scope      map[string]string
	Isolated   bool // the session sees one table of several
	// Confined: the statement runs in the walled DuckDB database, which
	// attaches nothing and opens no file (Input.Feeder reads its cold halves).
	Confined bool
}

// Paths are the ways the session's database reads each half.
type Paths struct {
	Hot  HotPath
	Cold ColdPath
	// HTTPFS: DuckDB opens files on object storage itself (httpfs loaded,
	// the warehouse's secret created).
	HTTPFS bool
}

// ScopePairs is a scope as sorted "column=value" pairs.
func ScopePairs(scope map[string]string) []string {
	var out []string
	for k, v := range scope {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
