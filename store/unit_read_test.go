package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/store"
)

// TestTypedReadRechecksSparteUnit: a stored row whose unit does not belong to
// its Sparte (written around the store into a table an earlier build created
// without the unit_of_sparte CHECK: M3 is a unit) is refused by the typed
// read, not returned as electricity in cubic metres, and reported by
// UnitPairViolations (msql verify).
func TestTypedReadRechecksSparteUnit(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	_, err := e.st.Append(e.ctx, mk(t, dl{from: day0.Add(72 * 3600e9), value: "1"}))
	require.NoError(t, err)
	require.EqualValues(t, 4, wrongPairAroundTheStore(t, e, day0.Add(72*time.Hour), day0.Add(96*time.Hour)))
	_, err = e.st.Series(maloA).Collect(e.ctx)
	require.Error(t, err, "STROM in M3")
	require.Contains(t, err.Error(), "sparte STROM")
	tbl, _ := e.st.Table("readings_versions")
	v, err := tbl.UnitPairViolations(e.ctx)
	require.NoError(t, err)
	requireFourElectricityRowsInM3(t, v, false)
}

// TestUnitPairViolationsFindAForeignFile: a file another writer added to the
// cold tier with electricity in m³ — which no write path of the store lets in
// — is summed with kWh by every SQL read; UnitPairViolations (msql verify)
// names the pair, its rows, the tier and the unit the sparte takes.
func TestUnitPairViolationsFindAForeignFile(t *testing.T) {
	e, tbl := archivedTwoDays(t)
	v, err := tbl.UnitPairViolations(e.ctx)
	require.NoError(t, err)
	require.Empty(t, v)
	before := dec(t, e.scalar(t, `SELECT sum(value) FROM readings WHERE sparte = 'STROM'`))
	addDuckDBFile(t, e, tbl, "foreign-m3.parquet", `* REPLACE ('M3' AS unit)`, watermarkProps(t, e, tbl))
	after := dec(t, e.scalar(t, `SELECT sum(value) FROM readings WHERE sparte = 'STROM'`))
	require.True(t, after.GreaterThan(before), "the foreign rows are summed with kWh: %s, then %s", before, after)

	v, err = tbl.UnitPairViolations(e.ctx)
	require.NoError(t, err)
	requireFourElectricityRowsInM3(t, v, true)
	require.True(t, v[0].From.Equal(day0.Add(-24*time.Hour)), "from %s", v[0].From)
	require.Contains(t, v[0].String(), "4 rows in the cold tier carry sparte STROM in unit M3")
	require.Contains(t, v[0].String(), "use KWH")
}

// wrongPairAroundTheStore sets unit M3 on the STROM rows of the hot tier from
// from to to (inclusive) around the append-only trigger and the
// unit_of_sparte CHECK, as a hand repair or a foreign writer into a table an
// earlier build created without the CHECK would, and returns the rows set.
func wrongPairAroundTheStore(t *testing.T, e *env, from, to time.Time) int64 {
	t.Helper()
	tx, err := e.pool.Begin(e.ctx)
	require.NoError(t, err)
	defer tx.Rollback(e.ctx) //nolint:errcheck
	_, err = tx.Exec(e.ctx, `SET LOCAL session_replication_role = replica`)
	require.NoError(t, err)
	_, err = tx.Exec(e.ctx, `ALTER TABLE readings_versions DROP CONSTRAINT unit_of_sparte`)
	require.NoError(t, err)
	tag, err := tx.Exec(e.ctx, `UPDATE readings_versions SET unit = 'M3' WHERE "from" BETWEEN $1 AND $2`, from, to)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(e.ctx))
	return tag.RowsAffected()
}

