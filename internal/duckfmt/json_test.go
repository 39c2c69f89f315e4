package duckfmt_test

import (
	"context"
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/duckfmt"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestJSONDurationsMatchPostgreSQL: intervals in JSON output are ISO 8601
// durations exactly as PostgreSQL writes them with IntervalStyle iso_8601
// (PostgreSQL and DuckDB both store months, days and microseconds).
func TestJSONDurationsMatchPostgreSQL(t *testing.T) {
	ctx := context.Background()
	conn := pgtest.Connect(t, pgtest.Database(t))
	_, err := conn.Exec(ctx, "SET IntervalStyle = iso_8601")
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(21, 8601))
	ivs := []duckdb.Interval{{}, {Micros: 900_000_000}, {Days: -1, Micros: 7_200_000_000}, {Micros: -500_000}, {Micros: -90 * 60_000_000}, {Months: 14}, {Months: -1, Days: 1, Micros: 1}}
	for range 300 {
		ivs = append(ivs, duckdb.Interval{Months: r.Int32N(61) - 30, Days: r.Int32N(81) - 40, Micros: r.Int64N(400*3600*1e6) - 200*3600*1e6})
	}
	for _, iv := range ivs {
		var want string
		require.NoError(t, conn.QueryRow(ctx, "SELECT make_interval(months => $1, days => $2, secs => $3::numeric / 1000000)::text",
			iv.Months, iv.Days, iv.Micros).Scan(&want))
		require.Equal(t, want, duckfmt.Formatter{}.JSON(iv, duckfmt.ParseType("INTERVAL")), "%+v", iv)
	}
}

func TestJSONValues(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	f := duckfmt.Formatter{Location: berlin}
	instant := time.Date(2026, 3, 29, 0, 30, 0, 500_000_000, time.UTC)
	hugeint, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	for _, c := range []struct {
		typ  string
		v    any
		want string
	}{
		{"DECIMAL(18,6)", decimal.New(1500000, -6), `1.500000`},
		{"DECIMAL(18,6)[]", []any{duckdb.Decimal{Width: 18, Scale: 6, Value: big.NewInt(-5)}}, `[-0.000005]`},
		{"HUGEINT", hugeint, `123456789012345678901234567890`},
		{"UBIGINT", uint64(18446744073709551615), `18446744073709551615`},
		{"DOUBLE", 0.1, `0.1`},
		{"DOUBLE", 1e20, `1e+20`},
		{"FLOAT", float32(0.1), `0.1`},
		{"DOUBLE", nan(), `"NaN"`},
		{"TIMESTAMPTZ", instant, `"2026-03-29T01:30:00.5+01:00"`},
		{"TIMESTAMPTZ", instant.Add(2 * time.Hour), `"2026-03-29T04:30:00.5+02:00"`},
		{"TIMESTAMP", time.Date(2026, 3, 29, 2, 30, 0, 0, time.UTC), `"2026-03-29T02:30:00"`},
		{"DATE", time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC), `"2026-03-29"`},
		{"TIME", time.Date(1, 1, 1, 6, 0, 0, 0, time.UTC), `"06:00:00"`},
		{"TIMETZ", time.Date(1, 1, 1, 6, 0, 0, 0, time.FixedZone("", 7200)), `"06:00:00+02:00"`},
		{"INTERVAL", duckdb.Interval{Micros: 900_000_000}, `"PT15M"`},
		{"UUID", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, `"00000000-0000-0000-0000-000000000001"`},
		{"BLOB", []byte{0xaa, 'a'}, `"\\xAAa"`},
		{`STRUCT("b" INTEGER, "a" VARCHAR)`, map[string]any{"a": "x", "b": int32(1)}, `{"b":1,"a":"x"}`},
		{`UNION("n" INTEGER)`, duckdb.Union{Tag: "n", Value: int32(2)}, `{"n":2}`},
		{"JSON", json.RawMessage(`{"b":1,"a":12345678901234567890}`), `{"b":1,"a":12345678901234567890}`},
	} {
		b, err := json.Marshal(f.JSON(c.v, duckfmt.ParseType(c.typ)))
		require.NoError(t, err)
		require.Equal(t, c.want, string(b), "%s %#v", c.typ, c.v)
	}
}

func nan() float64 { z := 0.0; return z / z }
