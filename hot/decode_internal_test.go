package hot

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/testkit/pgtest"
)

// decodeNumeric agrees with PostgreSQL's text rendering for values around the
// int64 fast path, negative values, scales and exponents.
func TestDecodeNumeric(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.Database(t))
	require.NoError(t, err)
	defer pool.Close()
	for _, lit := range []string{"0", "0.000000", "1", "-1", "0.001", "-0.000001", "123456789012.345678", "-999999999999.999999",
		"10000", "100000000", "20260310000001", "18446744073709551615", "99999999999999999999", "1.5", "0.1000", "12345678901234567890.12345"} {
		var raw []byte
		var text string
		rows, err := pool.Query(ctx, "SELECT $1::numeric, $1::numeric::text", pgx.QueryResultFormats{pgx.BinaryFormatCode, pgx.TextFormatCode}, lit)
		require.NoError(t, err)
		require.True(t, rows.Next())
		raw = append(raw, rows.RawValues()[0]...)
		text = string(rows.RawValues()[1])
		rows.Close()
		got, err := decodeNumeric(raw)
		require.NoError(t, err, lit)
		require.True(t, got.Equal(decimal.RequireFromString(text)), "%s: got %s", lit, got)
		require.Equal(t, text, got.String()+trailingZeros(text, got.String()), lit)
	}
}

// trailingZeros returns what decimal's String drops from PostgreSQL's rendering
// (trailing fractional zeros), so the comparison checks the digits.
func trailingZeros(pg, dec string) string {
	if len(pg) > len(dec) && pg[:len(dec)] == dec {
		return pg[len(dec):]
	}
	return ""
}

// decodeScaled reads what PostgreSQL sends for a numeric(18,6) as the scaled
// integer its text spells (the digits with the point removed), at the edges
// of the type, negative, zero and with trailing zeros.
func TestDecodeScaled(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.Database(t))
	require.NoError(t, err)
	defer pool.Close()
	for _, lit := range []string{"0", "-0", "0.000001", "-0.000001", "1", "-1", "0.1", "-0.01", "12.5", "1.500000", "10000", "100000000",
		"999999999999.999999", "-999999999999.999999", "123456789012.345678", "-123456789012.345678", "0.123456", "99990000.00990000",
		"-100000000.000100", "0.000100", "100000000000"} {
		raw, text := numericAs(t, pool, lit, "numeric(18,6)")
		got, err := decodeScaled(raw)
		require.NoError(t, err, lit)
		require.Equal(t, scaledOfText(t, text), got, "%s (PostgreSQL prints %s)", lit, text)
	}
}

// decodeScaled refuses what decimal(18,6) cannot hold exactly: NaN and the
// infinities, a seventh decimal place, a nineteenth digit.
func TestDecodeScaledRefuses(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.Database(t))
	require.NoError(t, err)
	defer pool.Close()
	for lit, want := range map[string]error{
		"NaN": errNotFinite, "Infinity": errNotFinite, "-Infinity": errNotFinite,
		"1.0000001": errTooPrecise, "-0.00000001": errTooPrecise, "123.123456789": errTooPrecise,
		"1000000000000": errOutOfScaled, "-1000000000000": errOutOfScaled, "1e30": errOutOfScaled, "999999999999.9999999": errTooPrecise,
	} {
		raw, _ := numericAs(t, pool, lit, "numeric")
		_, err := decodeScaled(raw)
		require.ErrorIs(t, err, want, lit)
	}
}

// numericAs is lit cast to typ as PostgreSQL sends it in binary, and as it prints it.
func numericAs(t *testing.T, pool *pgxpool.Pool, lit, typ string) ([]byte, string) {
	t.Helper()
	rows, err := pool.Query(context.Background(), "SELECT $1::"+typ+", $1::"+typ+"::text",
		pgx.QueryResultFormats{pgx.BinaryFormatCode, pgx.TextFormatCode}, lit)
	require.NoError(t, err)
	defer rows.Close()
	require.True(t, rows.Next(), lit)
	raw := append([]byte(nil), rows.RawValues()[0]...)
	text := string(rows.RawValues()[1])
	rows.Close()
	require.NoError(t, rows.Err(), lit)
	return raw, text
}

// scaledOfText is a decimal's text, at most six places, times 10⁶: its digits
// with the point removed and the fraction padded to six places.
func scaledOfText(t *testing.T, text string) int64 {
	t.Helper()
	whole, frac, _ := strings.Cut(text, ".")
	require.LessOrEqual(t, len(frac), 6, text)
	n, err := strconv.ParseInt(whole+frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	require.NoError(t, err, text)
	return n
}
