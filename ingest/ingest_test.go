package ingest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/testkit/pgtest"
	"github.com/meterstore/meterstore/testkit/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	op      = "9910125000002"
	maloA   = "41373559241"
	maloB   = "51238696781"
	badMalo = "41373559242" // maloA with the check digit changed
	obisIn  = "1-0:1.29.0"
	header  = "malo_id,obis_code,sparte,from,to,value,unit,quality,version,operator"
)

// now is the stores' clock: the bulk path takes history up to now minus the
// settlement lag (7 days), 2026-03-13.
var now = time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)

// hotDay is within the settlement lag: imports of it go to PostgreSQL.
var hotDay = time.Date(2026, 3, 18, 0, 0, 0, 0, time.UTC)

func start(t *testing.T, mod func(*meterstore.TableSpec)) *storetest.Store {
	t.Helper()
	spec := meterstore.TableSpec{Name: "readings_versions"}
	if mod != nil {
		mod(&spec)
	}
	return storetest.Start(t, storetest.Options{Now: now}, spec.MustBuild())
}

// quarterHours writes n 15-minute rows of malo from from in the canonical
// layout (header), value(i) for the i-th.
func quarterHours(malo string, from time.Time, n int, version string, value func(i int) string) []string {
	var out []string
	for i := 0; i < n; i++ {
		f := from.Add(time.Duration(i) * 15 * time.Minute)
		out = append(out, fmt.Sprintf("%s,%s,STROM,%s,%s,%s,KWH,MEASURED,%s,%s", malo, obisIn,
			f.Format(time.RFC3339), f.Add(15*time.Minute).Format(time.RFC3339), value(i), version, op))
	}
	return out
}

func writeFile(t *testing.T, dir, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return p
}

// parquetFrom writes a Parquet file with DuckDB from a SELECT.
func parquetFrom(t *testing.T, st *storetest.Store, path, query string) string {
	t.Helper()
	_, err := st.Engine.DB().Exec("COPY (" + query + ") TO '" + path + "' (FORMAT parquet)")
	require.NoError(t, err)
	return path
}

func scalar(t *testing.T, st *storetest.Store, q string, args ...any) any {
	t.Helper()
	res, err := st.Store.Query(context.Background(), q, args...)
	require.NoError(t, err)
	require.Len(t, res.Rows, 1)
	return res.Rows[0][0]
}

func decimalOf(t *testing.T, v any) string {
	t.Helper()
	d, ok := v.(decimal.Decimal)
	require.True(t, ok, "%T %v", v, v)
	return d.StringFixed(6)
}

// A CSV file and a Parquet file go in through the routed write, their
// quantities exact to the sixth decimal; importing them again changes
// nothing and says so.
func TestCSVAndParquetGoInExactlyAndAgainAsDuplicates(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	dir := t.TempDir()
	// 0.1 + 0.2 is 0.30000000000000004 in binary floats.
	lines := append([]string{header}, quarterHours(maloA, hotDay, 4, "20260319000001", func(i int) string {
		return []string{"0.1", "0.2", "123456789012.654321", "-0.000001"}[i]
	})...)
	csv := writeFile(t, dir, "a.csv", lines...)
	pq := parquetFrom(t, st, filepath.Join(dir, "b.parquet"), `
		SELECT '`+maloB+`' AS malo_id, '`+obisIn+`' AS obis_code, 'STROM' AS sparte,
		       TIMESTAMPTZ '2026-03-18 00:00:00+00' + to_minutes(15 * i) AS "from",
		       TIMESTAMPTZ '2026-03-18 00:15:00+00' + to_minutes(15 * i) AS "to",
		       CAST('0.000007' AS DECIMAL(18,6)) * (i + 1) AS value, 'KWH' AS unit, 'MEASURED' AS quality,
		       CAST(20260319000001 AS DECIMAL(20,0)) AS version, '`+op+`' AS operator
		FROM range(96) r(i)`)

	var seen []ingest.Progress
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{Progress: func(p ingest.Progress) { seen = append(seen, p) }}, csv, pq)
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())
	require.Equal(t, 2, rep.Files)
	require.Equal(t, 2, rep.Batches)
	require.Equal(t, 100, rep.Rows)
	require.Equal(t, 100, rep.HotRows)
	require.Zero(t, rep.ColdRows)
	require.Equal(t, 100, rep.Inserted)
	require.NotEmpty(t, seen)
	last := seen[len(seen)-1]
	require.Equal(t, 2, last.Files)
	require.Equal(t, 100, last.Rows)

	require.Equal(t, "123456789012.954320", decimalOf(t, scalar(t, st, `SELECT sum(value) FROM readings WHERE malo_id = $1`, maloA)))
	require.Equal(t, "0.032592", decimalOf(t, scalar(t, st, `SELECT sum(value) FROM readings WHERE malo_id = $1`, maloB)),
		"0.000007 × (1 + … + 96) = 0.000007 × 4656")
	require.EqualValues(t, 100, scalar(t, st, `SELECT count(*) FROM readings`))
	require.Equal(t, `{"IMPORT":{"system":"a.csv"}}`, scalar(t, st, `SELECT any_value(source_detail) FROM readings WHERE malo_id = $1`, maloA))
	require.Equal(t, op+":2026-03", scalar(t, st, `SELECT any_value(version_scope) FROM readings`))

	again, err := ingest.Files(ctx, st.Store, ingest.Options{}, csv, pq)
	require.NoError(t, err)
	require.True(t, again.OK(), again.String())
	require.Equal(t, 100, again.Duplicate)
	require.False(t, again.Changed())
	require.Contains(t, again.String(), "nothing changed")
	require.EqualValues(t, 100, scalar(t, st, `SELECT count(*) FROM readings_versions`))
}

