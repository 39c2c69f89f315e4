package pgwire

import (
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5/pgproto3"
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

func TestAppendDecimalBinaryWritesPgtypesNumeric(t *testing.T) {
	m := pgtype.NewMap()
	for scale := range uint8(19) {
		for _, n := range []int64{0, 1, -1, 5, -5, 7, 10000, -10000, 123456, -123456, 1000000, -999999, 1500000, -1500,
			123456789012345678, -123456789012345678, math.MaxInt64, math.MinInt64} {
			d := duckdb.Decimal{Width: 18, Scale: scale, Value: big.NewInt(n)}
			want, err := m.Encode(oidNumeric, pgtype.BinaryFormatCode, pgValue(oidNumeric, d), []byte("x"))
			require.NoError(t, err)
			got, ok := appendDecimalBinary([]byte("x"), oidNumeric, pgtype.BinaryFormatCode, d)
			require.True(t, ok)
			require.Equal(t, want, got, "%d at scale %d", n, scale)
		}
	}
	for _, left := range []struct {
		why    string
		format int16
		d      duckdb.Decimal
	}{
		{"beyond int64, left to pgtype", pgtype.BinaryFormatCode, duckdb.Decimal{Width: 38, Scale: 2, Value: new(big.Int).Lsh(big.NewInt(1), 100)}},
		{"text, appendDecimal's", pgtype.TextFormatCode, duckdb.Decimal{Width: 18, Scale: 6, Value: big.NewInt(1)}},
	} {
		_, ok := appendDecimalBinary(nil, oidNumeric, left.format, left.d)
		require.False(t, ok, left.why)
	}
}

func TestAppendTimestampBinaryWritesPgtypesTimestamps(t *testing.T) {
	m := pgtype.NewMap()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	for _, oid := range []uint32{oidTimestamptz, oidTimestamp} {
		for _, at := range []time.Time{
			time.Date(2025, 3, 30, 1, 45, 0, 0, time.UTC),
			time.Date(2025, 10, 26, 2, 30, 0, 123456000, berlin),
			time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC),
			time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(-43, 3, 15, 12, 0, 0, 1000, time.UTC),
		} {
			want, err := m.Encode(oid, pgtype.BinaryFormatCode, pgValue(oid, at), []byte("x"))
			require.NoError(t, err)
			got, ok, err := appendTime([]byte("x"), m, oid, pgtype.BinaryFormatCode, at, berlin)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, want, got, "%s as oid %d", at, oid)
		}
	}
	_, ok, err := appendTimestampBinary(nil, oidDate, time.Date(2025, 3, 30, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.False(t, ok, "a date is left to pgtype")
}

func TestAppendTextWritesPgtypesText(t *testing.T) {
	m := pgtype.NewMap()
	for _, format := range []int16{pgtype.TextFormatCode, pgtype.BinaryFormatCode} {
		for _, s := range []string{"", "1-0:1.29.0", "DE000012345", "ä \"quoted\" \\ {x}"} {
			want, err := m.Encode(oidText, format, s, []byte("x"))
			require.NoError(t, err)
			got, ok := appendText([]byte("x"), oidText, s)
			require.True(t, ok)
			require.Equal(t, string(want), string(got))
		}
	}
	_, ok := appendText(nil, oidInt8, "1")
	require.False(t, ok, "a string of another column type is left to pgtype")
}

// TestAppendDataRowIsPgprotosDataRow: a row appended to a buffer already
// holding messages is the bytes pgproto3 encodes for the same values, in text
// and in binary, with NULLs, empty strings, negative decimals of scale 0–6,
// timestamptz in the session's zone and ±infinity.
func TestAppendDataRowIsPgprotosDataRow(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	sess := &pgSession{m: pgtype.NewMap(), loc: berlin}
	var cols []pgColumn
	var row []any
	add := func(duck string, v any) {
		oid, size, mod := pgTypeOf(duck)
		cols = append(cols, pgColumn{name: duck, oid: oid, size: size, typmod: mod, duck: duck})
		row = append(row, v)
	}
	add("VARCHAR", "1-0:1.29.0")
	add("VARCHAR", nil)
	add("VARCHAR", "")
	for scale := range uint8(7) {
		add("DECIMAL(18,6)", duckdb.Decimal{Width: 18, Scale: scale, Value: big.NewInt(-1234567)})
	}
	add("DECIMAL(18,6)", nil)
	add("TIMESTAMP WITH TIME ZONE", time.Date(2025, 10, 26, 0, 45, 0, 0, time.UTC))
	add("TIMESTAMP WITH TIME ZONE", time.UnixMicro(math.MaxInt64).UTC())
	add("TIMESTAMP WITH TIME ZONE", time.UnixMicro(-math.MaxInt64).UTC())
	add("TIMESTAMP WITH TIME ZONE", nil)
	add("BIGINT", int64(-7))
	for _, format := range []int16{pgtype.TextFormatCode, pgtype.BinaryFormatCode} {
		p := &pgPortal{cols: cols, formats: []int16{format}}
		want := &pgproto3.DataRow{Values: make([][]byte, len(row))}
		for i, v := range row {
			if v != nil {
				want.Values[i], err = sess.appendValue([]byte{}, cols[i], format, v)
				require.NoError(t, err)
			}
		}
		wantBytes, err := want.Encode([]byte("before"))
		require.NoError(t, err)
		got, err := sess.appendDataRow([]byte("before"), p, row)
		require.NoError(t, err)
		require.Equal(t, wantBytes, got, "format %d", format)
		dr, err := sess.dataRow(p, row)
		require.NoError(t, err)
		require.Equal(t, want.Values, dr.Values, "format %d", format)
	}
	text, err := sess.dataRow(&pgPortal{cols: cols}, row)
	require.NoError(t, err)
	var values []string
	for _, v := range text.Values {
		values = append(values, string(v))
	}
	require.Equal(t, []string{"1-0:1.29.0", "", "", "-1234567", "-123456.7", "-12345.67", "-1234.567", "-123.4567",
		"-12.34567", "-1.234567", "", "2025-10-26 02:45:00+02", "infinity", "-infinity", "", "-7"}, values)
	require.Nil(t, text.Values[1], "NULL")
	require.NotNil(t, text.Values[2], "an empty string is a value of length 0")
}

// TestAppendTimestamptzAcrossZoneChanges: the wall time read once per value
// from the zone's offset is Go's own wall time, quarter-hour by quarter-hour
// across both of Berlin's 2025 clock changes, and in 1850, when Berlin's
// offset (local mean time) had seconds.
func TestAppendTimestamptzAcrossZoneChanges(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	var instants []time.Time
	for _, start := range []time.Time{
		time.Date(2025, 3, 29, 22, 0, 0, 0, time.UTC),
		time.Date(2025, 10, 25, 22, 0, 0, 0, time.UTC),
		time.Date(1850, 6, 1, 0, 0, 0, 0, time.UTC),
	} {
		for q := range 24 {
			instants = append(instants, start.Add(time.Duration(q)*15*time.Minute+time.Duration(q)*1500*time.Microsecond))
		}
	}
	for _, at := range instants {
		local := at.In(berlin)
		want := strings.TrimSuffix(strings.TrimSuffix(local.Format("2006-01-02 15:04:05.999999-07:00:00"), ":00"), ":00")
		require.Equal(t, want, string(appendTimestamptz(nil, local)), "%s", at)
	}
}
