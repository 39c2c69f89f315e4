package catalog

import (
	"context"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

// The value column's bounds in the manifest are what a foreign engine
// (Spark, PyIceberg, DuckDB's iceberg extension) prunes `value > x` by:
// whatever physical type the file stores decimal(18,6) in, each file's lower
// and upper bound decode, as the Iceberg spec serializes a decimal, to the
// smallest and largest value the file holds — negatives, the sixth decimal
// and twelve integer digits included.
func TestValueBoundsAreTheFilesExtremes(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	values := []string{"-5.250000", "-123456789012.345678", "0.000001", "0", "17.5", "999999999998.000007", "-0.000001"}
	var rows []meterstore.Row
	for i, v := range values {
		rows = append(rows, mkRow(malos[0], opA, day0.Add(time.Duration(i)*15*time.Minute), v, 1, opA))
	}
	sortKeyset(rows)
	_, err = tb.CommitWindow(ctx, &SliceSource{Rows: rows}, day0.Add(24*time.Hour))
	require.NoError(t, err)

	tbl, err := e.cat.cat.LoadTable(ctx, tb.ident)
	require.NoError(t, err)
	field, ok := tbl.Schema().FindFieldByName("value")
	require.True(t, ok)
	tasks, err := tbl.Scan(table.WithSelectedFields("*")).PlanFiles(ctx)
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	f := tasks[0].File
	bound := func(b []byte) decimal.Decimal {
		lit, err := iceberg.LiteralFromBytes(field.Type, b)
		require.NoError(t, err)
		d := lit.(iceberg.DecimalLiteral)
		return decimal.NewFromBigInt(d.Val.BigInt(), -int32(d.Scale))
	}
	lo, hi := bound(f.LowerBoundValues()[field.ID]), bound(f.UpperBoundValues()[field.ID])
	require.True(t, lo.Equal(decimal.RequireFromString("-123456789012.345678")), "lower bound %s", lo)
	require.True(t, hi.Equal(decimal.RequireFromString("999999999998.000007")), "upper bound %s", hi)
}
