package main

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/meterstore/meterstore/engine"
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

// args are the arguments of every statement: the parameters, of which the
// engine binds exactly those the statement uses (engine.Params).
func (ps params) args() []any {
	vals := make(engine.Params, len(ps))
	for n, v := range ps {
		vals[n] = v
	}
	return []any{vals}
}

// paramHint is the fix for a parameter the statement uses but the shell has
// no value for.
func paramHint(pe *engine.ParamError) string {
	if pe.Gap != "" {
		return "number the parameters from $1"
	}
	return ".param set " + pe.Name + " VALUE"
}
