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
	all := []string{"malo_id", "obis_code", "from", "value", "balancing_day"}
	for _, c := range []struct {
		keys, cols []string
		q          string
	}{
		{[]string{"malo_id"}, []string{"malo_id", "from", "value", "obis_code"}, `SELECT DISTINCT ON (malo_id) malo_id, "from", value FROM %s ORDER BY malo_id, "from" DESC, obis_code`},
		{[]string{"malo_id", "obis_code"}, []string{"malo_id", "obis_code", "from", "value"}, `SELECT DISTINCT ON (malo_id, obis_code) malo_id, obis_code, "from", value FROM %s ORDER BY obis_code DESC, malo_id, "from" DESC`},
		{[]string{"obis_code"}, []string{"obis_code", "from", "malo_id"}, `SELECT DISTINCT ON (obis_code) obis_code, "from", malo_id FROM %s ORDER BY "from" DESC, malo_id NULLS FIRST, obis_code`},
		{[]string{"balancing_day"}, []string{"balancing_day", "from", "malo_id", "obis_code"}, `SELECT DISTINCT ON (balancing_day) balancing_day, "from", malo_id, obis_code FROM %s ORDER BY balancing_day, "from" DESC, malo_id, obis_code`},
		{[]string{"value"}, []string{"value", "from", "malo_id", "obis_code"}, `SELECT DISTINCT ON (value) value, "from", malo_id, obis_code FROM %s ORDER BY value, "from" DESC, malo_id, obis_code`},
		// a WHERE of the keys alone, a star
		{[]string{"malo_id"}, []string{"malo_id", "from", "value", "obis_code"}, `SELECT DISTINCT ON (malo_id) malo_id, "from", value FROM %s
			WHERE malo_id IN ('M0', 'M1', 'M2', 'M9') OR malo_id IS NULL ORDER BY malo_id, "from" DESC, obis_code`},
		{[]string{"malo_id", "obis_code"}, all, `SELECT DISTINCT ON (malo_id, obis_code) * FROM %s
			WHERE malo_id > 'M0' AND obis_code LIKE '%%3%%' OR malo_id = 'M0' ORDER BY malo_id, obis_code, "from" DESC`},
		{[]string{"obis_code"}, all, `SELECT DISTINCT ON (obis_code) * FROM %s WHERE obis_code <> '1-0:2.29.0' ORDER BY "from" DESC, malo_id, obis_code`},
	} {
		want, wantCols := queryAll(t, db, fmt.Sprintf(c.q, "("+cold+" UNION ALL "+hot+")"))
		got, gotCols := queryAll(t, db, fmt.Sprintf(c.q, "("+latestRowRelation(c.keys, c.cols, cold, hot)+")"))
		require.NotEmpty(t, want)
		require.Equal(t, wantCols, gotCols, c.q)
		require.Equal(t, want, got, c.q)
	}
	// A WHERE on another column beside the keys is why only the keys' own
	// WHERE is taken: where it drops every hot row of a MaLo ("from", the
	// balancing day — or a quality the hot week's rows lack), the anti join
	// has already dropped that MaLo's cold rows, and its latest row is lost.
	for _, q := range []string{
		`SELECT DISTINCT ON (malo_id) malo_id, "from", value FROM %s WHERE "from" < ` + w + ` ORDER BY malo_id, "from" DESC, obis_code`,
		`SELECT DISTINCT ON (malo_id) malo_id, "from", value FROM %s WHERE malo_id IN ('M2', 'M3') AND balancing_day < DATE '2026-01-05' ORDER BY malo_id, "from" DESC, obis_code`,
	} {
		want, _ := queryAll(t, db, fmt.Sprintf(q, "("+cold+" UNION ALL "+hot+")"))
		got, _ := queryAll(t, db, fmt.Sprintf(q, "("+latestRowRelation([]string{"malo_id"}, all, cold, hot)+")"))
		require.NotEmpty(t, want)
		require.NotEqual(t, want, got, "taken, %s would answer wrong", q)
	}
}
