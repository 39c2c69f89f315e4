package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// msql import end to end: a CSV file and a Parquet file into a fresh
// deployment, queried; the same files again are all duplicates; a file with a
// MaLo whose check digit fails exits 5, naming the row, and its good batch
// goes in; standard input works; a bad flag exits 2 with the fix.
func TestImportCommand(t *testing.T) {
	dep := deploymentArgs(t)
	dir := t.TempDir()
	const header = "malo_id,obis_code,sparte,from,to,value,unit,quality,version,operator"
	row := func(malo, from, to, value string) string {
		return fmt.Sprintf("%s,1-0:1.29.0,STROM,%s,%s,%s,KWH,MEASURED,20260101000001,9910125000002", malo, from, to, value)
	}
	csv := filepath.Join(dir, "a.csv")
	require.NoError(t, os.WriteFile(csv, []byte(strings.Join([]string{header,
		row("41373559241", "2025-12-01T00:00:00+01:00", "2025-12-01T00:15:00+01:00", "0.1"),
		row("41373559241", "2025-12-01T00:15:00+01:00", "2025-12-01T00:30:00+01:00", "0.2"),
	}, "\n")+"\n"), 0o644))
	pq := filepath.Join(dir, "b.parquet")
	r := msql(t, "", "--scratch", "-c", `COPY (SELECT '51238696781' AS malo_id, '1-0:1.29.0' AS obis_code, 'STROM' AS sparte,
		TIMESTAMPTZ '2025-12-01 00:00:00+00' + to_minutes(15 * i) AS "from", TIMESTAMPTZ '2025-12-01 00:15:00+00' + to_minutes(15 * i) AS "to",
		CAST('1.000001' AS DECIMAL(18,6)) AS value, 'KWH' AS unit, 'MEASURED' AS quality,
		CAST(20260101000001 AS DECIMAL(20,0)) AS version, '9910125000002' AS operator FROM range(4) r(i)) TO '`+pq+`' (FORMAT parquet)`)
	require.Equal(t, 0, r.code, r.stderr)

	r = msql(t, "", append([]string{"import", "--set", "tenant=t1", csv, pq}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "imported 6 rows from 2 files (2 of 2 batches)")
	require.Contains(t, r.stdout, "6 inserted, 0 superseded, 0 shadowed, 0 duplicate")
	require.Regexp(t, `recorded_at: 6 rows stamped 20\d\d-\d\d-\d\dT[0-9:.]+Z by the store's clock, 0 carried their own`, r.stdout)
	require.Contains(t, r.stderr, "b.parquet: files 2/2 · batches 2 · rows 6")
	q := msql(t, "", append(dep, "--format", "csv", "-c", `SELECT tenant, count(*) AS n, sum(value) AS total FROM readings GROUP BY tenant`)...)
	require.Equal(t, 0, q.code, q.stderr)
	require.Equal(t, "tenant,n,total\nt1,6,4.300004\n", q.stdout)

	r = msql(t, "", append([]string{"import", "--set", "tenant=t1", csv, pq}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "6 duplicate (all already stored: nothing changed)")

	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte(strings.Join([]string{header,
		row("41373559242", "2025-12-02T00:00:00+01:00", "2025-12-02T00:15:00+01:00", "1"),
		row("41373559241", "2025-12-02T00:00:00+01:00", "2025-12-02T00:15:00+01:00", "1"),
	}, "\n")+"\n"), 0o644))
	r = msql(t, "", append([]string{"import", "--set", "tenant=t1", bad}, dep...)...)
	require.Equal(t, 5, r.code, r.stderr)
	require.Contains(t, r.stdout, "bad.csv: malo_id 41373559242, obis_code 1-0:1.29.0, version_scope 9910125000002:2025-12, tenant t1: row 1, column malo_id:")
	require.Contains(t, r.stdout, "check digit")
	require.Contains(t, r.stderr, "1 batches refused")

	stdin, err := os.ReadFile(csv)
	require.NoError(t, err)
	r = msql(t, strings.ReplaceAll(string(stdin), "0.1", "0.4"), append([]string{"import", "--set", "tenant=t2", "-"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "imported 2 rows from 1 files")

	r = msql(t, "", append([]string{"import", "--set", "tenant=t1", "--set", "tenat=t2", csv}, dep...)...)
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "--set tenat: table readings_versions has no such column")
	require.Empty(t, r.stdout, "a bad command line imports nothing and prints no report")

	r = msql(t, "", append([]string{"import", "--set", "tenant=t1", filepath.Join(dir, "missing.csv")}, dep...)...)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "missing.csv: no such file or directory")
	require.Empty(t, r.stdout, "nothing read: no report")

	r = msql(t, "", append([]string{"import", "--format", "xls", csv}, dep...)...)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "Try: --format csv")
	r = msql(t, "", "import", "--help")
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stderr, "Examples:")
}

// An unknown --format is a bad command line whose message says which value
// is wrong and which are right, in words — no error category in the middle
// of the sentence.
func TestImportUnknownFormat(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "a.xml")
	require.NoError(t, os.WriteFile(csv, []byte("<readings/>\n"), 0o644))
	r := msql(t, "", "import", "--format", "xml", csv)
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, `msql: usage: --format xml: not a format msql import reads; use mscons, csv or parquet, or leave --format out to tell each file's format from its content`)
	require.NotContains(t, r.stderr, "import options")
	require.Contains(t, r.stderr, "Try: --format csv")
	require.Empty(t, r.stdout)
}
