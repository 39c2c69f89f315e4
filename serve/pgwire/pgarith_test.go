package pgwire_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

// typedAnswer is what a server sent for one statement: the type of each
// column, its rows as text, or the SQLSTATE and message of its error.
type typedAnswer struct {
	oids      []uint32
	rows      [][]string // NULL as "NULL"
	code, msg string
}

func (a typedAnswer) text() string {
	var b strings.Builder
	for _, r := range a.rows {
		b.WriteString(strings.Join(r, "|"))
		b.WriteByte('\n')
	}
	return b.String()
}

func askTyped(t *testing.T, c *pgx.Conn, q string) typedAnswer {
	t.Helper()
	res, err := c.PgConn().Exec(context.Background(), q).ReadAll()
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return typedAnswer{code: pe.Code, msg: pe.Message}
	}
	require.NoError(t, err, q)
	var a typedAnswer
	for _, r := range res {
		for _, fd := range r.FieldDescriptions {
			a.oids = append(a.oids, fd.DataTypeOID)
		}
		for _, row := range r.Rows {
			var vals []string
			for _, v := range row {
				if v == nil {
					vals = append(vals, "NULL")
				} else {
					vals = append(vals, string(v))
				}
			}
			a.rows = append(a.rows, vals)
		}
	}
	return a
}

// arithOutcome is what msql serve is allowed to answer for one statement,
// compared with what PostgreSQL answers.
type arithOutcome int

const (
	// same: the same text (or the same SQLSTATE).
	same arithOutcome = iota
	// float8: PostgreSQL answers numeric, msql serve float8 — the type says
	// so in RowDescription — and each value is PostgreSQL's to float8's
	// precision (15 significant digits).
	float8
	// float8Statistic: as float8, for a statistic DuckDB accumulates in
	// float8 (the variance family): each thread folds its rows with Welford's
	// update and the partial states merge in the order threads finish, so
	// the last digits change from run to run (1.3e-15 relative seen). Equal
	// to 13 significant digits, never worse.
	float8Statistic
	// scale: both answer numeric, the same number with another count of
	// decimals (1000.0 for 1000).
	scale
	// refused: PostgreSQL answers, msql serve refuses with this SQLSTATE
	// (where DuckDB's answer would differ and cannot be made equal).
	refused
)

type arithCase struct {
	sql  string
	want arithOutcome
	code string // refused: the SQLSTATE
}

const (
	oidNumeric = 1700
	oidFloat8  = 701
)

