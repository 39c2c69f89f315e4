package ingest_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/metering"
)

// Parquet columns in DuckDB's own types — TIMESTAMPTZ instants, DECIMAL
// values and versions, a TIMESTAMPTZ recorded_at — are taken as the values
// they are, and keep the rules their text would meet: more decimals than
// the column holds refuse the batch (never rounded), a null instant is an
// empty column (a batch of its own: it has no month), a row that does not
// parse names its batch by its balancing month. The same readings as CSV
// text are the same rows (duplicates).
func TestParquetTypedColumnsKeepTheirValuesAndRules(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	dir := t.TempDir()
	pq := parquetFrom(t, st, filepath.Join(dir, "typed.parquet"), `
		SELECT malo_id, '`+obisIn+`' AS obis_code, 'STROM' AS sparte,
		       CASE WHEN malo_id = '`+maloB+`' AND i = 2 THEN NULL
		            ELSE TIMESTAMPTZ '2026-03-18 00:00:00+00' + to_minutes(15 * i) END AS "from",
		       TIMESTAMPTZ '2026-03-18 00:15:00+00' + to_minutes(15 * i) AS "to",
		       CASE WHEN malo_id = '41738291058' AND i = 1 THEN CAST('0.0000001' AS DECIMAL(20,8))
		            ELSE CAST('123456789012.654321' AS DECIMAL(20,8)) - i END AS value,
		       'KWH' AS unit, 'MEASURED' AS quality,
		       CAST(20260319000001 AS DECIMAL(20,0)) AS version, '`+op+`' AS operator,
		       TIMESTAMPTZ '2026-03-19 10:00:00.123456+01' AS recorded_at
		FROM (VALUES ('`+maloA+`'), ('`+maloB+`'), ('`+badMalo+`'), ('41738291058')) m(malo_id), range(4) r(i)
		ORDER BY malo_id, i`)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, pq)
	require.NoError(t, err)
	require.Equal(t, 5, rep.Batches)
	require.Len(t, rep.Refused, 3, rep.String())
	refused := map[string]ingest.Refusal{}
	for _, r := range rep.Refused {
		refused[r.Batch] = r
	}
	scope := ", obis_code " + obisIn + ", version_scope " + op + ":2026-03"
	bad, ok := refused["malo_id "+badMalo+scope]
	require.True(t, ok, "%v", rep.Refused)
	require.Equal(t, "row 5, column malo_id", bad.Where)
	null, ok := refused["malo_id "+maloB+", obis_code "+obisIn+", version_scope "+op+":"]
	require.True(t, ok, "%v", rep.Refused)
	require.Equal(t, "row 15, column from", null.Where)
	require.Contains(t, null.Error(), "from is empty")
	fine, ok := refused["malo_id 41738291058"+scope]
	require.True(t, ok, "%v", rep.Refused)
	require.ErrorIs(t, fine, metering.ErrInvalid)
	require.Contains(t, fine.Error(), "0.0000001")

	require.Equal(t, 7, rep.Inserted, "maloA's 4 rows, maloB's 3 with a from")
	require.Zero(t, rep.Stamped, "every row carried its recorded_at")
	require.Equal(t, "493827156044.617284", decimalOf(t, scalar(t, st, `SELECT sum(value) FROM readings WHERE malo_id = $1`, maloA)),
		"4 × 123456789012.654321 − (0 + 1 + 2 + 3)")
	rec := scalar(t, st, `SELECT any_value(recorded_at) FROM readings`).(time.Time)
	require.True(t, rec.Equal(time.Date(2026, 3, 19, 9, 0, 0, 123456000, time.UTC)), "%s", rec)
	require.Equal(t, "20260319000001", scalar(t, st, `SELECT CAST(any_value(version) AS VARCHAR) FROM readings`))

	lines := append([]string{header + ",recorded_at"}, quarterHours(maloA, hotDay, 4, "20260319000001", func(i int) string {
		return []string{"123456789012.654321", "123456789011.654321", "123456789010.654321", "123456789009.654321"}[i]
	})...)
	for i := range lines[1:] {
		lines[i+1] += ",2026-03-19T10:00:00.123456+01:00"
	}
	again, err := ingest.Files(ctx, st.Store, ingest.Options{}, writeFile(t, dir, "same.csv", lines...))
	require.NoError(t, err)
	require.True(t, again.OK(), again.String())
	require.Equal(t, 4, again.Duplicate, "the CSV text of the same readings is the same rows")
}