// A timestamp without an offset is refused, naming the column, unless the
// zone it is in is given; then a wall clock the zone repeats is refused too.
func TestNaiveTimestampRefusedUnlessZoneGiven(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	dir := t.TempDir()
	naive := writeFile(t, dir, "naive.csv", header,
		maloA+","+obisIn+",STROM,2026-03-18 01:00:00,2026-03-18 01:15:00,1.5,KWH,MEASURED,20260319000001,"+op)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, naive)
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1)
	require.ErrorIs(t, rep.Refused[0], ingest.ErrNaiveTimestamp)
	require.Contains(t, rep.Refused[0].Error(), "row 1, column from")
	require.Contains(t, rep.Refused[0].Error(), "--time-zone")
	require.Zero(t, rep.Rows)

	pq := parquetFrom(t, st, filepath.Join(dir, "naive.parquet"), `
		SELECT '`+maloA+`' AS malo_id, '`+obisIn+`' AS obis_code, 'STROM' AS sparte,
		       TIMESTAMP '2026-03-18 01:00:00' AS "from", TIMESTAMP '2026-03-18 01:15:00' AS "to",
		       CAST('1.5' AS DECIMAL(18,6)) AS value, 'KWH' AS unit, 'MEASURED' AS quality,
		       20260319000001 AS version, '`+op+`' AS operator`)
	rep, err = ingest.Files(ctx, st.Store, ingest.Options{}, pq)
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1)
	require.ErrorIs(t, rep.Refused[0], ingest.ErrNaiveTimestamp)
	require.Contains(t, rep.Refused[0].Error(), `column "from"`)

	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	rep, err = ingest.Files(ctx, st.Store, ingest.Options{TimeZone: berlin}, naive, pq)
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())
	require.Equal(t, 1, rep.Inserted)
	require.Equal(t, 1, rep.Duplicate, "the same reading in both files")
	from := scalar(t, st, `SELECT "from" FROM readings`).(time.Time)
	require.True(t, from.Equal(time.Date(2026, 3, 18, 0, 0, 0, 0, time.UTC)), "01:00 in Berlin in March is 00:00 UTC, got %s", from)

	twice := writeFile(t, dir, "twice.csv", header,
		maloB+","+obisIn+",STROM,2025-10-26 02:30:00,2025-10-26 02:45:00,1.5,KWH,MEASURED,20260319000001,"+op)
	rep, err = ingest.Files(ctx, st.Store, ingest.Options{TimeZone: berlin}, twice)
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1)
	require.Contains(t, rep.Refused[0].Error(), "occurs twice in Europe/Berlin")
	require.Contains(t, rep.Refused[0].Error(), "2025-10-26T02:30:00+02:00 (the first) or 2025-10-26T02:30:00+01:00 (the second)")
}

// A quantity stored as a binary float is refused, naming the column: its
// digits are not the ones the exporting system held.
func TestFloatQuantityRefused(t *testing.T) {
	st := start(t, nil)
	pq := parquetFrom(t, st, filepath.Join(t.TempDir(), "float.parquet"), `
		SELECT '`+maloA+`' AS malo_id, '`+obisIn+`' AS obis_code, 'STROM' AS sparte,
		       TIMESTAMPTZ '2026-03-18 00:00:00+00' AS "from", TIMESTAMPTZ '2026-03-18 00:15:00+00' AS "to",
		       0.1::DOUBLE AS value, 'KWH' AS unit, 'MEASURED' AS quality,
		       20260319000001 AS version, '`+op+`' AS operator`)
	rep, err := ingest.Files(context.Background(), st.Store, ingest.Options{}, pq)
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1)
	require.ErrorIs(t, rep.Refused[0], ingest.ErrFloat)
	require.Contains(t, rep.Refused[0].Error(), `column "value"`)
}

