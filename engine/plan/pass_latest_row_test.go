package plan

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLatestRowRelationMatchesDistinctOn: over generated halves split at a
// watermark — keys in both halves, in the cold half only, in the hot half
// only, ties on "from", NULL keys — each latest-row statement answers the
// same over the relation latestRowRelation renders as over cold UNION ALL hot.
func TestLatestRowRelationMatchesDistinctOn(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`CREATE TABLE g AS
		SELECT CASE WHEN m = 7 THEN NULL ELSE 'M' || m END AS malo_id, '1-0:' || (o + 1) || '.29.0' AS obis_code,
			TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_minutes((q * 15)::BIGINT) AS "from",
			hash(m, o, q) % 1000 AS value, DATE '2026-01-01' + (q // 96)::INTEGER AS balancing_day
		FROM range(8) a(m), range(3) b(o), range(0, 480) c(q)
		-- MaLo 0 stops before the watermark (day 4), MaLo 1 starts after it; obis 3 thins out
		WHERE NOT (m = 0 AND q >= 384) AND NOT (m = 1 AND q < 384) AND NOT (o = 2 AND hash(m, q) % 3 = 0)`)
	require.NoError(t, err)
	const w = `TIMESTAMPTZ '2026-01-05 00:00:00+00'`
	cold := `SELECT * FROM g WHERE "from" < ` + w
	hot := `SELECT * FROM g WHERE "from" >= ` + w
	for _, c := range []struct {
		keys, cols []string
		q          string
	}{
		{[]string{"malo_id"}, []string{"malo_id", "from", "value", "obis_code"}, `SELECT DISTINCT ON (malo_id) malo_id, "from", value FROM %s ORDER BY malo_id, "from" DESC, obis_code`},
		{[]string{"malo_id", "obis_code"}, []string{"malo_id", "obis_code", "from", "value"}, `SELECT DISTINCT ON (malo_id, obis_code) malo_id, obis_code, "from", value FROM %s ORDER BY obis_code DESC, malo_id, "from" DESC`},
		{[]string{"obis_code"}, []string{"obis_code", "from", "malo_id"}, `SELECT DISTINCT ON (obis_code) obis_code, "from", malo_id FROM %s ORDER BY "from" DESC, malo_id NULLS FIRST, obis_code`},
		{[]string{"balancing_day"}, []string{"balancing_day", "from", "malo_id", "obis_code"}, `SELECT DISTINCT ON (balancing_day) balancing_day, "from", malo_id, obis_code FROM %s ORDER BY balancing_day, "from" DESC, malo_id, obis_code`},
		{[]string{"value"}, []string{"value", "from", "malo_id", "obis_code"}, `SELECT DISTINCT ON (value) value, "from", malo_id, obis_code FROM %s ORDER BY value, "from" DESC, malo_id, obis_code`},
	} {
		want, wantCols := queryAll(t, db, fmt.Sprintf(c.q, "("+cold+" UNION ALL "+hot+")"))
		got, gotCols := queryAll(t, db, fmt.Sprintf(c.q, "("+latestRowRelation(c.keys, c.cols, cold, hot)+")"))
		require.NotEmpty(t, want)
		require.Equal(t, wantCols, gotCols, c.q)
		require.Equal(t, want, got, c.q)
	}
}