// TestPGWireArithmeticAsPostgreSQL sends arithmetic and aggregates over
// literals and over readings' values (numeric(18,6)) to a real PostgreSQL
// holding the same values and to msql serve, and checks that msql serve
// answers each as PostgreSQL does, answers float8 where PostgreSQL answers
// numeric (announced as float8, equal to 15 significant digits), or refuses
// — never a different number without an error.
func TestPGWireArithmeticAsPostgreSQL(t *testing.T) {
	f := servetest.New(t)
	_, addr := f.StartPG(t, f.Users(t))
	ms := servetest.PGConnect(t, addr, "meterstore", "", pgx.QueryExecModeSimpleProtocol, nil)
	ref := pgtest.Connect(t, pgtest.Database(t))
	pgtest.Exec(t, ref, "SET TimeZone = 'UTC'")
	copyReadings(t, ms, ref)

	cases := []arithCase{
		// integer division truncates toward zero
		{sql: `SELECT 7/2, -7/2, 7/-2, 1/3, 2/3*3`},
		{sql: `SELECT 7::bigint/2, 7::smallint/2::smallint, 9223372036854775807/2`},
		{sql: `SELECT 5/2*2.0, 7/2*1.0, abs(-7/2)`},
		{sql: `SELECT count(*)/4, count(*)/96, sum(1)/7 FROM readings`},
		{sql: `SELECT 7 % 2, -7 % 3, 7 % -3, 7.5 % 2`},
		// numeric division and averages: float8 here, numeric in PostgreSQL
		{sql: `SELECT 7.0/2, 10/4.0, 7/2.5`, want: float8},
		{sql: `SELECT 1.0/3`, want: float8},
		{sql: `SELECT avg(x) FROM (VALUES (1),(2)) t(x)`, want: float8},
		{sql: `SELECT avg(value), sum(value)/count(*), sum(value)/4 FROM readings`, want: float8},
		{sql: `SELECT malo_id, avg(value) FROM readings GROUP BY 1 ORDER BY 1`, want: float8},
		// numeric arithmetic keeps PostgreSQL's scale
		{sql: `SELECT 0.1 + 0.2, 1.5 * 1.5, 1.500000::numeric(18,6) * 1.5::numeric(18,6), 2.50 - 0.5`},
		{sql: `SELECT sum(value), min(value), max(value), count(*), count(value) FROM readings`},
		{sql: `SELECT malo_id, sum(value), sum(value * 4), sum(value) * 4, sum(value) - min(value) FROM readings GROUP BY 1 ORDER BY 1`},
		{sql: `SELECT round(sum(value), 2), round(max(value), 3), round(sum(value)) FROM readings`},
		{sql: `SELECT sum(x), count(*) FROM (VALUES (1),(2)) t(x)`},
		// numeric without precision and scale
		{sql: `SELECT 1.23456::numeric`, want: refused, code: "0A000"},
		{sql: `SELECT CAST(1.23456 AS numeric)`, want: refused, code: "0A000"},
		{sql: `SELECT '1.23456'::decimal`, want: refused, code: "0A000"},
		{sql: `SELECT sum(value)::numeric FROM readings`, want: refused, code: "0A000"},
		{sql: `SELECT 1.23456::numeric(10,5), CAST(value AS numeric(18,6)) FROM readings ORDER BY malo_id, "from" LIMIT 3`},
		// round(): numeric half away from zero, float8 half to even
		{sql: `SELECT round(2.5), round(-2.5), round(2.345, 2), round(-0.5)`},
		{sql: `SELECT round(2.4::float8), round(-3.7::float8), round(2.6::float8)`},
		{sql: `SELECT round(2.5::float8)`, want: refused, code: "0A000"},
		{sql: `SELECT round(-0.5::float8)`, want: refused, code: "0A000"},
		{sql: `SELECT round(avg(x)) FROM (VALUES (2),(3)) t(x)`, want: refused, code: "0A000"},
		{sql: `SELECT round(avg(x)) FROM (VALUES (2),(4)) t(x)`},
		// casts to integers: numeric half away from zero, float8 half to even
		{sql: `SELECT 2.5::int, -2.5::int, 3.5::bigint, CAST(2.5 AS smallint), 2.4::float8::int, 2.6::float8::int4`},
		{sql: `SELECT max(value)::int, CAST(sum(value) AS bigint), (sum(value) * 2)::int8 FROM readings`},
		{sql: `SELECT '42'::int, CAST('7' AS integer), (SELECT count(*) FROM readings)::int, (CASE WHEN true THEN 2 END)::int`},
		{sql: `SELECT avg(x)::int FROM (VALUES (2),(3)) t(x)`, want: refused, code: "0A000"},
		{sql: `SELECT CAST(avg(x) AS bigint) FROM (VALUES (2),(3)) t(x)`, want: refused, code: "0A000"},
		{sql: `SELECT (sum(x) / 2.0)::int FROM (VALUES (2),(3)) t(x)`, want: refused, code: "0A000"},
		{sql: `SELECT avg(x) FILTER (WHERE x > 0)::int FROM (VALUES (2),(3)) t(x)`, want: refused, code: "0A000"},
		{sql: `SELECT 2.5::float8::int`, want: refused, code: "0A000"},
		{sql: `SELECT avg(x)::int, (sum(x)/2.0)::int FROM (VALUES (2),(4)) t(x)`},
		// the fraction of a second
		{sql: `SELECT extract(second FROM TIMESTAMPTZ '2025-01-01 00:00:30.5+00'), extract(SECOND FROM TIMESTAMP '2025-01-01 00:00:07.25'), extract(second FROM INTERVAL '90.5 seconds'), extract(second FROM TIME '10:00:30.5')`},
		{sql: `SELECT date_part('second', TIMESTAMPTZ '2025-01-01 00:00:30.5+00'), date_part('second', INTERVAL '90.5 seconds')`},
		{sql: `SELECT extract(second FROM "from"), extract(minute FROM "from"), extract(hour FROM "from") FROM readings ORDER BY malo_id, "from" LIMIT 3`},
		// functions and aggregates
		{sql: `SELECT mod(7, 2), mod(-7, 3), trunc(2.567, 2), trunc(-2.5), ceil(2.1), floor(-2.1), ceiling(2.5)`},
		{sql: `SELECT sqrt(2), abs(-2.5), sign(-2.5), exp(1), ln(10), log(100), log10(1000), cbrt(27), pi(), degrees(pi())`},
		{sql: `SELECT stddev(value), variance(value), stddev_pop(value) FROM readings`, want: float8Statistic},
		{sql: `SELECT count(DISTINCT malo_id), sum(DISTINCT value), max(value) - min(value), sum(value) FILTER (WHERE value > 0.1) FROM readings`},
		{sql: `SELECT 10 / 3 * 3, 10 % 3, -10 / 3, 2 + 3 * 4 / 2, '10'::int / 4, '7'::bigint / 2, length('abcd') / 3`},
		{sql: `SELECT 10 / -3.0, 5::numeric(10,2) / 2, sum(value) / 1000, sum(value) * 0.001, sum(value * 0.25) FROM readings`, want: float8},
		{sql: `SELECT extract(epoch FROM INTERVAL '15 minutes') / 3600, extract(epoch FROM TIMESTAMPTZ '2025-01-01 00:00:00+00')`, want: float8},
		{sql: `SELECT extract(dow FROM DATE '2025-01-05'), extract(isodow FROM DATE '2025-01-05'), extract(week FROM DATE '2025-01-01'), extract(doy FROM DATE '2025-12-31')`},
		{sql: `SELECT 3 / 2.0::float8, 3::float8 / 2, round(1.005, 2), round(2.675, 2), round(-1.5)`},
		{sql: `SELECT 5 BETWEEN 1 AND 10, 1 IN (1.0, 2), 1 = 1.0, 0.1 + 0.2 = 0.3, 0.1::float8 + 0.2::float8 = 0.3::float8`},
		{sql: `SELECT greatest(1, 2.5), least(1, 2.5), coalesce(NULL, 1.50)`, want: scale},
		// powers, precedence
		{sql: `SELECT 2^3^2, -2^2, 2*3^2, 2.0::float8^0.5`},
		{sql: `SELECT 1e3, 1.5e3, 2.5e-3`, want: scale},
		{sql: `SELECT 0.1::float8 + 0.2::float8, 1/3::float8, 7::float8/2, 7/2::float4`},
		// overflow is an error in both
		{sql: `SELECT 2147483647 + 1`},
		{sql: `SELECT 1000000 * 1000000`},
		{sql: `SELECT 9223372036854775807 + 1`},
		// dates, strings, NULL
		{sql: `SELECT DATE '2025-01-03' - DATE '2025-01-01', DATE '2025-01-03' - 1, DATE '2025-01-03' + 1`},
		{sql: `SELECT 'a' || NULL, NULL || 'a', 'a' || 1`},
		{sql: `SELECT INTERVAL '1 hour' * 0.5, INTERVAL '1 day' * 2`},
		{sql: `SELECT INTERVAL '1 hour' / 2`, want: refused, code: "0A000"},
		{sql: `SELECT 'a' < 'b', 'a' < 'B', 'Z' < 'a'`},
	}
	var diffs []string
	for _, c := range cases {
		want, got := askTyped(t, ref, c.sql), askTyped(t, ms, c.sql)
		if d := arithDiff(c, want, got); d != "" {
			diffs = append(diffs, d)
		}
	}
	require.Empty(t, diffs, "msql serve answers differently from PostgreSQL:\n%s", strings.Join(diffs, "\n"))

	// The extended protocol divides bound integers as PostgreSQL does.
	ext := servetest.PGConnect(t, addr, "meterstore", "", pgx.QueryExecModeCacheStatement, nil)
	var q, r int64
	require.NoError(t, ext.QueryRow(context.Background(), `SELECT $1::int / 2, $2::bigint / -2`, 7, 7).Scan(&q, &r))
	require.Equal(t, []int64{3, -3}, []int64{q, r})
}

