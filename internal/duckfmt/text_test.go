package duckfmt_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/duckfmt"
	"github.com/meterstore/meterstore/internal/sqltext"
	"github.com/meterstore/meterstore/udf"
)

// literals generates SQL literals of one type from a seeded source.
type literals func(r *rand.Rand) string

// awkward strings: everything that makes DuckDB quote inside a nested value.
var awkward = []string{"a", "b c", " d", "e ", "f,g", "h'i", `j"k`, "[l]", "{m}", "n:o", "p=q", "NULL", "null", "",
	`r\s`, "t(u)", "Zähler|1", "x\ty", "\tz", "ä"}

func randomString(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return awkward[r.IntN(len(awkward))]
	}
	const alphabet = "ab ,'\"[]{}():=\\-_.0123456789äöü"
	n := r.IntN(8)
	var b strings.Builder
	for range n {
		b.WriteRune([]rune(alphabet)[r.IntN(len([]rune(alphabet)))])
	}
	return b.String()
}

func randomDouble(r *rand.Rand) float64 {
	specials := []float64{0, math.Copysign(0, -1), 0.1, 1.0 / 3, 1e15, 1e16, 9999999999999998, 1e-4, 1e-5, 123456789, 1.5, -2.25, math.MaxFloat64, math.SmallestNonzeroFloat64, 1e20, 1e21, 1e22}
	if r.IntN(3) == 0 {
		return specials[r.IntN(len(specials))]
	}
	for {
		f := math.Float64frombits(r.Uint64())
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			if r.IntN(2) == 0 { // also values of ordinary size
				f = (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(40)-20))
			}
			return f
		}
	}
}

func randomInstant(r *rand.Rand) time.Time {
	// 1 BC … 9999 AD, microseconds
	lo := time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	hi := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).UnixMicro()
	if r.IntN(3) == 0 { // near today, where metering lives
		lo, hi = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	}
	us := lo + r.Int64N(hi-lo)
	switch r.IntN(4) { // whole seconds and round fractions are common
	case 0:
		us -= us % 1_000_000
	case 1:
		us -= us % 1000
	}
	return time.UnixMicro(us).UTC()
}

// isoLiteral writes an instant as DuckDB reads it (years before 1 as BC).
func isoLiteral(t time.Time, nanos bool) string {
	y := t.Year()
	era := ""
	if y <= 0 {
		y, era = 1-y, " (BC)"
	}
	frac := fmt.Sprintf("%06d", t.Nanosecond()/1000)
	if nanos {
		frac = fmt.Sprintf("%09d", t.Nanosecond())
	}
	return fmt.Sprintf("%04d-%02d-%02d%s %02d:%02d:%02d.%s", y, t.Month(), t.Day(), era, t.Hour(), t.Minute(), t.Second(), frac)
}

