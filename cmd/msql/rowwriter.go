package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/meterstore/meterstore/internal/duckfmt"
)

// rowWriter writes a result in one output format row by row, so a result is
// printed as it is read: begin before the first row, end after the last with
// the number of rows.
type rowWriter interface {
	begin()
	row(vals []any)
	end(rows int64)
}

// cellText prints values as DuckDB's own text form of their column's type.
type cellText struct {
	types  []duckfmt.Type
	values duckfmt.Formatter
}

func (c cellText) text(v any, i int, null string) string {
	if v == nil {
		return null
	}
	return c.values.Text(v, c.types[i])
}

// newRowWriter returns the writer of o.format. window is the first rows of
// the result: table and box take their column widths from it.
func newRowWriter(w io.Writer, columns []string, types []duckfmt.Type, o renderOptions, window [][]any) rowWriter {
	c := cellText{types: types, values: o.values}
	switch o.format {
	case "csv":
		return &csvWriter{w: w, columns: columns, c: c, rec: make([]string, len(columns)), null: make([]bool, len(columns))}
	case "json", "jsonl":
		return &jsonWriter{w: w, columns: columns, c: c, lines: o.format == "jsonl"}
	case "line":
		return &lineWriter{w: w, columns: columns, c: c, null: o.nullText}
	case "markdown":
		return &markdownWriter{w: w, columns: columns, c: c, null: o.nullText}
	}
	g := &gridWriter{w: w, columns: columns, c: c, o: o, box: o.format == "box", right: make([]bool, len(types))}
	for i, ty := range types {
		g.right[i] = ty.Numeric()
	}
	g.widths = make([]int, len(columns))
	for i, col := range columns {
		g.widths[i] = utf8.RuneCountInString(col)
	}
	for _, r := range window {
		for i, s := range g.cells(r) {
			g.widths[i] = max(g.widths[i], utf8.RuneCountInString(s))
		}
	}
	return g
}

type csvWriter struct {
	w       io.Writer
	columns []string
	c       cellText
	rec     []string
	null    []bool
}

func (x *csvWriter) begin() { writeCSVRecord(x.w, x.columns, nil) }

func (x *csvWriter) row(r []any) {
	for i, v := range r {
		x.rec[i], x.null[i] = x.c.text(v, i, ""), v == nil
	}
	writeCSVRecord(x.w, x.rec, x.null)
}

func (x *csvWriter) end(int64) {}

// jsonWriter writes json as one array on one line, and jsonl as one object
// per line; both carry exact numbers and ISO 8601 times.
type jsonWriter struct {
	w       io.Writer
	columns []string
	c       cellText
	lines   bool
	n       int64
	buf     bytes.Buffer
}

func (x *jsonWriter) begin() {
	if !x.lines {
		io.WriteString(x.w, "[")
	}
}

func (x *jsonWriter) row(r []any) {
	obj := make(duckfmt.Object, len(r))
	for i, v := range r {
		obj[i] = duckfmt.Member{Name: x.columns[i], Value: x.c.values.JSON(v, x.c.types[i])}
	}
	x.buf.Reset()
	enc := json.NewEncoder(&x.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		fmt.Fprintf(&x.buf, "%q\n", err.Error())
	}
	b := x.buf.Bytes()
	if !x.lines {
		b = bytes.TrimSuffix(b, []byte("\n"))
		if x.n > 0 {
			io.WriteString(x.w, ",")
		}
	}
	x.w.Write(b)
	x.n++
}

func (x *jsonWriter) end(int64) {
	if !x.lines {
		io.WriteString(x.w, "]\n")
	}
}

type lineWriter struct {
	w       io.Writer
	columns []string
	c       cellText
	null    string
	width   int
	n       int64
}

func (x *lineWriter) begin() {
	for _, col := range x.columns {
		x.width = max(x.width, utf8.RuneCountInString(col))
	}
}

