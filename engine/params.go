package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/meterstore/meterstore/internal/duckstream"
)

// AmbiguousDateError refuses a time.Time argument of a DATE parameter whose
// day in its own location is not its day in the session's time zone: a
// time.Time of a DATE parameter is read as its day in the session's zone (as
// DuckDB casts an instant to a date), and a value naming another day in its
// own zone cannot be told apart. Pass the day as a string, or a time.Time in
// the session's zone.
type AmbiguousDateError = duckstream.AmbiguousDateError

// Params are values for a statement's parameters by name: "malo" binds $malo,
// "1" binds $1 (and the first ?). Given as the only argument of Query, Rows,
// Cursor, Stream, Describe or Explain, they bind exactly the parameters the
// statement uses, as DuckDB's parser names them: a value the statement does
// not use is left out, and a parameter without a value is refused with a
// *ParamError — never bound to another parameter's value by position. A job
// holding a set of named values (a shell's .param, a report's settings) runs
// any statement over them.
type Params map[string]any

// ParamError is a parameter of the statement that Params cannot bind.
type ParamError struct {
	Name string // the parameter without a value: "malo", or "2" for $2
	// Gap: numbered parameters must run from $1; Name is used but $Gap is not.
	Gap string
}

func (e *ParamError) Error() string {
	switch {
	case e.Gap != "":
		return fmt.Sprintf("the statement uses $%s but not $%s", e.Name, e.Gap)
	case isNumbered(e.Name):
		return fmt.Sprintf("the statement uses $%s (or ?), which is not set", e.Name)
	}
	return fmt.Sprintf("the statement uses $%s, which is not set", e.Name)
}

func isNumbered(name string) bool {
	_, err := strconv.Atoi(name)
	return err == nil
}

// Parser is a DuckDB handle that parses statements: a *sql.DB or *sql.Conn.
type Parser interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// bind returns the arguments for the parameters q uses, in the form DuckDB
// binds them: numbered ones positionally, in order, named ones by name. A
// statement DuckDB cannot parse gets no arguments: running it reports why.
func (ps Params) bind(ctx context.Context, db Parser, q string) ([]any, error) {
	if !strings.ContainsAny(q, "$?") {
		return nil, nil
	}
	used, err := parameterNames(ctx, db, q)
	if err != nil || len(used) == 0 {
		return nil, nil
	}
	return ps.bindNames(used)
}

// bindNames returns the arguments for the parameters used, named as DuckDB's
// parser lists them, in their order (see bind).
func (ps Params) bindNames(used []string) ([]any, error) {
	if len(used) == 0 {
		return nil, nil
	}
	args := make([]any, 0, len(used))
	for i, name := range used {
		v, ok := ps[name]
		if !ok {
			return nil, &ParamError{Name: name}
		}
		if !isNumbered(name) {
			args = append(args, sql.Named(name, v))
			continue
		}
		if want := strconv.Itoa(i + 1); name != want {
			return nil, &ParamError{Name: name, Gap: want}
		}
		args = append(args, v)
	}
	return args, nil
}

// parameterNames lists the parameters of q as DuckDB's parser sees them: the
// names of $name, the numbers of $1 and ?, in their order.
func parameterNames(ctx context.Context, db Parser, q string) ([]string, error) {
	var out string
	if err := db.QueryRowContext(ctx, "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR", q).Scan(&out); err != nil {
		return nil, err
	}
	var tree struct {
		Statements []struct {
			Params []struct {
				Key   string `json:"key"`
				Value int    `json:"value"`
			} `json:"named_param_map"`
		} `json:"statements"`
	}
	if err := json.Unmarshal([]byte(out), &tree); err != nil || len(tree.Statements) != 1 {
		return nil, err
	}
	ps := tree.Statements[0].Params
	sort.Slice(ps, func(i, j int) bool { return ps[i].Value < ps[j].Value })
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Key
	}
	return names, nil
}

// BindArgs returns args as the engine binds them to q: Params, given as the
// only argument, become the arguments of the parameters q uses (see Params);
// other arguments are returned as they are. Rows, Query and the rest bind so
// themselves, from the parse planning makes; BindArgs is for running q on a
// DuckDB without the engine. db only parses q.
func BindArgs(ctx context.Context, db Parser, q string, args []any) ([]any, error) {
	ps, ok := onlyParams(args)
	if !ok {
		return args, nil
	}
	return ps.bind(ctx, db, q)
}

// onlyParams is args' Params when they are its only argument.
func onlyParams(args []any) (Params, bool) {
	if len(args) != 1 {
		return nil, false
	}
	ps, ok := args[0].(Params)
	return ps, ok
}
