package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// table is a result ready to print.
type table struct {
	columns []string
	types   []string // DuckDB type names, when known
	rows    [][]any
}

// formats the shell and -c understand.
var formats = []string{"table", "csv", "json", "jsonl", "markdown", "line"}

func validFormat(f string) error {
	for _, x := range formats {
		if f == x {
			return nil
		}
	}
	return fmt.Errorf("unknown format %q; use one of %s", f, strings.Join(formats, ", "))
}

// cell renders one value the way psql and the duckdb CLI do: timestamps in
// RFC 3339 UTC, dates as dates, decimals exactly, NULL as nullText.
func cell(v any, nullText string) string {
	switch x := v.(type) {
	case nil:
		return nullText
	case civilDate:
		return time.Time(x).Format("2006-01-02")
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.999999Z07:00")
	case decimal.Decimal:
		return x.String()
	case []byte:
		return string(x)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// civilDate is a DATE value (the driver hands DATE over as a time.Time at midnight UTC).
type civilDate time.Time

// withDates marks the values of DATE columns so they print as dates.
func withDates(t table) table {
	var dates []int
	for i, typ := range t.types {
		if typ == "DATE" {
			dates = append(dates, i)
		}
	}
	if len(dates) == 0 {
		return t
	}
	out := t
	out.rows = make([][]any, len(t.rows))
	for r, row := range t.rows {
		nr := append([]any(nil), row...)
		for _, i := range dates {
			if tm, ok := nr[i].(time.Time); ok {
				nr[i] = civilDate(tm)
			}
		}
		out.rows[r] = nr
	}
	return out
}

func jsonValue(v any) any {
	switch x := v.(type) {
	case civilDate:
		return cell(x, "")
	case time.Time:
		return cell(x, "")
	case decimal.Decimal:
		return json.Number(x.String())
	case []byte:
		return string(x)
	}
	return v
}

// render writes t in format; maxWidth bounds a table column (0 = unbounded).
func render(w io.Writer, t table, format string, maxWidth int, nullText string) error {
	t = withDates(t)
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(t.columns); err != nil {
			return err
		}
		for _, r := range t.rows {
			rec := make([]string, len(r))
			for i, v := range r {
				rec[i] = cell(v, "")
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	case "json", "jsonl":
		objs := make([]map[string]any, len(t.rows))
		for i, r := range t.rows {
			o := make(map[string]any, len(r))
			for j, v := range r {
				o[t.columns[j]] = jsonValue(v)
			}
			objs[i] = o
		}
		enc := json.NewEncoder(w)
		if format == "jsonl" {
			for _, o := range objs {
				if err := enc.Encode(orderedObject(t.columns, o)); err != nil {
					return err
				}
			}
			return nil
		}
		rows := make([]json.RawMessage, len(objs))
		for i, o := range objs {
			b, err := json.Marshal(orderedObject(t.columns, o))
			if err != nil {
				return err
			}
			rows[i] = b
		}
		return enc.Encode(rows)
	case "line":
		width := 0
		for _, c := range t.columns {
			width = max(width, utf8.RuneCountInString(c))
		}
		for i, r := range t.rows {
			if i > 0 {
				fmt.Fprintln(w)
			}
			for j, v := range r {
				fmt.Fprintf(w, "%*s = %s\n", width, t.columns[j], cell(v, nullText))
			}
		}
		return nil
	case "markdown":
		fmt.Fprintf(w, "| %s |\n", strings.Join(t.columns, " | "))
		seps := make([]string, len(t.columns))
		for i := range seps {
			seps[i] = "---"
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(seps, " | "))
		for _, r := range t.rows {
			cells := make([]string, len(r))
			for i, v := range r {
				cells[i] = strings.ReplaceAll(cell(v, nullText), "|", `\|`)
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		}
		return nil
	}
	return renderTable(w, t, maxWidth, nullText)
}

// orderedObject keeps the column order in JSON output.
type orderedJSON struct {
	keys []string
	m    map[string]any
}

func orderedObject(keys []string, m map[string]any) orderedJSON { return orderedJSON{keys, m} }

func (o orderedJSON) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.m[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

func renderTable(w io.Writer, t table, maxWidth int, nullText string) error {
	widths := make([]int, len(t.columns))
	cells := make([][]string, len(t.rows))
	for i, c := range t.columns {
		widths[i] = utf8.RuneCountInString(c)
	}
	for r, row := range t.rows {
		cells[r] = make([]string, len(row))
		for i, v := range row {
			s := strings.ReplaceAll(cell(v, nullText), "\n", "↵")
			if maxWidth > 0 && utf8.RuneCountInString(s) > maxWidth {
				s = string([]rune(s)[:maxWidth-1]) + "…"
			}
			cells[r][i] = s
			widths[i] = max(widths[i], utf8.RuneCountInString(s))
		}
	}
	line := func(vals []string, right []bool) {
		parts := make([]string, len(vals))
		for i, v := range vals {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(v))
			if right != nil && right[i] {
				parts[i] = pad + v
			} else {
				parts[i] = v + pad
			}
		}
		fmt.Fprintf(w, " %s \n", strings.Join(parts, " │ "))
	}
	line(t.columns, nil)
	seps := make([]string, len(widths))
	for i, wd := range widths {
		seps[i] = strings.Repeat("─", wd)
	}
	fmt.Fprintf(w, "─%s─\n", strings.Join(seps, "─┼─"))
	right := make([]bool, len(t.columns))
	for i := range t.columns {
		for _, r := range t.rows { // the first non-NULL value decides
			if r[i] == nil {
				continue
			}
			switch r[i].(type) {
			case int, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, decimal.Decimal:
				right[i] = true
			}
			break
		}
	}
	for _, r := range cells {
		line(r, right)
	}
	noun := "rows"
	if len(t.rows) == 1 {
		noun = "row"
	}
	fmt.Fprintf(w, "(%d %s)\n", len(t.rows), noun)
	return nil
}
