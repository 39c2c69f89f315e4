package main

import (
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore/internal/duckfmt"
)

// table is a result ready to print.
type table struct {
	columns []string
	types   []string // DuckDB type names; "" where unknown (the type is then taken from the values)
	rows    [][]any
}

// formats the shell and -c understand.
var formats = []string{"table", "box", "csv", "json", "jsonl", "markdown", "line"}

func validFormat(f string) error {
	for _, x := range formats {
		if f == x {
			return nil
		}
	}
	return fmt.Errorf("unknown format %q; use one of %s", f, strings.Join(formats, ", "))
}

// renderOptions say how a result is written.
type renderOptions struct {
	format   string
	maxWidth int    // table and box: truncate wider cells (0 = unbounded)
	nullText string // table, box, markdown and line: how NULL shows
	values   duckfmt.Formatter
}

// columnTypes parses the column types, taking a column without a type name
// from its first non-NULL value in rows (the tables msql builds itself).
func columnTypes(columns, typeNames []string, rows [][]any) []duckfmt.Type {
	out := make([]duckfmt.Type, len(columns))
	for i := range columns {
		if i < len(typeNames) && typeNames[i] != "" {
			out[i] = duckfmt.ParseType(typeNames[i])
			continue
		}
		for _, r := range rows {
			if r[i] != nil {
				out[i] = duckfmt.ParseType(goTypeName(r[i]))
				break
			}
		}
	}
	return out
}

func (t table) columnTypes() []duckfmt.Type { return columnTypes(t.columns, t.types, t.rows) }

// goTypeName is the DuckDB type of a value msql built itself.
func goTypeName(v any) string {
	switch x := v.(type) {
	case bool:
		return "BOOLEAN"
	case int, int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		return "BIGINT"
	case *big.Int:
		return "HUGEINT"
	case float32, float64:
		return "DOUBLE"
	case decimal.Decimal:
		return fmt.Sprintf("DECIMAL(38,%d)", max(0, -x.Exponent()))
	case time.Time:
		return "TIMESTAMPTZ"
	case string:
		return "VARCHAR"
	}
	return ""
}

// render writes t in o.format.
func render(w io.Writer, t table, o renderOptions) error {
	rw := newRowWriter(w, t.columns, t.columnTypes(), o, t.rows)
	rw.begin()
	for _, r := range t.rows {
		rw.row(r)
	}
	rw.end(int64(len(t.rows)))
	return nil
}

// writeCSVRecord writes one CSV line the way psql --csv and DuckDB's COPY do:
// a field is quoted when it holds the delimiter, a quote, a line break or
// surrounding space, or when it is an empty string rather than NULL.
func writeCSVRecord(w io.Writer, fields []string, null []bool) {
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		isNull := null != nil && null[i]
		if !isNull && (f == "" || strings.ContainsAny(f, ",\"\r\n") || strings.TrimSpace(f) != f) {
			b.WriteString(`"` + strings.ReplaceAll(f, `"`, `""`) + `"`)
			continue
		}
		b.WriteString(f)
	}
	b.WriteByte('\n')
	io.WriteString(w, b.String())
}
