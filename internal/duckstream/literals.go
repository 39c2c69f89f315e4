package duckstream

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore/internal/duckfmt"
	"github.com/meterstore/meterstore/internal/sqltext"
)

// PrepareBound prepares query with args written into its text as literals,
// when each argument has a literal DuckDB binds exactly as it binds the
// argument; the statement then runs without arguments (Bound). DuckDB binds
// and plans a prepared statement with parameters again on every run (it
// waits for the values to optimise with them: always_require_rebind), while
// a statement without parameters keeps its physical plan between runs, so a
// statement kept for one set of arguments is faster carrying them. Otherwise
// — an argument of another type, a parameter whose type DuckDB leaves to the
// value — it is query prepared as Prepare prepares it, bound at each run. On
// an error conn is still the caller's, as Prepare leaves it.
func PrepareBound(ctx context.Context, conn *sql.Conn, query string, args []any) (*Prepared, error) {
	p, err := Prepare(ctx, conn, query)
	if err != nil || len(args) == 0 || p.stmt.NumInput() == 0 {
		return p, err
	}
	text, ok, err := p.withLiterals(ctx, args)
	if err == nil && !ok {
		return p, nil
	}
	if err := errors.Join(err, p.stmt.Close()); err != nil {
		return nil, err
	}
	if p, err = Prepare(ctx, conn, text); err != nil {
		return nil, err
	}
	p.bound = true
	return p, nil
}

// Bound reports that the statement's arguments are in its text: it runs
// with none.
func (p *Prepared) Bound() bool { return p.bound }

// withLiterals is the statement's text with each parameter replaced by the
// literal of the argument duckdb-go would bind to it; false if one has none.
func (p *Prepared) withLiterals(ctx context.Context, args []any) (string, bool, error) {
	named, ok := namedValues(args)
	if !ok {
		return "", false, nil
	}
	n := p.stmt.NumInput()
	lits := map[string]string{}
	err := p.conn.Raw(func(dc any) error {
		d, ok := dc.(*duckdb.Conn)
		if !ok {
			return fmt.Errorf("prepare: %T is not a duckdb-go connection", dc)
		}
		named, err := sessionDates(ctx, d, p.stmt, named)
		if err != nil {
			return err
		}
		for i := range n {
			j, name := argumentOf(p.stmt, named, i)
			t, err := p.stmt.ParamType(i + 1)
			if err != nil {
				return err
			}
			if j >= len(named) {
				return nil // too few arguments: binding says so
			}
			lit, ok := literal(named[j].Value, t)
			if !ok {
				return nil
			}
			lits[name] = lit
		}
		return nil
	})
	if err != nil || len(lits) != n {
		return "", false, err
	}
	text, ok := replaceParameters(p.query, lits)
	return text, ok, nil
}

// namedValues are args as database/sql hands them to duckdb-go: a
// driver.Valuer's value, integers as int64, floats as float64, and a
// sql.NamedArg by its name. false for a value duckdb-go takes as it is
// (but a []byte, a BLOB): it binds those by its own rules, which literal
// does not follow.
func namedValues(args []any) ([]driver.NamedValue, bool) {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv := driver.NamedValue{Ordinal: i + 1, Value: a}
		if n, ok := a.(sql.NamedArg); ok {
			nv.Name, nv.Value = n.Name, n.Value
		}
		if _, blob := nv.Value.([]byte); !blob && (&duckdb.Conn{}).CheckNamedValue(&nv) != driver.ErrSkip {
			return nil, false
		}
		v, err := driver.DefaultParameterConverter.ConvertValue(nv.Value)
		if err != nil {
			return nil, false
		}
		nv.Value = v
		out[i] = nv
	}
	return out, true
}

// literal is the SQL literal DuckDB binds as it binds v, a driver value,
// to a parameter DuckDB expects as t: a parameter takes the type of the
// value bound to it (a VARCHAR as an untyped string literal), so the
// literal has the value's type, not t — except for a time.Time, which
// duckdb-go converts to t itself. false for a value without one.
func literal(v driver.Value, t duckdb.Type) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "NULL", true
	case bool:
		return strconv.FormatBool(x), true
	case int64:
		return "CAST(" + strconv.FormatInt(x, 10) + " AS BIGINT)", true
	case float64:
		return "CAST('" + duckfmt.Formatter{}.Text(x, duckfmt.Type{Kind: duckfmt.Double}) + "' AS DOUBLE)", true
	case string:
		// A bound VARCHAR may hold these, a statement's text not: DuckDB's
		// parser ends the text at a NUL and refuses invalid UTF-8.
		if !utf8.ValidString(x) || strings.ContainsRune(x, 0) {
			return "", false
		}
		return sqltext.String(x), true
	case []byte: // DuckDB's text of a blob escapes quotes too
		return "CAST('" + duckfmt.Formatter{}.Text(x, duckfmt.Type{Kind: duckfmt.Blob}) + "' AS BLOB)", true
	case time.Time:
		return timeLiteral(x, t)
	}
	return "", false
}

// timeLiteral is the literal of the value duckdb-go binds t as to a
// parameter of type ty: a TIMESTAMPTZ of its instant (also where DuckDB
// left the type to the value), a TIMESTAMP of its UTC wall clock (both to
// the microsecond, truncated), or a DATE of its UTC day once sessionDates
// made it a UTC midnight. false for another type or a year a literal
// cannot spell.
func timeLiteral(t time.Time, ty duckdb.Type) (string, bool) {
	u := t.UTC()
	if u.Year() < 1 || u.Year() > 9999 {
		return "", false
	}
	switch ty {
	case duckdb.TYPE_TIMESTAMP_TZ, duckdb.TYPE_INVALID:
		return "TIMESTAMPTZ '" + u.Format("2006-01-02 15:04:05.999999") + "+00'", true
	case duckdb.TYPE_TIMESTAMP:
		return "TIMESTAMP '" + u.Format("2006-01-02 15:04:05.999999") + "'", true
	case duckdb.TYPE_DATE:
		if !isDate(t) {
			return "", false
		}
		return "DATE '" + u.Format(time.DateOnly) + "'", true
	}
	return "", false
}

// replaceParameters writes each parameter of q ($1, $name — the form
// DuckDB's own rendering gives every parameter) as lits names it, leaving
// literals, quoted identifiers and comments alone; false if q has a
// parameter lits does not name, or a ?.
func replaceParameters(q string, lits map[string]string) (string, bool) {
	var b strings.Builder
	for _, s := range sqltext.Lex(q) {
		if !s.Code {
			b.WriteString(s.Text)
			continue
		}
		if strings.ContainsRune(s.Text, '?') || !replaceCodeParameters(&b, s.Text, lits) {
			return "", false
		}
	}
	return b.String(), true
}

// replaceCodeParameters writes code with its parameters replaced; false if
// one is not in lits.
func replaceCodeParameters(b *strings.Builder, code string, lits map[string]string) bool {
	for i := 0; i < len(code); {
		c := code[i]
		if c != '$' || i > 0 && sqltext.IdentByte(code[i-1]) {
			b.WriteByte(c)
			i++
			continue
		}
		j := i + 1
		for j < len(code) && sqltext.IdentByte(code[j]) {
			j++
		}
		lit, ok := lits[code[i+1:j]]
		if !ok {
			return false
		}
		b.WriteString(lit)
		i = j
	}
	return true
}
