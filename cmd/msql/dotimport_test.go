package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/mscons"
)

// The shell imports as msql import does: .import with its options and
// report, and INSERT INTO readings_versions SELECT … FROM read_csv(…) through
// the same path (a refused batch named as a file's would be, exit 5); an
// INSERT into a name that is not the store's table is refused, naming it.
func TestShellImport(t *testing.T) {
	dep := deploymentArgs(t)
	dir := t.TempDir()
	const header = "malo_id,obis_code,sparte,from,to,value,unit,quality,version,operator"
	row := func(malo, from, to, value string) string {
		return fmt.Sprintf("%s,1-0:1.29.0,STROM,%s,%s,%s,KWH,MEASURED,20260101000001,9910125000002", malo, from, to, value)
	}
	a := filepath.Join(dir, "a.csv")
	require.NoError(t, os.WriteFile(a, []byte(strings.Join([]string{header,
		row("41373559241", "2025-12-01T00:00:00+01:00", "2025-12-01T00:15:00+01:00", "0.1"),
		row("41373559241", "2025-12-01T00:15:00+01:00", "2025-12-01T00:30:00+01:00", "0.2"),
	}, "\n")+"\n"), 0o644))
	b := filepath.Join(dir, "b.csv")
	require.NoError(t, os.WriteFile(b, []byte(strings.Join([]string{header,
		row("51238696781", "2025-12-01T00:00:00+01:00", "2025-12-01T00:15:00+01:00", "1.000001"),
		row("51238696781", "2025-12-01T00:15:00+01:00", "2025-12-01T00:30:00+01:00", "2"),
	}, "\n")+"\n"), 0o644))

	r := msql(t, "", append(dep, "-c", ".import --set tenant=t1 "+a)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "imported 2 rows from 1 files (1 of 1 batches)")
	require.Contains(t, r.stdout, "2 inserted, 0 superseded, 0 shadowed, 0 duplicate")

	insert := `INSERT INTO readings_versions SELECT *, 't1' AS tenant FROM read_csv('` + b + `', all_varchar = true)`
	r = msql(t, "", append(dep, "-c", insert)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "imported 2 rows from 1 files (1 of 1 batches)")
	q := msql(t, "", append(dep, "--format", "csv", "-c", `SELECT malo_id, count(*) AS n, sum(value) AS total, any_value(source_detail) AS src FROM readings GROUP BY malo_id ORDER BY malo_id`)...)
	require.Equal(t, 0, q.code, q.stderr)
	require.Equal(t, "malo_id,n,total,src\n41373559241,2,0.300000,\"{\"\"IMPORT\"\":{\"\"system\"\":\"\"a.csv\"\"}}\"\n"+
		"51238696781,2,3.000001,\"{\"\"IMPORT\"\":{\"\"system\"\":\"\"sql\"\"}}\"\n", q.stdout)

	// Again, with a column list renaming the file's columns: all duplicates.
	r = msql(t, "", append(dep, "-c", `INSERT INTO main.readings_versions (malo_id, obis_code, sparte, "from", "to", value, unit, quality, version, operator, tenant)
		SELECT *, 't1' FROM read_csv('`+b+`', all_varchar = true);`)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "2 duplicate (all already stored: nothing changed)")

	bad := strings.ReplaceAll(insert, "*, 't1'", "* REPLACE ('51238696782' AS malo_id), 't1'")
	r = msql(t, "", append(dep, "-c", bad)...)
	require.Equal(t, 5, r.code, r.stderr)
	require.Contains(t, r.stdout, "INSERT … SELECT: malo_id 51238696782, obis_code 1-0:1.29.0, version_scope 9910125000002:2025-12, tenant t1: row 1, column malo_id:")

	float := strings.ReplaceAll(insert, ", all_varchar = true", "")
	r = msql(t, "", append(dep, "-c", float)...)
	require.Equal(t, 5, r.code, r.stderr)
	require.Contains(t, r.stdout, `column "value" (value) is DOUBLE`)

	// readings names the table as the store does (its resolved view).
	r = msql(t, "", append(dep, "-c", strings.Replace(insert, "readings_versions", "readings", 1))...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "2 duplicate (all already stored: nothing changed)")
	r = msql(t, "", append(dep, "-c", `INSERT INTO meters SELECT * FROM read_csv('`+b+`')`)...)
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "INSERT INTO meters: not a table of the store (tables: readings_versions)")
	r = msql(t, "", append(dep, "-c", `INSERT INTO readings_versions VALUES (1)`)...)
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "INSERT changes data, and the relations here are read-only")
	require.Contains(t, r.stderr, "Try: readings is read-only here: rows enter through the store's write path (.import FILE")
	r = msql(t, "", append(dep, "-c", `INSERT INTO readings_versions DEFAULT VALUES`)...)
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "write INSERT INTO readings_versions [BY NAME] [(column, …)] SELECT")

	r = msql(t, "", append(dep, "--scope", "tenant=t1", "-c", ".import --set tenant=t1 "+a)...)
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "confined to tenant=t1 and never writes")
	r = msql(t, "", append(dep, "--scope", "tenant=t1", "-c", insert)...)
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "confined to tenant=t1 and never writes")

	r = msql(t, "", append(dep, "-c", ".import --help")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "--malo-of")
}

