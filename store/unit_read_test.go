package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
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
	tx, err := e.pool.Begin(e.ctx)
	require.NoError(t, err)
	defer tx.Rollback(e.ctx) //nolint:errcheck
	// Around the append-only trigger, as a hand repair or a foreign writer would.
	_, err = tx.Exec(e.ctx, `SET LOCAL session_replication_role = replica`)
	require.NoError(t, err)
	_, err = tx.Exec(e.ctx, `ALTER TABLE readings_versions DROP CONSTRAINT unit_of_sparte`)
	require.NoError(t, err)
	_, err = tx.Exec(e.ctx, `UPDATE readings_versions SET unit = 'M3'`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(e.ctx))
	_, err = e.st.Series(maloA).Collect(e.ctx)
	require.Error(t, err, "STROM in M3")
	require.Contains(t, err.Error(), "sparte STROM")
	tbl, _ := e.st.Table("readings_versions")
	v, err := tbl.UnitPairViolations(e.ctx)
	require.NoError(t, err)
	require.Len(t, v, 1)
	require.Equal(t, meterstore.UnitPair{Sparte: "STROM", Unit: "M3"}, v[0].Pair)
	require.False(t, v[0].Cold)
	require.EqualValues(t, 4, v[0].Rows)
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
	require.Len(t, v, 1)
	require.Equal(t, meterstore.UnitPair{Sparte: "STROM", Unit: "M3"}, v[0].Pair)
	require.True(t, v[0].Cold)
	require.EqualValues(t, 4, v[0].Rows)
	require.True(t, v[0].From.Equal(day0.Add(-24*time.Hour)), "from %s", v[0].From)
	require.Contains(t, v[0].String(), "4 rows in the cold tier carry sparte STROM in unit M3")
	require.Contains(t, v[0].String(), "use KWH")
}
