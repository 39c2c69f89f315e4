package plan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOnlyQueriesRun(t *testing.T) {
	e := testSession(t, nil)
	for _, q := range []string{
		`DROP TABLE x`, `SELECT 1; SELECT 2`, `COPY (SELECT 1) TO '/tmp/x.csv'`, `ATTACH 'x.db'`,
		`SELECT * FROM read_parquet('/etc/passwd')`, `SELECT * FROM '/tmp/x.parquet'`, `SELECT * FROM glob('/*')`,
		`SELECT * FROM meter_hot_scan('x')`, `CREATE TABLE t AS SELECT 1`, `SET threads = 1`, `PRAGMA version`,
		`SELECT * FROM other_table`, `INSTALL postgres`,
	} {
		_, err := planThrough(t, e, q, "gate")
		require.ErrorIs(t, err, ErrNotAQuery, q)
	}
}

// TestGateLetsThroughWhatASessionReads: CTEs, browsable catalogs, the
// allowed table functions and the session's own relations pass the gate.
func TestGateLetsThroughWhatASessionReads(t *testing.T) {
	e := testSession(t, nil)
	for _, q := range []string{
		`WITH other_table AS (SELECT 1) SELECT * FROM other_table`,
		`SELECT * FROM information_schema.tables`,
		`SELECT * FROM range(3), main.readings, readings_versions`,
		`SELECT * FROM system.tables`,
		`SELECT * FROM meter_completeness('2025-01-01', '2025-01-02')`,
	} {
		_, err := planThrough(t, e, q, "gate")
		require.NoError(t, err, q)
	}
	_, err := planThrough(t, e, `SELECT * FROM other.main.readings`, "gate")
	require.ErrorIs(t, err, ErrNotAQuery)
	require.ErrorContains(t, err, "other databases")
}