// TestUnitPairViolationsFindAWrongPairArchived: hot rows in a pair their
// Sparte cannot have, archived — archival copies the hot tier as it is — go
// into a file the encoder writes without its unit-pair mark, so
// UnitPairViolations reads that file and reports them in the cold tier; the
// files whose rows all passed carry the mark.
func TestUnitPairViolationsFindAWrongPairArchived(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	_, err := e.st.Append(e.ctx, mkDays(t, day0, 2, "1")...)
	require.NoError(t, err)
	set := wrongPairAroundTheStore(t, e, day0.Add(24*time.Hour), day0.Add(24*time.Hour+45*time.Minute))
	require.EqualValues(t, 4, set)
	v, err := tbl.UnitPairViolations(e.ctx)
	require.NoError(t, err)
	require.Len(t, v, 1)
	require.False(t, v[0].Cold, "%s", v[0])

	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))
	files, _, err := tbl.Cold().PlanFiles(e.ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	var unchecked, checked int
	for _, f := range files {
		if f.UncheckedUnitPairs {
			unchecked++
		} else {
			checked++
		}
	}
	require.Positive(t, unchecked, "the file holding STROM in M3 goes without the mark")
	require.Positive(t, checked, "the first day's file holds allowed pairs only")
	v, err = tbl.UnitPairViolations(e.ctx)
	require.NoError(t, err)
	requireFourElectricityRowsInM3(t, v, true)
	require.True(t, v[0].From.Equal(day0.Add(24*time.Hour)), "from %s", v[0].From)
	require.True(t, v[0].To.Equal(day0.Add(24*time.Hour+45*time.Minute)), "to %s", v[0].To)
}

// TestUnitPairViolationsFindAFileOfAnOlderEncoder: a file the store's encoder
// wrote before it marked the unit pairs it checked (its footer says it
// derived the days and names a compaction, but carries no unit-pair mark) is
// read as before, and its wrong pair reported.
func TestUnitPairViolationsFindAFileOfAnOlderEncoder(t *testing.T) {
	e, tbl := archivedTwoDays(t)
	addDuckDBFile(t, e, tbl, "older-encoder.parquet", `* REPLACE ('M3' AS unit)`, watermarkProps(t, e, tbl),
		`KV_METADATA {'`+catalog.MarkCompaction+`': 'a compaction of an older encoder', '`+catalog.MarkBalancingDay+`': '`+catalog.MarkBalancingDayDerived+`'}`)
	v, err := tbl.UnitPairViolations(e.ctx)
	require.NoError(t, err)
	requireFourElectricityRowsInM3(t, v, true)

	// Read as a file on object storage is read (the Go reader), the same rows.
	store.ReadColdFilesInGo(t)
	inGo, err := tbl.UnitPairViolations(e.ctx)
	require.NoError(t, err)
	require.Equal(t, v, inGo)
}

// TestUnitPairViolationsReadOnlyFilesWithoutTheMark: a cold file whose footer
// carries the encoder's unit-pair mark is not read again — the mark is the
// proof, earned row by row as the encoder wrote the file — so a file that
// forges the mark over a wrong pair goes unreported, while the same rows in a
// file without it are found. (The mark is what narrows msql verify's read.)
func TestUnitPairViolationsReadOnlyFilesWithoutTheMark(t *testing.T) {
	e, tbl := archivedTwoDays(t)
	addDuckDBFile(t, e, tbl, "forged-mark.parquet", `* REPLACE ('M3' AS unit)`, watermarkProps(t, e, tbl),
		`KV_METADATA {'`+catalog.MarkUnitPairs+`': '`+catalog.MarkUnitPairsChecked+`'}`)
	files, _, err := tbl.Cold().PlanFiles(e.ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	for _, f := range files {
		require.False(t, f.UncheckedUnitPairs, "%s carries the mark", f.Path)
	}
	v, err := tbl.UnitPairViolations(e.ctx)
	require.NoError(t, err)
	require.Empty(t, v, "only files without the mark are read")
}

// requireFourElectricityRowsInM3: v reports one violation, the four STROM
// rows in M3 the tests plant, in the cold tier or in the hot one.
func requireFourElectricityRowsInM3(t *testing.T, v []store.UnitPairViolation, cold bool) {
	t.Helper()
	require.Len(t, v, 1)
	require.Equal(t, meterstore.UnitPair{Sparte: "STROM", Unit: "M3"}, v[0].Pair)
	require.Equal(t, cold, v[0].Cold, "%s", v[0])
	require.EqualValues(t, 4, v[0].Rows)
}
