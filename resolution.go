package meterstore

import (
	_ "embed"
	"strings"
	"text/template"
)

//go:embed resolution.sql
var resolutionTemplate string

var resolutionTmpl = template.Must(template.New("resolution.sql").Parse(resolutionTemplate))

// ResolutionTemplate is the embedded resolution.sql, before rendering.
func ResolutionTemplate() string { return resolutionTemplate }

// QuoteIdent quotes an SQL identifier for PostgreSQL, DuckDB, Trino and Spark alike.
func QuoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// QuoteIdents quotes and joins identifiers with ", ".
func QuoteIdents(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = QuoteIdent(n)
	}
	return strings.Join(q, ", ")
}

// ResolutionSQL is the published resolution statement for this table, over its
// physical (unresolved) table: latest version per merge key and version_scope.
// The engine builds its plan from the same text (RenderResolution with its own
// source), so the published SQL and the executed plan cannot drift.
func (c TableConfig) ResolutionSQL() string {
	return c.RenderResolution(QuoteIdent(c.Name()))
}

// ResolutionKey is what resolution ranks within: the merge key and
// version_scope. The engine's exclusion form of resolution joins on the same list.
func (c TableConfig) ResolutionKey() []string {
	return append(append([]string(nil), c.MergeKey()...), "version_scope")
}

// RenderResolution renders resolution.sql over source, an SQL relation expression
// (a quoted table name or a parenthesised, aliased subquery) with the table's columns.
//
// The partition is the table's merge key plus version_scope, because MSCONS
// assigns versions per network operator per month and ranking across scopes is
// meaningless; the projection is explicit so the rank column never leaks.
func (c TableConfig) RenderResolution(source string) string {
	var b strings.Builder
	err := resolutionTmpl.Execute(&b, struct{ Projection, PartitionBy, Source string }{
		Projection:  QuoteIdents(c.ColumnNames()),
		PartitionBy: QuoteIdents(c.ResolutionKey()),
		Source:      source,
	})
	if err != nil { // the template is embedded and its inputs are strings
		panic("render resolution.sql: " + err.Error())
	}
	return strings.TrimSpace(b.String())
}
