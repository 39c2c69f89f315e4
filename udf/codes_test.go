package udf_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/metering"
)

func TestObisFunctions(t *testing.T) {
	db := openDB(t)
	type row struct {
		direction                                                                    sql.NullString
		imp, exp, reactive, lastgang, zaehlerstand, vorschub, maximum, fehler, total bool
		tariff                                                                       sql.NullInt32
		normalised                                                                   string
	}
	cases := []struct {
		code string
		want row
	}{
		{"1-0:1.8.0", row{direction: sql.NullString{String: "IMPORT", Valid: true}, imp: true, zaehlerstand: true, total: true, normalised: "1-0:1.8.0"}},
		{" 1-0:2.8.1*255 ", row{direction: sql.NullString{String: "EXPORT", Valid: true}, exp: true, zaehlerstand: true,
			tariff: sql.NullInt32{Int32: 1, Valid: true}, normalised: "1-0:2.8.1"}},
		{"1-0:1.29.0", row{direction: sql.NullString{String: "IMPORT", Valid: true}, imp: true, lastgang: true, total: true, normalised: "1-0:1.29.0"}},
		{"1-1:2.9.2*03", row{direction: sql.NullString{String: "EXPORT", Valid: true}, exp: true, vorschub: true,
			tariff: sql.NullInt32{Int32: 2, Valid: true}, normalised: "1-1:2.9.2*3"}},
		{"1-0:1.6.0", row{direction: sql.NullString{String: "IMPORT", Valid: true}, imp: true, maximum: true, total: true, normalised: "1-0:1.6.0"}},
		{"1-0:1.8.63", row{direction: sql.NullString{String: "IMPORT", Valid: true}, imp: true, zaehlerstand: true, fehler: true, normalised: "1-0:1.8.63"}},
		// Reactive: directed (quadrant convention) but reactive.
		{"1-0:3.8.0", row{direction: sql.NullString{String: "IMPORT", Valid: true}, imp: true, reactive: true, zaehlerstand: true, total: true, normalised: "1-0:3.8.0"}},
		// Gas: C is a measurand, never a direction.
		{"7-0:3.0.0", row{total: true, normalised: "7-0:3.0.0"}},
		{"7-20:99.33.17", row{tariff: sql.NullInt32{Int32: 17, Valid: true}, normalised: "7-20:99.33.17"}},
	}
	for _, c := range cases {
		t.Run("code="+c.code, func(t *testing.T) {
			var got row
			queryOne(t, db, fmt.Sprintf(`SELECT obis_direction(c), obis_is_import(c), obis_is_export(c), obis_is_reactive(c),
				obis_is_lastgang(c), obis_is_zaehlerstand(c), obis_is_vorschub(c), obis_is_maximum(c),
				obis_is_fehlerregister(c), obis_is_total_register(c), obis_tariff_register(c), obis_normalise(c)
				FROM (SELECT '%s' AS c)`, c.code),
				&got.direction, &got.imp, &got.exp, &got.reactive, &got.lastgang, &got.zaehlerstand, &got.vorschub,
				&got.maximum, &got.fehler, &got.total, &got.tariff, &got.normalised)
			require.Equal(t, c.want, got)
		})
	}
}

// TestObisOverColumn runs the functions over a column with repeated and
// mixed values, so the chunk executor and the cache see more than one row.
func TestObisOverColumn(t *testing.T) {
	db := openDB(t)
	var imports, exports, undirected, normalised int
	queryOne(t, db, `SELECT count(*) FILTER (WHERE obis_direction(c) = 'IMPORT'),
		count(*) FILTER (WHERE obis_direction(c) = 'EXPORT'),
		count(*) FILTER (WHERE obis_direction(c) IS NULL),
		count(DISTINCT obis_normalise(c))
		FROM (SELECT ['1-0:1.8.0', '1-0:2.8.0', '7-0:3.0.0', '1-0:1.8.0*255'][1 + (i % 4)::INT] AS c FROM range(10000) r(i))`,
		&imports, &exports, &undirected, &normalised)
	require.Equal(t, []int{5000, 2500, 2500, 3}, []int{imports, exports, undirected, normalised})
}

