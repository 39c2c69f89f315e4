package udf_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCalendarDays(t *testing.T) {
	db := openDB(t)
	// ts (UTC) → local day, gas day, local month, gas month.
	cases := []struct {
		name, ts                               string
		localDay, gasDay, localMonth, gasMonth string
	}{
		{"winter midnight local", "2026-01-14 23:00:00+00", "2026-01-15", "2026-01-14", "2026-01-01", "2026-01-01"},
		{"winter before gas start", "2026-01-15 04:59:59+00", "2026-01-15", "2026-01-14", "2026-01-01", "2026-01-01"},
		{"winter gas start", "2026-01-15 05:00:00+00", "2026-01-15", "2026-01-15", "2026-01-01", "2026-01-01"},
		{"summer gas start", "2026-07-01 04:00:00+00", "2026-07-01", "2026-07-01", "2026-07-01", "2026-07-01"},
		{"summer before gas start", "2026-07-01 03:45:00+00", "2026-07-01", "2026-06-30", "2026-07-01", "2026-06-01"},
		{"1 March 02:00 local is February for gas", "2026-03-01 01:00:00+00", "2026-03-01", "2026-02-28", "2026-03-01", "2026-02-01"},
		// Spring: Sun 29 Mar 2026, 02:00 local skipped (01:00 UTC).
		{"spring last CET hour", "2026-03-29 00:45:00+00", "2026-03-29", "2026-03-28", "2026-03-01", "2026-03-01"},
		{"spring first CEST", "2026-03-29 01:00:00+00", "2026-03-29", "2026-03-28", "2026-03-01", "2026-03-01"},
		{"spring gas day starts 04:00Z", "2026-03-29 04:00:00+00", "2026-03-29", "2026-03-29", "2026-03-01", "2026-03-01"},
		{"spring gas day 28 Mar starts 05:00Z", "2026-03-28 04:45:00+00", "2026-03-28", "2026-03-27", "2026-03-01", "2026-03-01"},
		// Autumn: Sun 25 Oct 2026, 02:00–03:00 local twice (00:00–02:00 UTC).
		{"autumn first 02:30", "2026-10-25 00:30:00+00", "2026-10-25", "2026-10-24", "2026-10-01", "2026-10-01"},
		{"autumn second 02:30", "2026-10-25 01:30:00+00", "2026-10-25", "2026-10-24", "2026-10-01", "2026-10-01"},
		{"autumn gas day starts 05:00Z", "2026-10-25 05:00:00+00", "2026-10-25", "2026-10-25", "2026-10-01", "2026-10-01"},
		{"autumn 04:45Z still 24 Oct gas", "2026-10-25 04:45:00+00", "2026-10-25", "2026-10-24", "2026-10-01", "2026-10-01"},
		{"new year gas", "2027-01-01 04:00:00+00", "2027-01-01", "2026-12-31", "2027-01-01", "2026-12-01"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ld, gd, lm, gm, bdStrom, bdGas, bmStrom, bmGas, bdWaerme, bdWasser time.Time
			queryOne(t, db, fmt.Sprintf(`SELECT meter_local_day(ts), meter_gas_day(ts), meter_local_month(ts),
				meter_balancing_month(ts, 'GAS'), meter_balancing_day(ts, 'STROM'), meter_balancing_day(ts, 'GAS'),
				meter_balancing_month(ts, 'STROM'), meter_balancing_month(ts, 'GAS'),
				meter_balancing_day(ts, 'WAERME'), meter_balancing_day(ts, 'WASSER')
				FROM (SELECT TIMESTAMPTZ '%s' AS ts)`, c.ts),
				&ld, &gd, &lm, &gm, &bdStrom, &bdGas, &bmStrom, &bmGas, &bdWaerme, &bdWasser)
			day := func(v time.Time) string { return v.Format(time.DateOnly) }
			require.Equal(t, c.localDay, day(ld), "meter_local_day")
			require.Equal(t, c.gasDay, day(gd), "meter_gas_day")
			require.Equal(t, c.localMonth, day(lm), "meter_local_month")
			require.Equal(t, c.gasMonth, day(gm), "meter_balancing_month GAS")
			require.Equal(t, c.localDay, day(bdStrom), "meter_balancing_day STROM")
			require.Equal(t, c.gasDay, day(bdGas), "meter_balancing_day GAS")
			require.Equal(t, c.localMonth, day(bmStrom), "meter_balancing_month STROM")
			require.Equal(t, c.gasMonth, day(bmGas), "meter_balancing_month GAS")
			require.Equal(t, c.localDay, day(bdWaerme), "heat stays on the calendar day")
			require.Equal(t, c.localDay, day(bdWasser), "water stays on the calendar day")
		})
	}
}

