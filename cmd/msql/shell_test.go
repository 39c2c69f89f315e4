package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const scratchQuery = `SELECT 1 AS id, 'Zähler|1' AS name, NULL::VARCHAR AS note, 12.5::DECIMAL(9,3) AS kwh, DATE '2026-03-29' AS day,
  meter_local_day(TIMESTAMPTZ '2026-03-29 21:59:00+00') AS local_day
UNION ALL SELECT 2, 'b', 'x', NULL, NULL, NULL ORDER BY id`

func TestScratchFormats(t *testing.T) {
	for _, format := range formats {
		t.Run("format="+format, func(t *testing.T) {
			r := msql(t, "", "--scratch", "--format", format, "-c", scratchQuery)
			require.Equal(t, 0, r.code, r.stderr)
			require.Empty(t, r.stderr)
			golden(t, "scratch_"+format, r.stdout)
		})
	}
}

// .help names every output format .mode and .format take.
func TestHelpListsEveryFormat(t *testing.T) {
	r := msql(t, "", "--scratch", "-c", ".help")
	require.Equal(t, 0, r.code, r.stderr)
	for _, cmd := range []string{".mode ", ".format "} {
		i := strings.Index(r.stdout, cmd)
		require.GreaterOrEqual(t, i, 0, r.stdout)
		line, _, _ := strings.Cut(r.stdout[i:], "\n")
		require.Contains(t, line, "("+strings.Join(formats, " ")+")", line)
	}
}

func TestScratchDefaultIsCSVOffTerminal(t *testing.T) {
	r := msql(t, "", "--scratch", "-c", "SELECT 1 AS a", "-c", "SELECT 'x' AS b; SELECT 2 AS c")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "a\n1\nb\nx\nc\n2\n", r.stdout)
}

func TestScratchScriptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script.sql")
	require.NoError(t, os.WriteFile(path, []byte(`-- a script
.mode markdown
SELECT 'a;b' AS "semi;colon",
       $$dollar ; quoted$$ AS d;
.mode csv
SELECT meter_gas_day(TIMESTAMPTZ '2025-10-25 05:00:00+00') AS gas_day -- last one without semicolon
`), 0o644))
	r := msql(t, "", "--scratch", "-f", path)
	require.Equal(t, 0, r.code, r.stderr)
	golden(t, "scratch_file", r.stdout)
}

func TestScratchStdin(t *testing.T) {
	r := msql(t, "SELECT 41 + 1 AS answer;\nSELECT obis_normalise('1-0:1.8.0*255') AS obis;\n", "--scratch", "--format", "jsonl")
	require.Equal(t, 0, r.code, r.stderr)
	golden(t, "scratch_stdin", r.stdout)
}

func TestScratchOutputFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.csv")
	r := msql(t, "", "--scratch", "-o", out, "-c", "SELECT 1 AS a")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stdout)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, "a\n1\n", string(b))
}

// A failing statement stops the script: exit status 1, DuckDB's error on
// stderr, later statements not run.
func TestScratchFailingStatement(t *testing.T) {
	r := msql(t, "SELECT 1 AS before;\nSELECT quality_is_billable('GOOD');\nSELECT 2 AS after;\n", "--scratch")
	require.Equal(t, 1, r.code)
	require.Equal(t, "before\n1\n", r.stdout)
	golden(t, "scratch_failing_stderr", r.stderr)
}

func TestUsageErrors(t *testing.T) {
	r := msql(t, "", "--scratch", "--format", "xml", "-c", "SELECT 1")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `unknown format "xml"`)

	r = msql(t, "", "bogus")
	require.Equal(t, 2, r.code)
	golden(t, "unknown_command_stderr", r.stderr)

	r = msql(t, "", "--dsn", "postgres://x@127.0.0.1:1/x")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "Try: msql --dsn postgres://… --warehouse file:///…")
}

// Global flags may come before the subcommand: msql --dsn … demo --help is
// demo's help, not the shell's.
func TestGlobalFlagsBeforeSubcommand(t *testing.T) {
	r := msql(t, "", "--dsn", "postgres://x@127.0.0.1:1/x", "--warehouse=file:///nowhere", "--keep-running", "demo", "--help")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "msql demo [--malos N]")

	r = msql(t, "", "--format", "csv", "bogus")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `unknown command "bogus"`)
}

// --version names the module's version and DuckDB's.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := msql(t, "", args...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Regexp(t, `^msql \S+ \(go1\.\d+`, r.stdout)
		require.Contains(t, r.stdout, "\nDuckDB v1.5.5 (")
		require.Contains(t, r.stdout, "through duckdb-go v2.10505.0\n")
	}
}

// Every subcommand has --help; those that work on a deployment take its flags.
func TestEverySubcommandHasHelp(t *testing.T) {
	noDeployment := map[string]bool{"install-extensions": true, "stop": true}
	for _, name := range commandNames() {
		if name == "version" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			r := msql(t, "", name, "--help")
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stderr, "msql "+name)
			if !noDeployment[name] {
				require.Contains(t, r.stderr, "-dsn")
			}
		})
	}
}