// --map renames another system's columns, --set fills the tenant of every
// row; a column the file does not know is refused with the fix.
func TestMapAndSetTenant(t *testing.T) {
	ctx := context.Background()
	st := start(t, func(s *meterstore.TableSpec) {
		s.Columns = []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}}
	})
	dir := t.TempDir()
	f := writeFile(t, dir, "export.csv",
		"Marktlokation;Kennzahl;Sparte;Beginn;Ende;Menge;Einheit;Status;Version;Netzbetreiber",
		maloA+";"+obisIn+";STROM;2026-03-18T00:00:00+01:00;2026-03-18T00:15:00+01:00;2.250;KWH;SUBSTITUTED;20260319000001;"+op)
	mapping := map[string]string{"Marktlokation": "malo_id", "Kennzahl": "obis_code", "Sparte": "sparte", "Beginn": "from",
		"Ende": "to", "Menge": "value", "Einheit": "unit", "Status": "quality", "Version": "version", "Netzbetreiber": "operator"}

	rep, err := ingest.Files(ctx, st.Store, ingest.Options{Map: mapping}, f)
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1, "the tenant is required")
	require.Contains(t, rep.Refused[0].Error(), "required columns missing: tenant")

	rep, err = ingest.Files(ctx, st.Store, ingest.Options{Map: mapping, Set: map[string]string{"tenant": "t1"}}, f)
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())
	res, err := st.Store.Query(ctx, `SELECT tenant, value, quality, "from" FROM readings`)
	require.NoError(t, err)
	require.Len(t, res.Rows, 1)
	require.Equal(t, "t1", res.Rows[0][0])
	require.Equal(t, "2.25", res.Rows[0][1].(decimal.Decimal).String())
	require.Equal(t, "SUBSTITUTED", res.Rows[0][2])
	require.True(t, res.Rows[0][3].(time.Time).Equal(time.Date(2026, 3, 17, 23, 0, 0, 0, time.UTC)))

	delete(mapping, "Netzbetreiber")
	rep, err = ingest.Files(ctx, st.Store, ingest.Options{Map: mapping, Set: map[string]string{"tenant": "t1"}}, f)
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1)
	require.Contains(t, rep.Refused[0].Error(), `column "Netzbetreiber" is not a column of table readings_versions; rename it with --map Netzbetreiber=<column>`)

	_, err = ingest.Files(ctx, st.Store, ingest.Options{Set: map[string]string{"tennant": "t1"}}, f)
	require.ErrorIs(t, err, ingest.ErrOptions)
}

// A MaLo whose check digit fails refuses its batch, naming the row, the
// column and the rule; the other batches of the file go in.
func TestBadCheckDigitRefusesOnlyItsBatch(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	one := func(i int) string { return "1" }
	lines := []string{header}
	lines = append(lines, quarterHours(maloA, hotDay, 4, "20260319000001", one)...)
	lines = append(lines, quarterHours(badMalo, hotDay, 4, "20260319000001", one)...)
	lines = append(lines, quarterHours(maloB, hotDay, 4, "20260319000001", one)...)
	f := writeFile(t, t.TempDir(), "mixed.csv", lines...)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, f)
	require.NoError(t, err)
	require.Equal(t, 3, rep.Batches)
	require.Len(t, rep.Refused, 1)
	r := rep.Refused[0]
	require.ErrorIs(t, r, metering.ErrInvalid)
	require.Equal(t, "row 5, column malo_id", r.Where)
	require.Equal(t, 4, r.Rows)
	require.Contains(t, r.Error(), "mixed.csv: malo_id "+badMalo)
	require.Contains(t, r.Error(), "check digit (BDEW Lok/Waggon procedure) is 1, not 2")
	require.Equal(t, 8, rep.Inserted)
	require.EqualValues(t, 8, scalar(t, st, `SELECT count(*) FROM readings`))
	require.EqualValues(t, 0, scalar(t, st, `SELECT count(*) FROM readings WHERE malo_id = $1`, badMalo))
}