func TestCalendarResultTypeIsDate(t *testing.T) {
	db := openDB(t)
	var typ string
	queryOne(t, db, `SELECT typeof(meter_local_day(TIMESTAMPTZ '2026-01-01 00:00:00+00'))`, &typ)
	require.Equal(t, "DATE", typ)
	queryOne(t, db, `SELECT typeof(meter_expected_intervals(DATE '2026-01-01', 'PT15M'))`, &typ)
	require.Equal(t, "INTEGER", typ)
}

func TestCalendarTimestampReadAsUTC(t *testing.T) {
	db := openDB(t)
	var a, b, c time.Time
	queryOne(t, db, `SELECT meter_local_day(TIMESTAMP '2026-03-28 23:30:00'),
		meter_gas_day(TIMESTAMP '2026-03-29 03:30:00'),
		meter_balancing_day(TIMESTAMP '2026-03-29 04:00:00', 'GAS')`, &a, &b, &c)
	require.Equal(t, "2026-03-29", a.Format(time.DateOnly))
	require.Equal(t, "2026-03-28", b.Format(time.DateOnly))
	require.Equal(t, "2026-03-29", c.Format(time.DateOnly))
}

// TestExpectedIntervalsDSTWeekends is the seed's gas-day table: the 23- and
// 25-hour gas days are the ones named after the Saturday.
func TestExpectedIntervalsDSTWeekends(t *testing.T) {
	db := openDB(t)
	cases := []struct {
		day         string
		strom, gas  int
		calendarDay int
	}{
		{"2026-10-24", 96, 100, 96},
		{"2026-10-25", 100, 96, 100},
		{"2026-03-28", 96, 92, 96},
		{"2026-03-29", 92, 96, 92},
		{"2026-06-15", 96, 96, 96},
	}
	for _, c := range cases {
		t.Run("day="+c.day, func(t *testing.T) {
			var strom, gas, waerme, cal int
			queryOne(t, db, fmt.Sprintf(`SELECT meter_expected_intervals(DATE '%[1]s', 'PT15M', 'STROM'),
				meter_expected_intervals(DATE '%[1]s', 'PT15M', 'GAS'),
				meter_expected_intervals(DATE '%[1]s', 'PT15M', 'WAERME'),
				meter_expected_intervals(DATE '%[1]s', 'PT15M')`, c.day), &strom, &gas, &waerme, &cal)
			require.Equal(t, c.strom, strom, "STROM")
			require.Equal(t, c.gas, gas, "GAS")
			require.Equal(t, c.strom, waerme, "WAERME")
			require.Equal(t, c.calendarDay, cal, "no sparte")
		})
	}
	var h, m, d int
	queryOne(t, db, `SELECT meter_expected_intervals(DATE '2026-03-29', 'PT1H'),
		meter_expected_intervals(DATE '2026-10-25', 'PT1M'), meter_expected_intervals(DATE '2026-10-25', 'P1D', 'GAS')`, &h, &m, &d)
	require.Equal(t, []int{23, 1500, 1}, []int{h, m, d})
}

func TestCalendarBadInput(t *testing.T) {
	db := openDB(t)
	for _, q := range []string{
		`SELECT meter_balancing_day(TIMESTAMPTZ '2026-01-01 00:00:00+00', 'gas')`,
		`SELECT meter_balancing_day(TIMESTAMPTZ '2026-01-01 00:00:00+00', 'OIL')`,
		`SELECT meter_balancing_month(TIMESTAMPTZ '2026-01-01 00:00:00+00', 'Strom')`,
		`SELECT meter_expected_intervals(DATE '2026-01-01', 'PT900S')`,
		`SELECT meter_expected_intervals(DATE '2026-01-01', 'PT7M')`,
		`SELECT meter_expected_intervals(DATE '2026-01-01', 'P1M')`,
		`SELECT meter_expected_intervals(DATE '2026-01-01', 'PT15M', 'ERDGAS')`,
	} {
		queryErr(t, db, q)
	}
	// The error names the canonical spelling, or the list.
	require.Contains(t, queryErr(t, db, `SELECT meter_balancing_day(TIMESTAMPTZ '2026-01-01 00:00:00+00', 'gas')`).Msg, `store "GAS"`)
	require.Contains(t, queryErr(t, db, `SELECT meter_balancing_day(TIMESTAMPTZ '2026-01-01 00:00:00+00', 'OIL')`).Msg, "STROM, GAS, WAERME, WASSER")
	require.Contains(t, queryErr(t, db, `SELECT meter_expected_intervals(DATE '2026-01-01', 'PT900S')`).Msg, `store "PT15M"`)
}