func (x *lineWriter) row(r []any) {
	if x.n > 0 {
		fmt.Fprintln(x.w)
	}
	for i, v := range r {
		fmt.Fprintf(x.w, "%*s = %s\n", x.width, x.columns[i], x.c.text(v, i, x.null))
	}
	x.n++
}

func (x *lineWriter) end(int64) {}

type markdownWriter struct {
	w       io.Writer
	columns []string
	c       cellText
	null    string
}

func (x *markdownWriter) begin() {
	fmt.Fprintf(x.w, "| %s |\n", strings.Join(x.columns, " | "))
	seps := make([]string, len(x.columns))
	for i := range seps {
		seps[i] = "---"
		if x.c.types[i].Numeric() {
			seps[i] = "---:"
		}
	}
	fmt.Fprintf(x.w, "| %s |\n", strings.Join(seps, " | "))
}

func (x *markdownWriter) row(r []any) {
	cells := make([]string, len(r))
	for i, v := range r {
		cells[i] = strings.ReplaceAll(strings.ReplaceAll(x.c.text(v, i, x.null), "|", `\|`), "\n", "<br>")
	}
	fmt.Fprintf(x.w, "| %s |\n", strings.Join(cells, " | "))
}

func (x *markdownWriter) end(int64) {}

// gridWriter is psql's aligned format (table: no outer border, a rule under
// the header) or the DuckDB CLI's box mode. Its column widths come from the
// window it was made with.
type gridWriter struct {
	w       io.Writer
	columns []string
	c       cellText
	o       renderOptions
	box     bool
	right   []bool
	widths  []int
}

// cells are one row's texts as the grid shows them: line breaks as ↵, cut
// at the maximum width.
func (g *gridWriter) cells(r []any) []string {
	out := make([]string, len(r))
	for i, v := range r {
		s := strings.ReplaceAll(g.c.text(v, i, g.o.nullText), "\n", "↵")
		if g.o.maxWidth > 0 && utf8.RuneCountInString(s) > g.o.maxWidth {
			s = string([]rune(s)[:g.o.maxWidth-1]) + "…"
		}
		out[i] = s
	}
	return out
}

// pad pads the cells of one row to the widths (numbers right-aligned,
// headers centred as psql centres them); a wider cell is left whole.
func (g *gridWriter) pad(vals []string, header bool) []string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		gap := max(0, g.widths[i]-utf8.RuneCountInString(v))
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

func (g *gridWriter) rules() []string {
	out := make([]string, len(g.widths))
	for i, wd := range g.widths {
		out[i] = strings.Repeat("─", wd)
	}
	return out
}

func (g *gridWriter) line(l, m, r string) {
	fmt.Fprintf(g.w, "%s─%s─%s\n", l, strings.Join(g.rules(), "─"+m+"─"), r)
}

func (g *gridWriter) begin() {
	if g.box {
		g.line("┌", "┬", "┐")
		fmt.Fprintf(g.w, "│ %s │\n", strings.Join(g.pad(g.columns, true), " │ "))
		g.line("├", "┼", "┤")
		return
	}
	fmt.Fprintf(g.w, " %s \n", strings.Join(g.pad(g.columns, true), " │ "))
	fmt.Fprintf(g.w, "─%s─\n", strings.Join(g.rules(), "─┼─"))
}

func (g *gridWriter) row(r []any) {
	if g.box {
		fmt.Fprintf(g.w, "│ %s │\n", strings.Join(g.pad(g.cells(r), false), " │ "))
		return
	}
	fmt.Fprintf(g.w, " %s \n", strings.Join(g.pad(g.cells(r), false), " │ "))
}

func (g *gridWriter) end(rows int64) {
	if g.box {
		g.line("└", "┴", "┘")
		return
	}
	noun := "rows"
	if rows == 1 {
		noun = "row"
	}
	fmt.Fprintf(g.w, "(%d %s)\n", rows, noun)
}
