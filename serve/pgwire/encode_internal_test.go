package pgwire

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"
)

// The row encoders append digits themselves; each must write exactly what
// the pgtype (or fmt) path they replace wrote, which the wire tests compare
// with a real PostgreSQL.

func TestAppendDecimalWritesPgtypesNumericText(t *testing.T) {
	m := pgtype.NewMap()
	for _, scale := range []uint8{0, 1, 6, 18} {
		for _, n := range []int64{0, 1, -1, 7, 123456, -123456, 1000000, -999999, 123456789012345678, math.MaxInt64, math.MinInt64} {
			d := duckdb.Decimal{Width: 18, Scale: scale, Value: big.NewInt(n)}
			want, err := m.Encode(oidNumeric, pgtype.TextFormatCode, pgValue(oidNumeric, d), nil)
			require.NoError(t, err)
			got, ok := appendDecimal([]byte("x"), oidNumeric, pgtype.TextFormatCode, d)
			require.True(t, ok)
			require.Equal(t, "x"+string(want), string(got), "%d at scale %d", n, scale)
		}
	}
	huge := duckdb.Decimal{Width: 38, Scale: 2, Value: new(big.Int).Lsh(big.NewInt(1), 100)}
	_, ok := appendDecimal(nil, oidNumeric, pgtype.TextFormatCode, huge)
	require.False(t, ok, "a DECIMAL beyond int64 is left to pgtype")
	_, ok = appendDecimal(nil, oidNumeric, pgtype.BinaryFormatCode, duckdb.Decimal{Width: 18, Scale: 6, Value: big.NewInt(1)})
	require.False(t, ok, "binary is left to pgtype")
}

func TestAppendTimestamptzWritesPostgreSQLsISOOutput(t *testing.T) {
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	require.NoError(t, err)
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2025, 10, 24, 0, 0, 0, 0, berlin), "2025-10-24 00:00:00+02"},
		{time.Date(2025, 1, 2, 3, 4, 5, 120000, berlin), "2025-01-02 03:04:05.00012+01"},
		{time.Date(2025, 1, 2, 3, 4, 5, 0, kolkata), "2025-01-02 03:04:05+05:30"},
		{time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("", -(3*3600+25*60+7))), "2025-01-02 03:04:05-03:25:07"},
		{time.Date(12345, 6, 7, 8, 9, 10, 999999000, time.UTC), "12345-06-07 08:09:10.999999+00"},
		{time.Date(-43, 3, 15, 12, 0, 0, 0, time.UTC), "0044-03-15 12:00:00+00 BC"},
		{time.Date(7, 1, 1, 0, 0, 0, 0, time.UTC), "0007-01-01 00:00:00+00"},
	} {
		require.Equal(t, "x"+c.want, string(appendTimestamptz([]byte("x"), c.at)))
	}
}

func TestDataRowKeepsNullAndEmptyApart(t *testing.T) {
	sess := &pgSession{m: pgtype.NewMap(), loc: time.UTC}
	cols := []pgColumn{{name: "a", oid: oidText}, {name: "b", oid: oidText}, {name: "c", oid: oidNumeric},
		{name: "d", oid: oidTimestamptz}, {name: "e", oid: oidFloat8}}
	at := time.Date(2025, 3, 30, 1, 45, 0, 0, time.UTC)
	dr, err := sess.dataRow(&pgPortal{cols: cols}, []any{"", nil, duckdb.Decimal{Width: 18, Scale: 6, Value: big.NewInt(-1500)}, at, 1e300})
	require.NoError(t, err)
	require.NotNil(t, dr.Values[0], "an empty string is a value of length 0")
	require.Empty(t, dr.Values[0])
	require.Nil(t, dr.Values[1], "NULL")
	require.Equal(t, "-0.001500", string(dr.Values[2]))
	require.Equal(t, "2025-03-30 01:45:00+00", string(dr.Values[3]))
	require.Equal(t, "1e+300", string(dr.Values[4]))
}
