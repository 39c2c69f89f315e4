package main

import (
	"io/fs"
	"path/filepath"
	"slices"
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

// TestScopedShellDotCommands: the shell's own commands in a scoped session
// say no more than system.* does there — .snapshots (every tenant's commits)
// is refused as system.snapshots is, and .watermark does not count every
// tenant's hot partitions — while the unscoped shell shows both.
func TestScopedShellDotCommands(t *testing.T) {
	dep := tinyDemo(t)
	scopedArgs := append(slices.Clone(dep), "--scope", "tenant=tenant01")
	snapshots := msql(t, ".snapshots\n", scopedArgs...)
	require.NotEqual(t, 0, snapshots.code)
	require.Contains(t, snapshots.stderr, ".snapshots says when every tenant's writes were committed, and this session is scoped to tenant=tenant01", snapshots.stdout)
	require.NotContains(t, snapshots.stdout, "committed_at")
	watermark := msql(t, ".watermark\n", scopedArgs...)
	require.Equal(t, 0, watermark.code, watermark.stderr)
	require.Contains(t, watermark.stdout, "watermark")
	require.NotContains(t, watermark.stdout, "hot partitions")

	whole := msql(t, ".snapshots\n.watermark\n", dep...)
	require.Equal(t, 0, whole.code, whole.stderr)
	require.Contains(t, whole.stdout, "committed_at")
	require.Contains(t, whole.stdout, "hot partitions")
}
