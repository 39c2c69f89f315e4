package engine_test

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// deliveryEdgesSQL is, per row, a DECIMAL(18,6), a DECIMAL(38,0) around the
// edges of int64, and a TIMESTAMPTZ, each beside DuckDB's own text (or epoch)
// of it: 5 000 generated rows of both signs, then the edges, NULL included; n numbers the rows.
const deliveryEdgesSQL = `WITH v(n, d, w, ts) AS (
	SELECT i, (((i * 7919) % 2000000 - 1000000) / 1000)::DECIMAL(18,6), (i * 104729 - 250000000)::DECIMAL(38,0),
		TIMESTAMPTZ '2025-03-30 00:00:00+00' + i * INTERVAL 15 MINUTE
	FROM (SELECT unnest(generate_series(0, 4999)) AS i)
	UNION ALL SELECT * FROM (VALUES
		(5000, 999999999999.999999::DECIMAL(18,6), 9223372036854775807::DECIMAL(38,0), TIMESTAMPTZ '2025-10-26 01:00:00+02'),
		(5001, -999999999999.999999::DECIMAL(18,6), (-9223372036854775808)::DECIMAL(38,0), TIMESTAMPTZ '1970-01-01 00:00:00+00'),
		(5002, 0::DECIMAL(18,6), 9223372036854775808::DECIMAL(38,0), TIMESTAMPTZ '2024-02-29 23:45:00-05'),
		(5003, -0.000001::DECIMAL(18,6), (-9223372036854775809)::DECIMAL(38,0), NULL),
		(5004, 0.000001::DECIMAL(18,6), 99999999999999999999999999999999999999::DECIMAL(38,0), NULL),
		(5005, NULL, NULL, NULL)))
SELECT d, d::VARCHAR, w, w::VARCHAR, ts, epoch_us(ts), n FROM v ORDER BY n`

// Every value Query and Cursor hand out is exactly DuckDB's: decimals with
// the column's scale, at and beyond the edges of int64 and numeric(18,6),
// timestamps at their instant in UTC, NULL as nil. Rows a Cursor handed out
// stay as they were while it reads on.
func TestDeliveredValuesAreExact(t *testing.T) {
	w := testkit.Workload{Seed: 7, MaLos: 1, Days: 1}
	s := storetest.Start(t, storetest.Options{}, w.IntervalTable("readings_versions").MustBuild())
	ctx := context.Background()
	res, err := s.Engine.Query(ctx, deliveryEdgesSQL)
	require.NoError(t, err)
	require.Len(t, res.Rows, 5006)
	for i, r := range res.Rows {
		require.Equal(t, int64(i), r[6], "row %d in its place", i)
		requireExactDecimal(t, r[0], r[1], 6, fmt.Sprintf("row %d, DECIMAL(18,6)", i))
		requireExactDecimal(t, r[2], r[3], 0, fmt.Sprintf("row %d, DECIMAL(38,0)", i))
		if r[5] == nil {
			require.Nil(t, r[4], "row %d: NULL timestamp", i)
			continue
		}
		ts := r[4].(time.Time)
		require.Equal(t, time.UTC, ts.Location(), "row %d", i)
		require.True(t, ts.Equal(time.UnixMicro(r[5].(int64))), "row %d: %v is not epoch µs %d", i, ts, r[5])
	}

	c, err := s.Engine.Cursor(ctx, 10, deliveryEdgesSQL)
	require.NoError(t, err)
	var kept [][]any
	for c.Next() {
		kept = append(kept, c.Values())
	}
	require.NoError(t, c.Close())
	require.Equal(t, res.Rows, kept, "rows handed out earlier are unchanged")
}

// requireExactDecimal: got is DuckDB's text as a decimal.Decimal whose
// coefficient is the unscaled value and whose exponent is minus the column's
// scale; both nil for NULL.
func requireExactDecimal(t *testing.T, got, text any, scale int32, where string) {
	t.Helper()
	if text == nil {
		require.Nil(t, got, where)
		return
	}
	d, ok := got.(decimal.Decimal)
	require.True(t, ok, "%s: %T", where, got)
	require.Equal(t, text.(string), d.StringFixed(scale), where)
	require.Equal(t, -scale, d.Exponent(), where)
	unscaled, ok := new(big.Int).SetString(strings.Replace(text.(string), ".", "", 1), 10)
	require.True(t, ok, where)
	require.Zero(t, unscaled.Cmp(d.Coefficient()), "%s: coefficient %s", where, d.Coefficient())
}

