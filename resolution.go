package meterstore

import (
	_ "embed"
	"strings"
	"text/template"

	"github.com/meterstore/meterstore/internal/sqltext"
)

//go:embed resolution.sql
var resolutionTemplate string

var resolutionTmpl = template.Must(template.New("resolution.sql").Parse(resolutionTemplate))

// ResolutionTemplate is the embedded resolution.sql, before rendering.
func ResolutionTemplate() string { return resolutionTemplate }

// QuoteIdent quotes an SQL identifier for PostgreSQL, DuckDB and Trino (Spark
// SQL reads "x" as a string literal: see ResolutionSQLFor). It is
// sqltext.Ident under the name this package's users know it by.
func QuoteIdent(name string) string { return sqltext.Ident(name) }

func quoteBacktick(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// QuoteIdents quotes and joins identifiers with ", ".
func QuoteIdents(names []string) string { return joinQuoted(names, QuoteIdent) }

func joinQuoted(names []string, quote func(string) string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
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

// ResolutionSQLFor is ResolutionSQL in an SQL dialect's identifier quoting, as
// the resolved Iceberg view carries it per dialect: Spark SQL quotes
// identifiers with backticks (a double-quoted "from" is a string literal
// there, and the view would not parse); DuckDB and Trino take ResolutionSQL.
func (c TableConfig) ResolutionSQLFor(dialect string) string {
	if strings.EqualFold(dialect, "spark") {
		return c.render(quoteBacktick(c.Name()), quoteBacktick)
	}
	return c.ResolutionSQL()
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
func (c TableConfig) RenderResolution(source string) string { return c.render(source, QuoteIdent) }

func (c TableConfig) render(source string, quote func(string) string) string {
	var b strings.Builder
	err := resolutionTmpl.Execute(&b, struct{ Projection, PartitionBy, Version, Source string }{
		Projection:  joinQuoted(c.ColumnNames(), quote),
		Version:     quote("version"),
		PartitionBy: joinQuoted(c.ResolutionKey(), quote),
		Source:      source,
	})
	if err != nil { // the template is embedded and its inputs are strings
		panic("render resolution.sql: " + err.Error())
	}
	return strings.TrimSpace(b.String())
}
