package main

import (
	"encoding/csv"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// everyType is one row holding a value of each type an analyst meets, with
// the awkward ones among them (a local wall-clock time, a quarter-hour, a
// decimal's trailing zeros, infinity, nested values).
const everyType = `SELECT
  TIMESTAMPTZ '2026-03-29 00:30:00.5+00' AS instant,
  TIMESTAMPTZ '2026-03-29 00:30:00+00' AT TIME ZONE 'Europe/Berlin' AS berlin_wall_clock,
  TIMESTAMP '2026-01-01 12:00:00.123' AS naive,
  TIMESTAMP_NS '2026-01-01 12:00:00.123456789' AS naive_ns,
  DATE '2026-03-29' AS day,
  TIME '06:00' AS gas_day_start,
  TIMETZ '06:00:00+02' AS with_offset,
  INTERVAL 15 MINUTE AS quarter_hour,
  INTERVAL '1 month 2 days 25 hours' AS mixed_interval,
  1.5::DECIMAL(18,6) AS kwh,
  (-0.25)::DECIMAL(9,3) AS negative,
  20251027000002::DECIMAL(20,0) AS version,
  0.1::DOUBLE AS double,
  1e20::DOUBLE AS big_double,
  0.1::FLOAT AS float,
  'nan'::DOUBLE AS not_a_number,
  170141183460469231731687303715884105727::HUGEINT AS hugeint,
  uuid '0b8f1a2c-3d4e-4f50-8a6b-7c8d9e0f1a2b' AS uuid,
  '\xAA\x00ok'::BLOB AS blob,
  true AS flag,
  NULL::VARCHAR AS nothing,
  '' AS empty,
  'a, "quoted" | text' AS awkward_text,
  'infinity'::TIMESTAMP AS forever,
  [1.5::DECIMAL(18,6), NULL] AS decimals,
  ['a', 'b c', 'd,e'] AS texts,
  {'malo': '51238696781', 'at': TIMESTAMPTZ '2026-01-01 00:00:00+00'} AS record,
  MAP {'k': INTERVAL 1 DAY} AS map`

// TestValuesEveryTypeAndMode: every output mode prints each type's value as
// DuckDB does (JSON: exact numbers, ISO 8601) — goldens per mode.
func TestValuesEveryTypeAndMode(t *testing.T) {
	for _, format := range formats {
		t.Run("format="+format, func(t *testing.T) {
			r := msqlEnv(t, []string{"TZ=UTC"}, "", "--scratch", "--max-width", "0", "--format", format, "-c", everyType)
			require.Equal(t, 0, r.code, r.stderr)
			require.Empty(t, r.stderr)
			golden(t, "values_"+format, r.stdout)
		})
	}
}

// TestValuesAsDuckDBPrintsThem is the independent check through a
// deployment: the shell's CSV of each column equals DuckDB's own cast of the
// same expression to VARCHAR, row by row, for values read from both tiers.
func TestValuesAsDuckDBPrintsThem(t *testing.T) {
	dep := tinyDemo(t)
	exprs := []string{`"from"`, `"from" AT TIME ZONE 'Europe/Berlin'`, `value`, `version`, `balancing_day`,
		`"to" - "from"`, `("from" AT TIME ZONE 'Europe/Berlin')::TIME`, `value * 1000`, `[value, NULL]`,
		`{'v': value, 'at': recorded_at}`, `recorded_at`}
	var cols []string
	for i, e := range exprs {
		cols = append(cols, e+" AS v"+string(rune('a'+i)), "CAST("+e+" AS VARCHAR) AS t"+string(rune('a'+i)))
	}
	q := "SELECT " + strings.Join(cols, ", ") + ` FROM readings ORDER BY malo_id, obis_code, tenant, "from" LIMIT 300`
	r := msqlEnv(t, []string{"TZ=UTC"}, "", append(dep, "--format", "csv", "-c", q)...)
	require.Equal(t, 0, r.code, r.stderr)
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	require.NoError(t, err)
	require.Greater(t, len(recs), 100)
	wrong := map[string]string{} // the first wrong value of each column
	for _, rec := range recs[1:] {
		for i := 0; i < len(rec); i += 2 {
			if e := exprs[i/2]; rec[i] != rec[i+1] && wrong[e] == "" {
				wrong[e] = fmt.Sprintf("printed %q, DuckDB prints %q", rec[i], rec[i+1])
			}
		}
	}
	require.Empty(t, wrong)
}
