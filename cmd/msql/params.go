package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// params are the shell's statement parameters. `.param set malo 51238696781`
// makes $malo in every later statement the text 51238696781, bound by DuckDB
// as a prepared statement's parameter — never pasted into the SQL, so a value
// copied from a message cannot change what the statement does. DuckDB casts
// the text to the type the statement needs where it is used ("from" >= $start
// reads it as a TIMESTAMPTZ, value > $kwh as a DECIMAL). Numbered names bind
// $1, $2, …; a statement uses named or numbered parameters, not both.
//
// This is psql's \set with prepared-statement binding instead of psql's
// textual :'name' interpolation, and DuckDB's SET VARIABLE without the
// getvariable() call (a SET is not a query, and the engine runs queries only).
type params map[string]string

var paramName = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*|[1-9][0-9]*)$`)

func (sh *shell) dotParam(args []string, rest string) error {
	sub := "list"
	if len(args) > 0 {
		sub = args[0]
	}
	switch sub {
	case "list":
		t := table{columns: []string{"name", "value"}, types: []string{"VARCHAR", "VARCHAR"}}
		for _, n := range sh.params.names() {
			t.rows = append(t.rows, []any{"$" + n, sh.params[n]})
		}
		return sh.p.print(t, "", 0)
	case "set":
		if len(args) < 3 {
			return errors.New(".param set takes NAME VALUE, e.g. .param set malo 51238696781")
		}
		name := strings.TrimPrefix(args[1], "$")
		if !paramName.MatchString(name) {
			return fmt.Errorf(".param set %s: a name is a letter or _ then letters, digits or _ (or a number, for $1)", args[1])
		}
		value := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(rest, "set")), args[1]))
		if sh.params == nil {
			sh.params = params{}
		}
		sh.params[name] = unquoteLiteral(value)
		return nil
	case "unset":
		if len(args) != 2 {
			return errors.New(".param unset takes NAME")
		}
		name := strings.TrimPrefix(args[1], "$")
		if _, ok := sh.params[name]; !ok {
			return fmt.Errorf("no parameter $%s is set", name)
		}
		delete(sh.params, name)
		return nil
	case "clear":
		sh.params = nil
		return nil
	}
	return fmt.Errorf(".param %s: use .param set NAME VALUE, .param unset NAME, .param clear or .param list", sub)
}

// unquoteLiteral reads 'text' as SQL does (a doubled quote inside is one); any other
// value is taken as it is.
func unquoteLiteral(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}

func (ps params) names() []string {
	out := make([]string, 0, len(ps))
	for n := range ps {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		a, errA := strconv.Atoi(out[i])
		b, errB := strconv.Atoi(out[j])
		if errA == nil && errB == nil {
			return a < b
		}
		return errA == nil || errB != nil && out[i] < out[j]
	})
	return out
}

// bind returns the arguments for the parameters stmt uses, which DuckDB's
// parser names: numbered ones in order, named ones by name.
func (ps params) bind(ctx context.Context, db *sql.DB, stmt string) ([]any, error) {
	if !strings.Contains(stmt, "$") && !strings.Contains(stmt, "?") {
		return nil, nil
	}
	used, err := parameters(ctx, db, stmt)
	if err != nil || len(used) == 0 {
		return nil, nil // not a query DuckDB can parse: the session reports why
	}
	var args []any
	for i, name := range used {
		v, ok := ps[name]
		if !ok {
			if _, err := strconv.Atoi(name); err == nil {
				return nil, withHint(fmt.Errorf("the statement uses $%s (or ?), which is not set", name), ".param set "+name+" VALUE")
			}
			return nil, withHint(fmt.Errorf("the statement uses $%s, which is not set", name), ".param set "+name+" VALUE")
		}
		if _, err := strconv.Atoi(name); err == nil {
			if name != strconv.Itoa(i+1) {
				return nil, withHint(fmt.Errorf("the statement uses $%s but not $%d", name, i+1), "number the parameters from $1")
			}
			args = append(args, v)
			continue
		}
		args = append(args, sql.Named(name, v))
	}
	return args, nil
}

// parameters lists the parameters of stmt as DuckDB's parser sees them: the
// names of $name, the numbers of $1 and ?, in their order.
func parameters(ctx context.Context, db *sql.DB, stmt string) ([]string, error) {
	var out string
	if err := db.QueryRowContext(ctx, "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR", stmt).Scan(&out); err != nil {
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