// A year of history below what PostgreSQL holds goes straight to Iceberg in
// one commit, one file per month, the watermark moved to its end; a
// correction of it afterwards is a late correction, routed to Iceberg.
func TestHistoryGoesThroughTheBulkPath(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	dir := t.TempDir()
	tbl := st.Table()
	pq := parquetFrom(t, st, filepath.Join(dir, "2025.parquet"), `
		SELECT '`+maloA+`' AS malo_id, '`+obisIn+`' AS obis_code, 'STROM' AS sparte,
		       TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_minutes(15 * i) AS "from",
		       TIMESTAMPTZ '2025-01-01 00:15:00+00' + to_minutes(15 * i) AS "to",
		       CAST('0.25' AS DECIMAL(18,6)) AS value, 'KWH' AS unit, 'MEASURED' AS quality,
		       CAST(20260101000001 AS DECIMAL(20,0)) AS version, '`+op+`' AS operator
		FROM range(365 * 96) r(i)`)
	// A hot day already in PostgreSQL: history must end below it.
	hotRows, err := ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, dir, "hot.csv",
		append([]string{header}, quarterHours(maloB, hotDay, 4, "20260319000001", func(int) string { return "1" })...)...))
	require.NoError(t, err)
	require.Equal(t, 4, hotRows.HotRows)
	before, err := tbl.Cold.Snapshots(ctx)
	require.NoError(t, err)

	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, pq)
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())
	require.Equal(t, 365*96, rep.Rows)
	require.Equal(t, 365*96, rep.BulkRows)
	require.Equal(t, 365*96, rep.ColdRows)
	require.Zero(t, rep.HotRows)
	require.Equal(t, 1, rep.BulkCommits)
	require.Equal(t, 365*96, rep.Inserted)

	after, err := tbl.Cold.Snapshots(ctx)
	require.NoError(t, err)
	require.Len(t, after, len(before)+1, "one commit")
	w, err := st.Store.Tables()[0].Watermark(ctx)
	require.NoError(t, err)
	require.True(t, w.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), "watermark %s", w)
	inHot, err := tbl.Hot.RowsBelow(ctx, w)
	require.NoError(t, err)
	require.Zero(t, inHot)
	files, _, err := tbl.Cold.PlanFiles(ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	months := map[any]int{}
	for _, f := range files {
		months[f.Partition["from_month"]]++
	}
	require.Len(t, files, 12, "one file per month")
	require.Len(t, months, 12)
	require.Equal(t, "8760.000000", decimalOf(t, scalar(t, st, `SELECT sum(value) FROM readings WHERE malo_id = $1`, maloA)))

	// Again: all below the watermark now, every row a Duplicate in Iceberg.
	again, err := ingest.Files(ctx, st.Store, ingest.Options{}, pq)
	require.NoError(t, err)
	require.Equal(t, 365*96, again.Duplicate)
	require.Equal(t, 365*96, again.ColdRows)
	require.Zero(t, again.BulkRows)

	// A correction of a day of it at a higher version: late, to Iceberg.
	fix := writeFile(t, dir, "fix.csv", append([]string{header},
		quarterHours(maloA, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), 96, "20260201000001", func(int) string { return "0.5" })...)...)
	co, err := ingest.Files(ctx, st.Store, ingest.Options{}, fix)
	require.NoError(t, err)
	require.True(t, co.OK(), co.String())
	require.Equal(t, 96, co.ColdRows)
	require.Zero(t, co.HotRows)
	require.Equal(t, 96, co.Superseded)
	require.Equal(t, "8784.000000", decimalOf(t, scalar(t, st, `SELECT sum(value) FROM readings WHERE malo_id = $1`, maloA)))
}

// A dry run reads and checks everything, says where the rows would go, and
// writes nothing.
func TestDryRunWritesNothing(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	lines := append([]string{header}, quarterHours(maloA, hotDay, 4, "20260319000001", func(int) string { return "1" })...)
	lines = append(lines, quarterHours(badMalo, hotDay, 4, "20260319000001", func(int) string { return "1" })...)
	lines = append(lines, quarterHours(maloA, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), 4, "20260319000001", func(int) string { return "1" })...)
	f := writeFile(t, t.TempDir(), "d.csv", lines...)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{DryRun: true}, f)
	require.NoError(t, err)
	require.True(t, rep.DryRun)
	require.Len(t, rep.Refused, 1)
	require.Equal(t, 8, rep.Rows)
	require.Equal(t, 4, rep.HotRows)
	require.Equal(t, 4, rep.BulkRows)
	require.Contains(t, rep.String(), "would import 8 rows")
	require.EqualValues(t, 0, scalar(t, st, `SELECT count(*) FROM readings_versions`))
	w, err := st.Store.Tables()[0].Watermark(ctx)
	require.NoError(t, err)
	require.True(t, w.IsZero())
}
