package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// .param binds values: named and numbered, text cast where it is used, and
// never pasted into the SQL (a value that looks like SQL stays a value).
func TestParamsBindScratch(t *testing.T) {
	r := msql(t, `.param set 1 41
.param set 2 'it''s; DROP TABLE x'
SELECT $1::INTEGER + 1 AS answer, $2 AS text;
.param clear
.param set day 2026-03-29
.param set $kind GAS
.param list
SELECT meter_balancing_day(($day || ' 03:30:00+00')::TIMESTAMPTZ, $kind) AS gas_day, $day::DATE + 1 AS next;
.param unset kind
SELECT $kind;
`, "--scratch", "--format", "csv")
	require.Equal(t, 1, r.code, r.stderr)
	require.Equal(t, "answer,text\n42,it's; DROP TABLE x\nname,value\n$day,2026-03-29\n$kind,GAS\ngas_day,next\n2026-03-28,2026-03-30\n", r.stdout)
	require.Equal(t, "msql: the statement uses $kind, which is not set\nTry: .param set kind VALUE\n", r.stderr)
}

// Over a deployment a bound MaLo and instant select the same rows as the
// literals, through both tiers.
func TestParamsBindOverDeployment(t *testing.T) {
	dep := tinyDemo(t)
	r := msql(t, "", append(dep, "--format", "csv", "-c", `SELECT min(malo_id) FROM readings`)...)
	require.Equal(t, 0, r.code, r.stderr)
	malo := strings.TrimSpace(strings.Split(r.stdout, "\n")[1])
	literal := msql(t, "", append(dep, "--format", "csv", "--no-provenance", "-c",
		`SELECT count(*) AS n, sum(value) AS total FROM readings WHERE malo_id = '`+malo+`' AND "from" >= '2025-09-25 12:00:00+00'`)...)
	require.Equal(t, 0, literal.code, literal.stderr)
	bound := msql(t, "", append(dep, "--format", "csv", "--no-provenance",
		"-c", ".param set malo "+malo, "-c", ".param set from 2025-09-25 12:00:00+00",
		"-c", `SELECT count(*) AS n, sum(value) AS total FROM readings WHERE malo_id = $malo AND "from" >= $from`)...)
	require.Equal(t, 0, bound.code, bound.stderr)
	require.Equal(t, literal.stdout, bound.stdout)
	require.NotEqual(t, "n,total\n0,\n", bound.stdout)
}
