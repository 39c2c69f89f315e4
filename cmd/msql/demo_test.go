package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// demo --no-shell into a pgtest database loads the portfolio through the write
// path, archives all but the last week and lands late corrections in Iceberg.
func TestDemoLoadsIntoGivenDeployment(t *testing.T) {
	dep := tinyDemo(t)

	// Shape: four Sparten, two tenants, both tiers, corrections below the watermark.
	r := msql(t, "", append(dep, "--format", "csv", "-c",
		`SELECT sparte, count(DISTINCT malo_id) > 0 AS present, count(DISTINCT tenant) AS tenants FROM readings GROUP BY ALL ORDER BY ALL`)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "sparte,present,tenants\nGAS,true,1\nSTROM,true,2\nWAERME,true,1\nWASSER,true,1\n", r.stdout)

	r = msql(t, "", append(dep, "--format", "table", "-c", `SELECT count(*) > 0 AS has_rows FROM readings`)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "tiers cold+hot", "the watermark sits inside the data")

	r = msql(t, "", append(dep, "--format", "csv", "-c", `.mode historical`, "-c",
		`SELECT count(*) > 0 AS corrected_in_iceberg FROM readings WHERE version % 1000000 > 1`)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "corrected_in_iceberg\ntrue\n")

	// A second demo into the same database is refused: it holds MeterStore
	// tables. The deployment flags come first here, as global flags.
	r = msql(t, "", append(dep, "demo", "--no-shell", "--malos", "4", "--days", "10")...)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "refusing to load the demo")
	require.Contains(t, r.stderr, "Try: point --dsn at an empty database")
}

// The shell over a real deployment: provenance under results, dot-commands,
// and Ctrl-C cancelling a query that streams from PostgreSQL.
func TestInteractiveOverDeployment(t *testing.T) {
	dep := tinyDemo(t)
	tm := startTerm(t, t.TempDir(), dep...)
	tm.expect("mode unified", 60*time.Second)
	tm.expect("msql> ", 5*time.Second)

	tm.send("SELECT count(DISTINCT tenant) AS tenants FROM readings;\r")
	tm.expect("tenants", 20*time.Second)
	tm.expect("\x1b[2mwatermark ", 5*time.Second)
	tm.expect("tiers cold+hot", 5*time.Second)

	tm.send(".watermark\r")
	tm.expect("readings_versions", 10*time.Second)
	tm.send(".mode operational\r")
	tm.expect("mode operational", 5*time.Second)
	tm.send("SELECT count(*) > 0 AS hot FROM readings;\r")
	tm.expect("tiers hot", 20*time.Second)
	tm.send(".provenance off\r.mode unified\r")
	tm.expect("mode unified", 5*time.Second)

	tm.send("SELECT count(*) FROM readings a, readings b, readings c WHERE a.value + b.value > c.value;\r")
	time.Sleep(2 * time.Second)
	tm.send("\x03")
	tm.expect("statement cancelled", 30*time.Second)
	tm.send("SELECT 'alive' AS state;\r")
	tm.expect("alive", 20*time.Second)
	tm.expect("(1 row)", 5*time.Second)
	tm.exit()
	require.False(t, strings.Contains(tm.out.String(), "panic"))
}
