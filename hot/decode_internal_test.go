package hot

import (
	"context"
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
