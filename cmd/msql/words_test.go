package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
)

// The shell as a user meets it: EXPLAIN typed as SQL prints the plan whole
// (main printed a table cut at 40 characters), errors carry no stage words
// (main: "run: Binder Error …"), .known-at takes a TIMESTAMPTZ as msql prints
// it (main: "is not a timestamp"), and .functions lists the functions
// (main: "unknown command .functions").
func TestShellInTheUsersWords(t *testing.T) {
	dep := deploymentArgs(t)
	const q = `SELECT count(*) FROM readings WHERE malo_id = '51238696781'`
	dot := msql(t, "", append(dep, "--format", "table", "-c", ".explain "+q)...)
	require.Equal(t, 0, dot.code, dot.stderr)
	typed := msql(t, "", append(dep, "--format", "table", "-c", "EXPLAIN "+q)...)
	require.Equal(t, 0, typed.code, typed.stderr)
	require.Contains(t, typed.stdout, "rewritten SQL")
	token := regexp.MustCompile(`meter_hot_scan\('[0-9a-f]+'\)`)
	plan := func(s string) string { return strings.TrimSpace(token.ReplaceAllString(s, "meter_hot_scan(…)")) }
	require.Equal(t, plan(dot.stdout), plan(typed.stdout), "EXPLAIN typed as SQL prints what .explain prints")

	r := msql(t, "", append(dep, "-c", "SELECT nope FROM readings")...)
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, `msql: Binder Error: Referenced column "nope" not found`)
	require.NotContains(t, r.stderr, "run: ")

	r = msql(t, "", append(dep, "-c", ".known-at 2026-01-31 12:00:00.5+01", "-c", ".status")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "known at 2026-01-31T11:00:00Z")

	r = msql(t, "", append(dep, "--format", "csv", "-c", ".functions meter_balancing")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "name,kind,signatures,description\n")
	require.Contains(t, r.stdout, "\nmeter_balancing_day,scalar,")
	require.Contains(t, r.stdout, "\nmeter_balancing_month,scalar,")
	require.NotContains(t, r.stdout, "\nsum,")
}

// .export FILE.xlsx writes a workbook through DuckDB's excel extension,
// timestamps as the session's wall clock; read back with read_xlsx.
func TestExportXLSX(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", ".cache", "duckdb-extensions"))
	require.NoError(t, err)
	if x := os.Getenv(engine.EnvExtensionDirectory); x != "" {
		dir = x
	}
	if _, err := os.Stat(filepath.Join(dir, "installed")); err != nil {
		t.Skipf("DuckDB's excel extension is not installed in %s (go tool task extensions installs it); .export FILE.xlsx needs it", dir)
	}
	env := []string{engine.EnvExtensionDirectory + "=" + dir}
	dep := deploymentArgs(t)
	book := filepath.Join(t.TempDir(), "report.xlsx")
	r := msqlEnv(t, env, "", append(dep, "--format", "csv", "-c", ".timezone Europe/Berlin",
		"-c", `.export `+book+` SELECT range AS n, TIMESTAMPTZ '2025-10-24 22:00:00+00' + range * INTERVAL 15 MINUTE AS "from", 1.5::DECIMAL(18,6) AS kwh FROM range(3)`)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "wrote 3 rows to "+book)

	r = msql(t, "", "--scratch", "--format", "csv", "-c", "SET extension_directory = '"+dir+"'", "-c", "LOAD excel",
		"-c", "SELECT * FROM read_xlsx('"+book+"')")
	require.Equal(t, 0, r.code, r.stderr)
	_, got, _ := strings.Cut(r.stdout, "n,from,kwh\n")
	require.Equal(t, "0.0,2025-10-25 00:00:00,1.5\n1.0,2025-10-25 00:15:00,1.5\n2.0,2025-10-25 00:30:00,1.5\n", got, // a cell holds a double

		"the Berlin wall clock of 2025-10-24 22:00 UTC on: %s", r.stdout)
}
