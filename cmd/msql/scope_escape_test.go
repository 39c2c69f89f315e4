package main

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScopedShellEscapes: `msql --scope tenant=tenant01` refuses, or answers
// with tenant01's rows only, every escape the engine and the servers are
// checked against — a CTE named as a warehouse file or glob, the settings
// that name paths, clauses on a replaced reference, system.* — and never
// prints another tenant's MaLo or the warehouse's location.
func TestScopedShellEscapes(t *testing.T) {
	dep := tinyDemo(t)
	wh := strings.TrimPrefix(dep[3], "file://")
	var file string
	require.NoError(t, filepath.WalkDir(wh, func(p string, d fs.DirEntry, err error) error {
		if err == nil && file == "" && strings.Contains(p, "tenant=tenant02") && strings.HasSuffix(p, ".parquet") {
			file = p
		}
		return err
	}))
	require.NotEmpty(t, file, "the demo archived tenant02's rows into %s", wh)
	others := msql(t, "", append(dep, "--format", "csv", "--no-provenance", "-c", `SELECT DISTINCT malo_id FROM readings WHERE tenant = 'tenant02'`)...)
	require.Equal(t, 0, others.code, others.stderr)
	secrets := append([]string{"tenant02", wh}, strings.Fields(strings.TrimPrefix(others.stdout, "malo_id\n"))...)
	require.Greater(t, len(secrets), 2)

	glob := wh + "/**/*.parquet"
	attempts := []string{
		`WITH "` + file + `" AS (SELECT * FROM "` + file + `") SELECT * FROM "` + file + `"`,
		`WITH "` + glob + `" AS (SELECT * FROM "` + glob + `") SELECT * FROM "` + glob + `"`,
		`WITH RECURSIVE "` + file + `" AS (SELECT * FROM "` + file + `") SELECT * FROM "` + file + `"`,
		`SELECT * FROM '` + file + `'`,
		`SELECT name, setting FROM pg_catalog.pg_settings`,
		`SELECT current_setting('allowed_directories')`,
		`SELECT * FROM duckdb_settings()`,
		`SELECT count(*), min(tenant), max(tenant) FROM readings TABLESAMPLE 5 ROWS`,
		`SELECT * FROM readings AT (VERSION => 1)`,
		`SELECT * FROM system.partitions`,
		`SELECT * FROM system.tables`,
		`SELECT DISTINCT tenant, malo_id FROM readings_versions`,
	}
	refused, answered := 0, 0
	for _, q := range attempts {
		r := msql(t, "", append(dep, "--scope", "tenant=tenant01", "--format", "csv", "-c", q)...)
		if r.code != 0 {
			refused++
			if !strings.Contains(q, wh) {
				require.NotContains(t, r.stderr, wh, "the refusal of %q names the warehouse", q)
			}
			continue
		}
		answered++
		for _, s := range secrets {
			require.NotContains(t, r.stdout, s, "leak through %q in a scoped shell", q)
		}
	}
	t.Logf("msql --scope: %d refused, %d answered with tenant01's rows only", refused, answered)
	require.Positive(t, answered, "a scoped shell still answers its own tenant")
}