// arithDiff says how got (msql serve) breaks c's rule against want
// (PostgreSQL), or "" when it keeps it.
func arithDiff(c arithCase, want, got typedAnswer) string {
	show := func(a typedAnswer) string {
		if a.code != "" {
			return fmt.Sprintf("%s %s", a.code, a.msg)
		}
		return fmt.Sprintf("%v %q", a.oids, a.text())
	}
	bad := fmt.Sprintf("%s\n   PostgreSQL: %s\n   msql serve: %s", c.sql, show(want), show(got))
	if want.code != "" {
		if c.want != same || got.code != want.code {
			return bad
		}
		return ""
	}
	switch c.want {
	case refused:
		if got.code != c.code {
			return bad
		}
		return ""
	case same:
		if got.code != "" || got.text() != want.text() {
			return bad
		}
		return ""
	}
	if got.code != "" || len(got.rows) != len(want.rows) {
		return bad
	}
	for i, row := range want.rows {
		if len(got.rows[i]) != len(row) {
			return bad
		}
		for j, w := range row {
			g := got.rows[i][j]
			if g == w {
				continue
			}
			if c.want == float8 && (want.oids[j] != oidNumeric || got.oids[j] != oidFloat8 || !sameToFloat8(w, g, 15)) {
				return bad
			}
			if c.want == float8Statistic && (want.oids[j] != oidNumeric || got.oids[j] != oidFloat8 || !sameToFloat8(w, g, 13)) {
				return bad
			}
			if c.want == scale && (want.oids[j] != oidNumeric || got.oids[j] != oidNumeric || !sameDecimal(w, g)) {
				return bad
			}
		}
	}
	return ""
}