// Engine.Rows hands a DECIMAL out as duckdb-go does — a duckdb.Decimal with
// the column's width and scale around the unscaled value — at every storage
// width DuckDB uses (int16, int32, int64, hugeint), at numeric(18,6)'s edges
// and scales 0 to 6; Normalize makes exactly DuckDB's number of it, and the
// Cursor, which decodes DECIMAL straight into decimal.Decimal, hands out that
// same number.
func TestRowsDecimalsAreExact(t *testing.T) {
	w := testkit.Workload{Seed: 7, MaLos: 1, Days: 1}
	s := storetest.Start(t, storetest.Options{}, w.IntervalTable("readings_versions").MustBuild())
	ctx := context.Background()
	type dec struct {
		literal      string
		width, scale uint8
	}
	cases := []dec{
		{"999999999999.999999", 18, 6}, {"-999999999999.999999", 18, 6}, {"-1234.5", 18, 6},
		{"0", 18, 6}, {"-0.000001", 18, 6}, {"0.000001", 18, 6},
		{"-999.9", 4, 1}, {"99.9", 4, 1}, {"-9999999.99", 9, 2}, {"1234567.89", 9, 2},
		{"9223372036854775807", 38, 0}, {"-9223372036854775808", 38, 0},
		{"9223372036854775808", 38, 0}, {"-9223372036854775809", 38, 0},
		{"99999999999999999999999999999999.999999", 38, 6}, {"-12345678901234567890.123456", 38, 6},
	}
	for scale := range uint8(7) {
		nines := strings.Repeat("9", 18)
		max := nines[:18-scale] + "." + nines[18-scale:]
		if scale == 0 {
			max = nines
		}
		cases = append(cases, dec{max, 18, scale}, dec{"-" + max, 18, scale}, dec{"-1", 18, scale})
	}
	for _, c := range cases {
		where := fmt.Sprintf("%s::DECIMAL(%d,%d)", c.literal, c.width, c.scale)
		q := fmt.Sprintf(`SELECT v, v::VARCHAR FROM (SELECT %s AS v)`, where)
		rows, err := s.Engine.Rows(ctx, q)
		require.NoError(t, err)
		require.True(t, rows.Next(), where)
		vals, err := engine.ScanValues(rows.Rows, 2)
		require.NoError(t, err)
		require.NoError(t, rows.Close())
		requireExactDecimal(t, vals[0], vals[1], int32(c.scale), where+" through Engine.Rows and Normalize")

		rows, err = s.Engine.Rows(ctx, q)
		require.NoError(t, err)
		require.True(t, rows.Next(), where)
		var raw any
		var text string
		require.NoError(t, rows.Scan(&raw, &text))
		require.NoError(t, rows.Close())
		d, ok := raw.(duckdb.Decimal)
		require.True(t, ok, "%s: %T", where, raw)
		require.Equal(t, c.width, d.Width, where)
		require.Equal(t, c.scale, d.Scale, where)
		unscaled, ok := new(big.Int).SetString(strings.Replace(text, ".", "", 1), 10)
		require.True(t, ok, where)
		require.Zero(t, unscaled.Cmp(d.Value), "%s: unscaled %s", where, d.Value)

		res, err := s.Engine.Query(ctx, q)
		require.NoError(t, err)
		requireExactDecimal(t, res.Rows[0][0], text, int32(c.scale), where+" through Query")
	}

	rows, err := s.Engine.Rows(ctx, `SELECT NULL::DECIMAL(18,6)`)
	require.NoError(t, err)
	require.True(t, rows.Next())
	vals, err := engine.ScanValues(rows.Rows, 1)
	require.NoError(t, err)
	require.NoError(t, rows.Close())
	require.Nil(t, vals[0], "NULL")
}