var scalarCases = map[string]literals{
	"BOOLEAN":  func(r *rand.Rand) string { return []string{"true", "false"}[r.IntN(2)] },
	"TINYINT":  func(r *rand.Rand) string { return strconv.Itoa(r.IntN(256) - 128) },
	"INTEGER":  func(r *rand.Rand) string { return strconv.FormatInt(int64(r.Int32())-int64(r.Int32()), 10) },
	"BIGINT":   func(r *rand.Rand) string { return strconv.FormatInt(int64(r.Uint64()), 10) },
	"UBIGINT":  func(r *rand.Rand) string { return strconv.FormatUint(r.Uint64(), 10) },
	"HUGEINT":  func(r *rand.Rand) string { return fmt.Sprintf("%d%019d", int64(r.Uint64())/10, r.Uint64()%1e19) },
	"UHUGEINT": func(r *rand.Rand) string { return fmt.Sprintf("%d%019d", r.Uint64()/10, r.Uint64()%1e19) },
	"DECIMAL(18,6)": func(r *rand.Rand) string {
		return fmt.Sprintf("%d.%06d", r.Int64N(1e12)-5e11, r.IntN(1e6))
	},
	"DECIMAL(4,1)":  func(r *rand.Rand) string { return fmt.Sprintf("%.1f", float64(r.IntN(19999)-9999)/10) },
	"DECIMAL(20,0)": func(r *rand.Rand) string { return fmt.Sprintf("%d", r.Uint64()/10) },
	"DECIMAL(38,10)": func(r *rand.Rand) string {
		return fmt.Sprintf("-%d%010d.%010d", r.Uint64()%1e18, r.Uint64()%1e10, r.Uint64()%1e10)
	},
	"DECIMAL(9,3)": func(r *rand.Rand) string { return fmt.Sprintf("%d.%03d", r.IntN(999999), r.IntN(1000)) },
	"DOUBLE": func(r *rand.Rand) string {
		if r.IntN(10) == 0 {
			return sqltext.String([]string{"nan", "inf", "-inf"}[r.IntN(3)])
		}
		return sqltext.String(strconv.FormatFloat(randomDouble(r), 'g', -1, 64))
	},
	"FLOAT": func(r *rand.Rand) string {
		return sqltext.String(strconv.FormatFloat(float64(float32(randomDouble(r)/1e280)), 'g', -1, 32))
	},
	"VARCHAR": func(r *rand.Rand) string { return sqltext.String(randomString(r)) },
	"BLOB": func(r *rand.Rand) string {
		b := make([]byte, r.IntN(6))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return fmt.Sprintf("unhex('%x')", b)
	},
	"UUID": func(r *rand.Rand) string { return fmt.Sprintf("'%016x%016x'", r.Uint64(), r.Uint64()) },
	"DATE": func(r *rand.Rand) string {
		if r.IntN(12) == 0 {
			return sqltext.String([]string{"infinity", "-infinity"}[r.IntN(2)])
		}
		t := randomInstant(r)
		return sqltext.String(isoLiteral(t, false)[:len("2006-01-02")] + bcOf(t))
	},
	"TIME": func(r *rand.Rand) string { return sqltext.String(isoLiteral(randomInstant(r), false)[11:]) },
	"TIMETZ": func(r *rand.Rand) string {
		off := (r.IntN(31) - 15) * 1800
		return sqltext.String(isoLiteral(randomInstant(r), false)[11:] + offsetLiteral(off))
	},
	"TIMESTAMP": func(r *rand.Rand) string {
		if r.IntN(12) == 0 {
			return sqltext.String([]string{"infinity", "-infinity"}[r.IntN(2)])
		}
		return sqltext.String(isoLiteral(randomInstant(r), false))
	},
	"TIMESTAMP_S":  func(r *rand.Rand) string { return sqltext.String(isoLiteral(randomInstant(r), false)) },
	"TIMESTAMP_MS": func(r *rand.Rand) string { return sqltext.String(isoLiteral(randomInstant(r), false)) },
	"TIMESTAMP_NS": func(r *rand.Rand) string {
		t := time.Date(1700+r.IntN(500), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1e9), time.UTC)
		return sqltext.String(isoLiteral(t, true))
	},
	"TIMESTAMPTZ": func(r *rand.Rand) string {
		if r.IntN(12) == 0 {
			return sqltext.String([]string{"infinity", "-infinity"}[r.IntN(2)])
		}
		t := randomInstant(r)
		if t.Year() < 1900 { // before standard time, zones had local mean time offsets
			t = t.AddDate(2000-t.Year(), 0, 0)
		}
		return sqltext.String(isoLiteral(t, false) + "+00")
	},
	"INTERVAL": func(r *rand.Rand) string {
		m, d, us := r.IntN(61)-30, r.IntN(81)-40, r.Int64N(400*3600*1e6)-200*3600*1e6
		switch r.IntN(4) {
		case 0:
			m = 0
		case 1:
			d = 0
		case 2:
			us -= us % 1_000_000
		}
		if r.IntN(5) == 0 {
			us = 0
		}
		return fmt.Sprintf("(to_months(%d) + to_days(%d) + to_microseconds(%d))", m, d, us)
	},
	"BIT":              func(r *rand.Rand) string { return fmt.Sprintf("'%b'", 1+r.IntN(1000)) },
	"ENUM('a', 'b c')": func(r *rand.Rand) string { return []string{"'a'", "'b c'"}[r.IntN(2)] },
}

func bcOf(t time.Time) string {
	if t.Year() <= 0 {
		return " (BC)"
	}
	return ""
}

func offsetLiteral(sec int) string {
	sign := "+"
	if sec < 0 {
		sign, sec = "-", -sec
	}
	return fmt.Sprintf("%s%02d:%02d", sign, sec/3600, sec/60%60)
}