// sameToFloat8: PostgreSQL's numeric text w and msql's float8 text g are one
// number to digits significant digits.
func sameToFloat8(w, g string, digits int) bool {
	a, err1 := strconv.ParseFloat(w, 64)
	b, err2 := strconv.ParseFloat(g, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	return strconv.FormatFloat(a, 'g', digits, 64) == strconv.FormatFloat(b, 'g', digits, 64) ||
		math.Abs(a-b) <= math.Pow10(-digits)*math.Max(math.Abs(a), math.Abs(b))
}

// sameDecimal: w and g are one decimal number, whatever their scale.
func sameDecimal(w, g string) bool {
	a, err1 := decimal.NewFromString(w)
	b, err2 := decimal.NewFromString(g)
	return err1 == nil && err2 == nil && a.Equal(b)
}

// copyReadings creates readings(malo_id, "from", value numeric(18,6)) in the
// reference PostgreSQL holding what msql serve answers for readings.
func copyReadings(t *testing.T, ms, ref *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	rows := askTyped(t, ms, `SELECT malo_id, "from", value FROM readings`)
	require.Empty(t, rows.code, rows.msg)
	require.NotEmpty(t, rows.rows)
	pgtest.Exec(t, ref, `CREATE TABLE readings (malo_id text, "from" timestamptz, value numeric(18,6))`)
	cols := make([][]string, 3)
	for _, r := range rows.rows {
		for i := range cols {
			cols[i] = append(cols[i], r[i])
		}
	}
	_, err := ref.Exec(ctx, `INSERT INTO readings SELECT unnest($1::text[]), unnest($2::text[])::timestamptz, unnest($3::text[])::numeric`,
		cols[0], cols[1], cols[2])
	require.NoError(t, err)
}
