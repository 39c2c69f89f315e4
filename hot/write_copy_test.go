package hot

import (
	"encoding/binary"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

// appendDecimal must send the same number, at the same display scale, as
// pgx's own codec — on the fast path and off it.
func TestAppendDecimalMatchesPgx(t *testing.T) {
	tm := pgtype.NewMap()
	vals := []decimal.Decimal{decimal.Zero, decimal.New(0, -6), decimal.New(0, 3), decimal.New(-0, -2)}
	for _, s := range []string{"1", "-1", "0.001", "0.25", "-0.000001", "12345.678", "999999999999.999999", "-999999999999.999999",
		"10000", "10000.0001", "0.00010000", "1e5", "7e13", "123456789012345678", "1234567890123456789", "-98765432109876543210.5",
		"0.333333333333333333333333", "1e-20", "5e1000", "5e-1001"} {
		vals = append(vals, decimal.RequireFromString(s))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		c := r.Int64N(math.MaxInt64) >> r.IntN(63)
		if r.IntN(2) == 0 {
			c = -c
		}
		vals = append(vals, decimal.New(c, int32(r.IntN(40)-30)))
	}
	for _, v := range vals {
		ours, err := appendDecimal(tm, nil, v)
		require.NoError(t, err, v.String())
		require.Equal(t, int(binary.BigEndian.Uint32(ours)), len(ours)-4, v.String())
		theirs, err := tm.Encode(pgtype.NumericOID, pgtype.BinaryFormatCode, pgtype.Numeric{Int: v.Coefficient(), Exp: v.Exponent(), Valid: true}, nil)
		require.NoError(t, err, v.String())
		a, err := decodeNumeric(ours[4:])
		require.NoError(t, err, v.String())
		b, err := decodeNumeric(theirs)
		require.NoError(t, err, v.String())
		require.True(t, a.Equal(v), "%s decoded as %s", v, a)
		require.True(t, b.Equal(v), "%s decoded as %s", v, b)
		require.Equal(t, theirs[6:8], ours[10:12], "%s: display scale as pgx sends it", v)
	}
	for _, u := range []uint64{1, 9999, 10000, 20260310000001, math.MaxUint64} {
		ours, ok := appendNumeric(nil, false, u, 0)
		require.True(t, ok)
		v, err := decodeNumeric(ours[4:])
		require.NoError(t, err)
		require.Equal(t, new(big.Int).SetUint64(u), v.BigInt(), "version %d", u)
		require.Equal(t, []byte{0, 0}, ours[10:12], "version %d: display scale 0", u)
	}
}

// The COPY stream's fixed-width fields agree with pgx's codecs.
func TestAppendCopyFieldsMatchPgx(t *testing.T) {
	tm := pgtype.NewMap()
	for _, at := range []time.Time{time.Date(2026, 3, 10, 23, 15, 0, 123456000, time.UTC), time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC),
		time.Date(1969, 7, 20, 20, 17, 40, 0, time.FixedZone("x", 3600))} {
		theirs, err := tm.Encode(pgtype.TimestamptzOID, pgtype.BinaryFormatCode, at, nil)
		require.NoError(t, err)
		require.Equal(t, theirs, appendTimestamptz(nil, at)[4:], at.String())
		theirs, err = tm.Encode(pgtype.DateOID, pgtype.BinaryFormatCode, pgtype.Date{Time: at, Valid: true}, nil)
		require.NoError(t, err)
		require.Equal(t, theirs, appendDate(nil, at)[4:], at.String())
	}
}

// BenchmarkCopyStream: the Go side of Write's COPY, encoding a batch of 9 984
// rows.
func BenchmarkCopyStream(b *testing.B) {
	s := New(nil, meterstore.TableSpec{Name: "readings_versions"}.MustBuild())
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	res, det := "PT15M", `{"MSCONS":{"sender":"9910125000002","message_ref":"M1"}}`
	ds := make([]meterstore.Displacement, 9984)
	fresh := make([]int, len(ds))
	for i := range ds {
		from := day.Add(time.Duration(i%96) * 15 * time.Minute)
		to := from.Add(15 * time.Minute)
		ds[i].Row = meterstore.Row{MaloID: "41373559241", ObisCode: "1-0:1.29.0", Sparte: "STROM", From: from, To: &to,
			Value: decimal.New(int64(i%1000+1), -3), Unit: "KWH", Quality: "MEASURED", Resolution: &res, SourceKind: "MSCONS",
			SourceDetail: &det, Version: 20260310000001, VersionScope: "9910125000002:2026-03", RecordedAt: day, BalancingDay: day}
		fresh[i] = i
	}
	tm := pgtype.NewMap()
	b.ResetTimer()
	for range b.N {
		if _, err := io.Copy(io.Discard, s.newCopyStream(tm, ds, fresh)); err != nil {
			b.Fatal(err)
		}
	}
}