// nestedCases build containers of the scalar cases.
func nestedCases() map[string]literals {
	out := map[string]literals{}
	for typ, lit := range scalarCases {
		if strings.HasPrefix(typ, "ENUM") {
			continue
		}
		out[typ+"[]"] = func(r *rand.Rand) string {
			n := r.IntN(4)
			parts := make([]string, n)
			for i := range parts {
				parts[i] = lit(r) + "::" + typ
				if r.IntN(6) == 0 {
					parts[i] = "NULL::" + typ
				}
			}
			return "[" + strings.Join(parts, ", ") + "]::" + typ + "[]"
		}
	}
	out[`STRUCT("k" VARCHAR, "when" TIMESTAMPTZ, "v" DECIMAL(18,6), "l" INTEGER[], "s p" INTERVAL)`] = func(r *rand.Rand) string {
		return fmt.Sprintf("{'k': %s, 'when': %s::TIMESTAMPTZ, 'v': %s::DECIMAL(18,6), 'l': [1, NULL, 3], 's p': %s}",
			scalarCases["VARCHAR"](r), scalarCases["TIMESTAMPTZ"](r), scalarCases["DECIMAL(18,6)"](r), scalarCases["INTERVAL"](r))
	}
	out["MAP(VARCHAR, DATE)"] = func(r *rand.Rand) string {
		return fmt.Sprintf("MAP {%s: %s::DATE, 'z': NULL}", scalarCases["VARCHAR"](r), scalarCases["DATE"](r))
	}
	out["INTEGER[][]"] = func(r *rand.Rand) string { return fmt.Sprintf("[[%d, NULL], [], NULL]", r.IntN(100)) }
	out["VARCHAR[2]"] = func(r *rand.Rand) string {
		return fmt.Sprintf("[%s, %s]::VARCHAR[2]", scalarCases["VARCHAR"](r), scalarCases["VARCHAR"](r))
	}
	out["TIMESTAMPTZ[3]"] = func(r *rand.Rand) string {
		return fmt.Sprintf("[%s, NULL, %s]::TIMESTAMPTZ[3]", scalarCases["TIMESTAMPTZ"](r), scalarCases["TIMESTAMPTZ"](r))
	}
	out["STRUCT(\"x\" VARCHAR)[2]"] = func(r *rand.Rand) string {
		return fmt.Sprintf("[{'x': %s}, NULL]::STRUCT(x VARCHAR)[2]", scalarCases["VARCHAR"](r))
	}
	out[`UNION("n" INTEGER, "t" TIME)`] = func(r *rand.Rand) string {
		if r.IntN(2) == 0 {
			return fmt.Sprintf("union_value(n := %d)", r.IntN(100))
		}
		return fmt.Sprintf("union_value(t := %s::TIME)", scalarCases["TIME"](r))
	}
	out[`STRUCT("a" STRUCT("b" VARCHAR[]))[]`] = func(r *rand.Rand) string {
		return fmt.Sprintf("[{'a': {'b': [%s, NULL]}}, NULL]", scalarCases["VARCHAR"](r))
	}
	return out
}

// TestTextMatchesDuckDB is the independent check of Text: for generated
// values of every type, and containers of them, Text of the value duckdb-go
// hands over equals DuckDB's own CAST(value AS VARCHAR).
func TestTextMatchesDuckDB(t *testing.T) {
	db, err := udf.Open("")
	require.NoError(t, err)
	defer db.Close()
	cases := nestedCases()
	for k, v := range scalarCases {
		cases[k] = v
	}
	for _, zone := range []string{"UTC", "Europe/Berlin", "Asia/Kolkata", "America/St_Johns"} {
		loc, err := time.LoadLocation(zone)
		require.NoError(t, err)
		f := duckfmt.Formatter{Location: loc}
		conn := mustConn(t, db, zone)
		for typ, lit := range cases {
			t.Run("zone="+zone+",type="+typ, func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(len(typ)), 21))
				n := 40
				if zone != "UTC" && !strings.Contains(typ, "TIMESTAMPTZ") && !strings.HasPrefix(typ, "STRUCT") {
					n = 3 // only instants depend on the zone
				}
				vals := make([]string, n)
				for i := range vals {
					vals[i] = "(" + lit(r) + "::" + typ + ")"
				}
				q := fmt.Sprintf("SELECT x, CAST(x AS VARCHAR) FROM (VALUES %s, (NULL::%s)) v(x)", strings.Join(vals, ", "), typ)
				rows, err := conn.QueryContext(context.Background(), q)
				require.NoError(t, err, q)
				defer rows.Close()
				cols, err := rows.ColumnTypes()
				require.NoError(t, err)
				ty := duckfmt.ParseType(cols[0].DatabaseTypeName())
				require.NotEqual(t, duckfmt.Unknown, ty.Kind, cols[0].DatabaseTypeName())
				seen := 0
				for rows.Next() {
					vs, err := engine.ScanValues(rows, 2)
					require.NoError(t, err)
					want := "NULL"
					if vs[1] != nil {
						want = vs[1].(string)
					}
					require.Equal(t, want, f.Text(vs[0], ty), "value %#v of %s", vs[0], cols[0].DatabaseTypeName())
					seen++
				}
				require.NoError(t, rows.Err())
				require.Equal(t, n+1, seen)
			})
		}
	}
}

func mustConn(t *testing.T, db *sql.DB, zone string) *sql.Conn {
	t.Helper()
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = conn.ExecContext(context.Background(), "SET TimeZone = "+sqltext.String(zone))
	require.NoError(t, err)
	return conn
}