// --malo-of names the MaLo of each MeLo an MSCONS message names in LOC+172:
// without it such a message is refused naming the MeLo; with it, it goes in
// on the MaLo; a MeLo the file lacks is refused naming the file.
func TestImportMaloOf(t *testing.T) {
	dep := deploymentArgs(t)
	dir := t.TempDir()
	malo, err := metering.ParseMaloID("41373559241")
	require.NoError(t, err)
	melo, err := metering.ParseMeloID("DE0001062600000001000000022345671")
	require.NoError(t, err)
	op, err := metering.ParseBdewCode("9910125000002")
	require.NoError(t, err)
	obis, err := metering.ParseObis("1-0:1.29.0")
	require.NoError(t, err)
	version, err := metering.ParseVersion("20260101000001")
	require.NoError(t, err)
	src, err := metering.SourceManual("test")
	require.NoError(t, err)
	from := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	d := metering.Delivery{MaloID: malo, MeloID: melo, Obis: obis, Sparte: metering.SparteStrom, Unit: metering.UnitKWh,
		Scope: metering.ScopeFor(op, from, metering.SparteStrom), Version: version, Source: src, RecordedAt: from}
	for i := 0; i < 4; i++ {
		f := from.Add(time.Duration(i) * 15 * time.Minute)
		d.Intervals = append(d.Intervals, metering.Interval{From: f, To: f.Add(15 * time.Minute), Value: decimal.RequireFromString("0.5"), Quality: metering.QualityMeasured})
	}
	var buf bytes.Buffer
	require.NoError(t, mscons.Write(&buf, []metering.Delivery{d}, mscons.WriteOptions{LineBreaks: true}))
	edi := filepath.Join(dir, "melo.edi")
	require.NoError(t, os.WriteFile(edi, buf.Bytes(), 0o644))

	r := msql(t, "", append([]string{"import", "--set", "tenant=t1", edi}, dep...)...)
	require.Equal(t, 5, r.code, r.stderr)
	require.Contains(t, r.stdout, melo.String())
	require.Contains(t, r.stdout, "msql import --malo-of FILE")

	other := filepath.Join(dir, "other.csv")
	require.NoError(t, os.WriteFile(other, []byte("melo_id,malo_id\nDE0001062600000001000000022345672,51238696781\n"), 0o644))
	r = msql(t, "", append([]string{"import", "--set", "tenant=t1", "--malo-of", other, edi}, dep...)...)
	require.Equal(t, 5, r.code, r.stderr)
	require.Contains(t, r.stdout, "MeLo "+melo.String()+" is not in --malo-of "+other)

	mapping := filepath.Join(dir, "map.csv")
	require.NoError(t, os.WriteFile(mapping, []byte("Marktlokation;melo_id;malo_id\nx;"+melo.String()+";41373559241\n"), 0o644))
	r = msql(t, "", append([]string{"import", "--set", "tenant=t1", "--malo-of", mapping, edi}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr+r.stdout)
	require.Contains(t, r.stdout, "imported 4 rows from 1 files")
	q := msql(t, "", append(dep, "--format", "csv", "-c", `SELECT malo_id, melo_id, count(*) AS n FROM readings GROUP BY ALL`)...)
	require.Equal(t, 0, q.code, q.stderr)
	require.Equal(t, "malo_id,melo_id,n\n41373559241,"+melo.String()+",4\n", q.stdout)

	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("melo_id,malo_id\n"+melo.String()+",41373559241\n"+melo.String()+",51238696781\n"), 0o644))
	r = msql(t, "", append([]string{"import", "--malo-of", bad, edi}, dep...)...)
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "is mapped to MaLo 41373559241 on line 2 and to 51238696781 on line 3")
}

// An INSERT's names are read as DuckDB reads them: an unquoted name of any
// letters (lowercased), a quoted one as written, and a keyword only as a
// word of its own.
func TestParseImportInsertNames(t *testing.T) {
	ins, ok, err := parseImportInsert(`INSERT INTO main.readings_versions (Zählerstand, "Größe", malo_id) SELECT 1, 2, 3`)
	require.True(t, ok)
	require.NoError(t, err)
	require.Equal(t, importInsert{table: "readings_versions", columns: []string{"zählerstand", "Größe", "malo_id"}, query: "SELECT 1, 2, 3"}, ins)

	_, ok, _ = parseImportInsert(`INSERT INTOä SELECT 1`)
	require.False(t, ok, "INTOä is one word, not INTO")
}