func TestObisBadInputIsAnError(t *testing.T) {
	db := openDB(t)
	for _, fn := range []string{"obis_direction", "obis_is_import", "obis_is_export", "obis_is_reactive",
		"obis_is_lastgang", "obis_is_zaehlerstand", "obis_is_vorschub", "obis_is_maximum",
		"obis_is_fehlerregister", "obis_is_total_register", "obis_tariff_register", "obis_normalise"} {
		for _, bad := range []string{"1.8.0", "not an obis", "1-0:1.8.300", ""} {
			t.Run(fn+"/"+bad, func(t *testing.T) {
				e := queryErr(t, db, fmt.Sprintf(`SELECT %s('%s')`, fn, bad))
				require.Contains(t, e.Msg, fn)
				require.Contains(t, e.Msg, fmt.Sprintf("%q", bad))
			})
		}
	}
}

func TestQualityFunctions(t *testing.T) {
	db := openDB(t)
	for _, q := range metering.Qualities() {
		t.Run("quality="+q.String(), func(t *testing.T) {
			var billable, provisional bool
			var code sql.NullString
			queryOne(t, db, fmt.Sprintf(`SELECT quality_is_billable('%[1]s'), quality_is_provisional('%[1]s'), quality_market_code('%[1]s')`, q),
				&billable, &provisional, &code)
			require.Equal(t, q.IsBillable(), billable)
			require.Equal(t, q.IsProvisional(), provisional)
			want, ok := q.MarketCode()
			require.Equal(t, sql.NullString{String: want, Valid: ok}, code)
		})
	}
	// The seed's codes, spelled out once.
	var m, s, e, p, f string
	queryOne(t, db, `SELECT quality_market_code('MEASURED'), quality_market_code('SUBSTITUTED'), quality_market_code('ESTIMATED'),
		quality_market_code('PRELIMINARY'), quality_market_code('FAULTY')`, &m, &s, &e, &p, &f)
	require.Equal(t, []string{"220", "67", "187", "Z18", "20"}, []string{m, s, e, p, f})
	var nulls int
	queryOne(t, db, `SELECT count(*) FROM (VALUES ('CALCULATED'), ('CORRECTED'), ('UNKNOWN')) v(q) WHERE quality_market_code(q) IS NULL`, &nulls)
	require.Equal(t, 3, nulls)
}

func TestQualityOutsideCodeListIsAnError(t *testing.T) {
	db := openDB(t)
	list := strings.Join([]string{"MEASURED", "SUBSTITUTED", "ESTIMATED", "PRELIMINARY", "FAULTY", "CALCULATED", "CORRECTED", "UNKNOWN"}, ", ")
	for _, fn := range []string{"quality_is_billable", "quality_is_provisional", "quality_market_code"} {
		for _, bad := range []string{"GOOD", "OK", ""} {
			t.Run(fn+"/"+bad, func(t *testing.T) {
				e := queryErr(t, db, fmt.Sprintf(`SELECT %s('%s')`, fn, bad))
				require.Contains(t, e.Msg, fmt.Sprintf("%q", bad))
				require.Contains(t, e.Msg, list)
			})
		}
		// A non-canonical spelling of a listed code (an ingest alias such
		// as the MSCONS code) is refused too, naming the stored spelling.
		for _, alias := range []string{"measured", "220"} {
			t.Run(fn+"/"+alias, func(t *testing.T) {
				e := queryErr(t, db, fmt.Sprintf(`SELECT %s('%s')`, fn, alias))
				require.Contains(t, e.Msg, `store "MEASURED"`)
			})
		}
	}
}

// eicWithType returns a valid EIC with object-type letter typ, by finding
// the check character metering accepts.
func eicWithType(t *testing.T, typ byte) string {
	t.Helper()
	body := "11" + string(typ) + "R000000011"
	body += strings.Repeat("0", 15-len(body))
	for _, c := range "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ" {
		if _, err := metering.ParseEIC(body + string(c)); err == nil {
			return body + string(c)
		}
	}
	t.Fatalf("no check character for %s", body)
	return ""
}

