package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

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
// from its first non-NULL value (the tables msql builds itself).
func (t table) columnTypes() []duckfmt.Type {
	out := make([]duckfmt.Type, len(t.columns))
	for i := range t.columns {
		if i < len(t.types) && t.types[i] != "" {
			out[i] = duckfmt.ParseType(t.types[i])
			continue
		}
		for _, r := range t.rows {
			if r[i] != nil {
				out[i] = duckfmt.ParseType(goTypeName(r[i]))
				break
			}
		}
	}
	return out
}

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

// render writes t in o.format. Every mode prints a value as DuckDB's own text
// form of its type (duckfmt), except json and jsonl, which carry exact numbers
// and ISO 8601 times.
func render(w io.Writer, t table, o renderOptions) error {
	types := t.columnTypes()
	text := func(v any, i int, null string) string {
		if v == nil {
			return null
		}
		return o.values.Text(v, types[i])
	}
	switch o.format {
	case "csv":
		writeCSVRecord(w, t.columns, nil)
		rec := make([]string, len(t.columns))
		null := make([]bool, len(t.columns))
		for _, r := range t.rows {
			for i, v := range r {
				rec[i], null[i] = text(v, i, ""), v == nil
			}
			writeCSVRecord(w, rec, null)
		}
		return nil
	case "json", "jsonl":
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		objs := make([]any, len(t.rows))
		for r, row := range t.rows {
			obj := make(duckfmt.Object, len(row))
			for i, v := range row {
				obj[i] = duckfmt.Member{Name: t.columns[i], Value: o.values.JSON(v, types[i])}
			}
			if o.format == "jsonl" {
				if err := enc.Encode(obj); err != nil {
					return err
				}
				continue
			}
			objs[r] = obj
		}
		if o.format == "json" {
			return enc.Encode(objs)
		}
		return nil
	case "line":
		width := 0
		for _, c := range t.columns {
			width = max(width, utf8.RuneCountInString(c))
		}
		for r, row := range t.rows {
			if r > 0 {
				fmt.Fprintln(w)
			}
			for i, v := range row {
				fmt.Fprintf(w, "%*s = %s\n", width, t.columns[i], text(v, i, o.nullText))
			}
		}
		return nil
	case "markdown":
		fmt.Fprintf(w, "| %s |\n", strings.Join(t.columns, " | "))
		seps := make([]string, len(t.columns))
		for i := range seps {
			seps[i] = "---"
			if types[i].Numeric() {
				seps[i] = "---:"
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(seps, " | "))
		for _, r := range t.rows {
			cells := make([]string, len(r))
			for i, v := range r {
				cells[i] = strings.ReplaceAll(strings.ReplaceAll(text(v, i, o.nullText), "|", `\|`), "\n", "<br>")
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		}
		return nil
	}
	cells := make([][]string, len(t.rows))
	for r, row := range t.rows {
		cells[r] = make([]string, len(row))
		for i, v := range row {
			s := strings.ReplaceAll(text(v, i, o.nullText), "\n", "↵")
			if o.maxWidth > 0 && utf8.RuneCountInString(s) > o.maxWidth {
				s = string([]rune(s)[:o.maxWidth-1]) + "…"
			}
			cells[r][i] = s
		}
	}
	right := make([]bool, len(types))
	for i, ty := range types {
		right[i] = ty.Numeric()
	}
	g := grid{columns: t.columns, cells: cells, right: right}
	if o.format == "box" {
		g.box(w)
		return nil
	}
	g.table(w)
	noun := "rows"
	if len(t.rows) == 1 {
		noun = "row"
	}
	fmt.Fprintf(w, "(%d %s)\n", len(t.rows), noun)
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

// grid is a result's cells laid out in columns.
type grid struct {
	columns []string
	cells   [][]string
	right   []bool
}

func (g grid) widths() []int {
	widths := make([]int, len(g.columns))
	for i, c := range g.columns {
		widths[i] = utf8.RuneCountInString(c)
	}
	for _, r := range g.cells {
		for i, s := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(s))
		}
	}
	return widths
}

// row pads the cells of one row to the widths (numbers right-aligned,
// headers centred as psql centres them).
func (g grid) row(vals []string, widths []int, header bool) []string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		gap := widths[i] - utf8.RuneCountInString(v)
		switch {
		case header:
			parts[i] = strings.Repeat(" ", gap/2) + v + strings.Repeat(" ", gap-gap/2)
		case g.right[i]:
			parts[i] = strings.Repeat(" ", gap) + v
		default:
			parts[i] = v + strings.Repeat(" ", gap)
		}
	}
	return parts
}

func rules(widths []int) []string {
	out := make([]string, len(widths))
	for i, wd := range widths {
		out[i] = strings.Repeat("─", wd)
	}
	return out
}

// table is psql's aligned format: no outer border, a rule under the header.
func (g grid) table(w io.Writer) {
	widths := g.widths()
	fmt.Fprintf(w, " %s \n", strings.Join(g.row(g.columns, widths, true), " │ "))
	fmt.Fprintf(w, "─%s─\n", strings.Join(rules(widths), "─┼─"))
	for _, r := range g.cells {
		fmt.Fprintf(w, " %s \n", strings.Join(g.row(r, widths, false), " │ "))
	}
}

// box is the DuckDB CLI's box mode: the table drawn with box characters.
func (g grid) box(w io.Writer) {
	widths := g.widths()
	line := func(l, m, r string) {
		fmt.Fprintf(w, "%s─%s─%s\n", l, strings.Join(rules(widths), "─"+m+"─"), r)
	}
	line("┌", "┬", "┐")
	fmt.Fprintf(w, "│ %s │\n", strings.Join(g.row(g.columns, widths, true), " │ "))
	line("├", "┼", "┤")
	for _, r := range g.cells {
		fmt.Fprintf(w, "│ %s │\n", strings.Join(g.row(r, widths, false), " │ "))
	}
	line("└", "┴", "┘")
}