// TestCalendarAgainstICU checks every 15-minute instant of 2025–2027 against
// DuckDB's own ICU time-zone conversion, one SQL query per property.
func TestCalendarAgainstICU(t *testing.T) {
	db := openDB(t)
	const instants = `SELECT ts FROM range(TIMESTAMPTZ '2024-12-31 23:00:00+00', TIMESTAMPTZ '2027-12-31 23:00:00+00', INTERVAL 15 MINUTE) r(ts)`
	var n int
	queryOne(t, db, `SELECT count(*) FROM (`+instants+`)`, &n)
	require.Equal(t, (365+365+365)*96, n)

	t.Run("local_day", func(t *testing.T) {
		var bad int
		queryOne(t, db, `SELECT count(*) FILTER (WHERE meter_local_day(ts) IS DISTINCT FROM (ts AT TIME ZONE 'Europe/Berlin')::DATE
			OR meter_balancing_day(ts, 'STROM') IS DISTINCT FROM (ts AT TIME ZONE 'Europe/Berlin')::DATE
			OR meter_local_month(ts) IS DISTINCT FROM date_trunc('month', (ts AT TIME ZONE 'Europe/Berlin'))::DATE) FROM (`+instants+`)`, &bad)
		require.Zero(t, bad)
	})
	t.Run("gas_day", func(t *testing.T) {
		var bad int
		queryOne(t, db, `SELECT count(*) FILTER (WHERE meter_gas_day(ts) IS DISTINCT FROM ((ts AT TIME ZONE 'Europe/Berlin') - INTERVAL 6 HOUR)::DATE
			OR meter_balancing_day(ts, 'GAS') IS DISTINCT FROM ((ts AT TIME ZONE 'Europe/Berlin') - INTERVAL 6 HOUR)::DATE
			OR meter_balancing_month(ts, 'GAS') IS DISTINCT FROM date_trunc('month', (ts AT TIME ZONE 'Europe/Berlin') - INTERVAL 6 HOUR)::DATE) FROM (`+instants+`)`, &bad)
		require.Zero(t, bad)
	})
	t.Run("expected_intervals_per_month", func(t *testing.T) {
		// Each Sparte's instants cover exactly its balancing days of
		// 2025–2027: gas days start at 06:00 local (05:00 UTC in winter).
		for _, c := range []struct{ sparte, from, to, shift string }{
			{"STROM", "2024-12-31 23:00:00+00", "2027-12-31 23:00:00+00", "0"},
			{"GAS", "2025-01-01 05:00:00+00", "2028-01-01 05:00:00+00", "6"},
		} {
			t.Run("sparte="+c.sparte, func(t *testing.T) {
				var months, bad int
				queryOne(t, db, fmt.Sprintf(`WITH icu AS (
					SELECT date_trunc('month', (ts AT TIME ZONE 'Europe/Berlin') - INTERVAL %[4]s HOUR)::DATE AS m, count(*) AS n
					FROM range(TIMESTAMPTZ '%[2]s', TIMESTAMPTZ '%[3]s', INTERVAL 15 MINUTE) r(ts) GROUP BY 1),
				fn AS (
					SELECT date_trunc('month', d)::DATE AS m, sum(meter_expected_intervals(d::DATE, 'PT15M', '%[1]s')) AS n
					FROM range(DATE '2025-01-01', DATE '2028-01-01', INTERVAL 1 DAY) r(d) GROUP BY 1)
				SELECT count(*), count(*) FILTER (WHERE icu.n IS DISTINCT FROM fn.n)
				FROM fn FULL JOIN icu USING (m)`, c.sparte, c.from, c.to, c.shift), &months, &bad)
				require.Equal(t, 36, months)
				require.Zero(t, bad)
			})
		}
	})
}