func TestEICFunctions(t *testing.T) {
	db := openDB(t)
	unlisted := eicWithType(t, 'Q')
	cases := []struct {
		code                          string
		regelzone, objectType, normal sql.NullString
	}{
		{"11YR000000011247", ok("AMPRION"), ok("Y"), ok("11YR000000011247")},
		{" 11yr00000002596z ", ok("AMPRION"), ok("Y"), ok("11YR00000002596Z")},
		{"10YDE-RWENET---I", null(), ok("Y"), ok("10YDE-RWENET---I")},
		{"10X---ENTSOE---L", null(), ok("X"), ok("10X---ENTSOE---L")},
		{unlisted, null(), null(), ok(unlisted)},
		// Not an EIC: NULL, never an error.
		{"11YR000000011248", null(), null(), null()},
		{"free text", null(), null(), null()},
		{"", null(), null(), null()},
	}
	for _, c := range cases {
		t.Run("code="+c.code, func(t *testing.T) {
			var z, ty, n sql.NullString
			queryOne(t, db, fmt.Sprintf(`SELECT eic_regelzone(c), eic_object_type(c), eic_normalise(c) FROM (SELECT '%s' AS c)`, c.code), &z, &ty, &n)
			require.Equal(t, c.regelzone, z, "eic_regelzone")
			require.Equal(t, c.objectType, ty, "eic_object_type")
			require.Equal(t, c.normal, n, "eic_normalise")
		})
	}
}

func ok(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
func null() sql.NullString       { return sql.NullString{} }

func TestNullInNullOut(t *testing.T) {
	db := openDB(t)
	calls := []string{
		"meter_local_day(NULL::TIMESTAMPTZ)", "meter_local_day(NULL::TIMESTAMP)", "meter_gas_day(NULL::TIMESTAMPTZ)",
		"meter_local_month(NULL::TIMESTAMPTZ)",
		"meter_balancing_day(NULL::TIMESTAMPTZ, 'GAS')", "meter_balancing_day(TIMESTAMPTZ '2026-01-01 00:00:00+00', NULL)",
		"meter_balancing_month(NULL::TIMESTAMP, 'STROM')", "meter_balancing_month(TIMESTAMPTZ '2026-01-01 00:00:00+00', NULL)",
		"meter_expected_intervals(NULL::DATE, 'PT15M')", "meter_expected_intervals(DATE '2026-01-01', NULL)",
		"meter_expected_intervals(DATE '2026-01-01', 'PT15M', NULL)",
		"obis_direction(NULL)", "obis_is_import(NULL)", "obis_is_export(NULL)", "obis_is_reactive(NULL)",
		"obis_is_lastgang(NULL)", "obis_is_zaehlerstand(NULL)", "obis_is_vorschub(NULL)", "obis_is_maximum(NULL)",
		"obis_is_fehlerregister(NULL)", "obis_is_total_register(NULL)", "obis_tariff_register(NULL)", "obis_normalise(NULL)",
		"quality_is_billable(NULL)", "quality_is_provisional(NULL)", "quality_market_code(NULL)",
		"eic_regelzone(NULL)", "eic_object_type(NULL)", "eic_normalise(NULL)",
	}
	for _, c := range calls {
		t.Run(c, func(t *testing.T) {
			var isNull bool
			queryOne(t, db, "SELECT "+c+" IS NULL", &isNull)
			require.True(t, isNull)
		})
	}
	// NULLs mixed into a column (vectorised path): NULL rows stay NULL,
	// the others are answered.
	var nulls, answered int
	queryOne(t, db, `SELECT count(*) FILTER (WHERE obis_normalise(c) IS NULL AND quality_is_billable(q) IS NULL),
		count(*) FILTER (WHERE obis_normalise(c) = '1-0:1.8.0' AND quality_is_billable(q))
		FROM (SELECT CASE WHEN i % 2 = 0 THEN '1-0:1.8.0' END AS c, CASE WHEN i % 2 = 0 THEN 'MEASURED' END AS q FROM range(5000) r(i))`,
		&nulls, &answered)
	require.Equal(t, []int{2500, 2500}, []int{nulls, answered})
}
