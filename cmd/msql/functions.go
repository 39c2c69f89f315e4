package main

import (
	"strings"
)

// dotFunctions lists the SQL functions a statement can call — DuckDB's and
// the metering functions (meter_*) — one line per name, with its kinds and
// how many signatures it has. It reads duckdb_functions() on the session's
// own DuckDB handle: the catalog, not data, so it is the same for every scope.
func (sh *shell) dotFunctions(_ []string, rest string) error {
	pattern := strings.TrimSpace(rest)
	if !strings.Contains(pattern, "%") {
		pattern = "%" + pattern + "%"
	}
	rows, err := sh.duckDB().QueryContext(sh.ctx, `SELECT function_name AS name,
		string_agg(DISTINCT function_type, ', ' ORDER BY function_type) AS kind,
		count(*) AS signatures,
		coalesce(max(description), '') AS description
	FROM duckdb_functions()
	WHERE function_name ILIKE ? AND function_name NOT LIKE '\_\_%' ESCAPE '\'
	GROUP BY function_name ORDER BY function_name`, pattern)
	if err != nil {
		return err
	}
	s, err := sqlStream(rows, rows.Close)
	if err != nil {
		return err
	}
	t, err := collectStream(s)
	if err != nil {
		return err
	}
	return sh.p.print(t, "", 0)
}
