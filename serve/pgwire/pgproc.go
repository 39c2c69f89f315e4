package pgwire

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/meterstore/meterstore/udf"
)

// pgFunction is one overload of a MeterStore SQL function as psql's \df
// shows it: PostgreSQL's type names for its arguments and result.
type pgFunction struct {
	name     string
	args     []string
	result   string
	volatile bool
}

// meterFunctions reads the signatures of the MeterStore functions from the
// DuckDB catalog they are registered in, so \df shows exactly what a query
// can call (every overload), not a list kept beside the registration.
func meterFunctions(ctx context.Context, db *sql.DB) ([]pgFunction, error) {
	rows, err := db.QueryContext(ctx, `SELECT function_name, parameter_types, return_type, varargs, stability
		FROM duckdb_functions() WHERE function_type = 'scalar' AND starts_with(function_name, 'meter_')`)
	if err != nil {
		return nil, fmt.Errorf("list the meter functions: %w", err)
	}
	defer rows.Close()
	names := udf.Names()
	var out []pgFunction
	for rows.Next() {
		var (
			name, result, stability string
			params                  []any
			varargs                 sql.NullString
		)
		if err := rows.Scan(&name, &params, &result, &varargs, &stability); err != nil {
			return nil, fmt.Errorf("list the meter functions: %w", err)
		}
		if !slices.Contains(names, name) {
			continue // the engine's own table functions are no part of the SQL surface
		}
		f := pgFunction{name: name, result: pgTypeName(result), volatile: stability == "VOLATILE"}
		for _, p := range params {
			f.args = append(f.args, pgTypeName(fmt.Sprint(p)))
		}
		if varargs.Valid && varargs.String != "" {
			f.args = append(f.args, "VARIADIC "+pgTypeName(varargs.String)+"[]")
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list the meter functions: %w", err)
	}
	return out, nil
}

func pgTypeName(duck string) string {
	oid, _, mod := pgTypeOf(duck)
	return formatType(oid, mod)
}

var (
	reProname = regexp.MustCompile(`(?i)p\.proname\s+operator\(pg_catalog\.~\)\s+'((?:[^']|'')*)'`)
	// reOnlyOtherKinds is \df's filter when it lists aggregates, window
	// functions, procedures or triggers but not normal functions (\dfa, \dfw,
	// \dfp, \dft): the MeterStore functions are all normal ones.
	reOnlyOtherKinds = regexp.MustCompile(`(?i)p\.prokind\s*=\s*'[apw]'|p\.prorettype\s*=\s*'pg_catalog\.trigger'`)
)

// functionList answers psql's \df and \df+ (psql 12–17): the MeterStore
// functions in schema public, filtered by the name and schema patterns psql
// sends, ordered as psql asks (schema, name, arguments).
func (sess *pgSession) functionList(ctx context.Context, q, norm string) (*staticResult, error) {
	names := []string{"Schema", "Name", "Result data type", "Argument data types", "Type", "Volatility", "Parallel",
		"Owner", "Security", "Access privileges", "Language", "Source code", "Description"}
	if strings.Contains(norm, `as "internal name"`) {
		names[11] = "Internal name" // psql 17
	}
	n := min(selectListLen(q), len(names))
	res := &staticResult{}
	for _, name := range names[:n] {
		res.cols = append(res.cols, textCol(name))
	}
	if reOnlyOtherKinds.MatchString(q) || !nspOK(q) {
		return res, nil
	}
	funcs, err := meterFunctions(ctx, sess.eng.DB())
	if err != nil {
		return nil, err
	}
	pat := reProname.FindStringSubmatch(q)
	for _, f := range funcs {
		if pat != nil && !patternMatch(pat[1], f.name) {
			continue
		}
		volatility := "immutable"
		if f.volatile {
			volatility = "volatile"
		}
		row := []any{"public", f.name, f.result, strings.Join(f.args, ", "), "func", volatility, "safe",
			sess.user, "invoker", nil, "c", f.name, nil}
		res.rows = append(res.rows, row[:n])
	}
	slices.SortStableFunc(res.rows, func(a, b []any) int {
		for _, i := range []int{0, 1, 3} {
			if i < n {
				if c := strings.Compare(fmt.Sprint(a[i]), fmt.Sprint(b[i])); c != 0 {
					return c
				}
			}
		}
		return 0
	})
	return res, nil
}
