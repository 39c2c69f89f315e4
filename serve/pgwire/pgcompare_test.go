package pgwire_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

// answer is what a server sent for one statement: its rows as text, or the
// SQLSTATE and message of its error.
type answer struct {
	rows      string
	code, msg string
}

func ask(t *testing.T, c *pgx.Conn, q string) answer {
	t.Helper()
	res, err := c.PgConn().Exec(context.Background(), q).ReadAll()
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return answer{code: pe.Code, msg: pe.Message}
	}
	require.NoError(t, err, q)
	var b strings.Builder
	for _, r := range res {
		for _, row := range r.Rows {
			for i, v := range row {
				if i > 0 {
					b.WriteByte('|')
				}
				if v == nil {
					b.WriteString("NULL")
				} else {
					b.Write(v)
				}
			}
			b.WriteByte('\n')
		}
	}
	return answer{rows: b.String()}
}

// TestPGWireAnswersLikePostgreSQL sends the same statements to a real
// PostgreSQL and to msql serve (both in UTC) and compares the text each sends —
// intervals, time, timestamptz, ±infinity, numeric, float, boolean, arrays — and the
// SQLSTATE of each error. msql's error messages carry no stage words of its
// own layers ("run: ", "database/sql/driver: API error: ").
func TestPGWireAnswersLikePostgreSQL(t *testing.T) {
	f := servetest.New(t)
	_, addr := f.StartPG(t, f.Users(t))
	ms := servetest.PGConnect(t, addr, "meterstore", "", pgx.QueryExecModeSimpleProtocol, nil)
	ref := pgtest.Connect(t, pgtest.Database(t))
	pgtest.Exec(t, ref, "SET TimeZone = 'UTC'")

	values := []string{
		`SELECT INTERVAL '45 days 45 minutes', INTERVAL '1 month 2 days', INTERVAL '1 year 2 months 3 days 04:05:06.5'`,
		`SELECT INTERVAL '-1 day', INTERVAL '0 seconds', INTERVAL '-00:00:01', INTERVAL '36 hours'`,
		`SELECT TIME '06:00:00', TIME '06:00:00.25', TIME '23:59:59.999999'`,
		`SELECT TIMESTAMPTZ '2025-10-26 01:30:00+00', TIMESTAMPTZ '2025-10-26 03:30:00.123+02', TIMESTAMP '2025-10-26 01:30:00'`,
		`SELECT TIMESTAMPTZ 'infinity', TIMESTAMPTZ '-infinity', TIMESTAMP 'infinity', DATE '-infinity', DATE 'infinity'`,
		`SELECT DATE '2025-10-26', 1.50::numeric(10,2), -0.000001::numeric(18,6), 123456789012345678::numeric(20,0)`,
		`SELECT 0.1::float8 + 0.2::float8, 1e300::float8, 1e15::float8, 1e14::float8, 0.0001::float8, 0.00001::float8, -2.5e-7::float8`,
		`SELECT 'Infinity'::float8, '-Infinity'::float8, 'NaN'::float8, 0::float8, 1.5::float4, 1e6::float4, 123456::float4`,
		`SELECT true, false, NULL::text, 'it''s', 42, -7::bigint`,
		`SELECT ARRAY(SELECT 'x' WHERE false), ARRAY['a', 'b c', '', 'NULL', 'x"y', 'back\slash', '{}', 'a,b'], ARRAY[1, 2, NULL], ARRAY[ARRAY[1, 2], ARRAY[3, 4]]`,
	}
	for _, q := range values {
		want, got := ask(t, ref, q), ask(t, ms, q)
		require.Empty(t, want.code, "PostgreSQL refused %s: %s", q, want.msg)
		require.Equal(t, want, got, "%s: PostgreSQL sent the first, msql serve the second", q)
	}

	errs := []string{
		`SELECT 1/0`,
		`SELECT 1 % 0`,
		`SELECT nosuch FROM (SELECT 1 AS a) t`,
		`SELEC 1`,
		`SELECT * FROM nosuch`,
		`SELECT 'abc'::int`,
	}
	for _, q := range errs {
		want, got := ask(t, ref, q), ask(t, ms, q)
		require.NotEmpty(t, want.code, "PostgreSQL answered %s", q)
		require.Equal(t, want.code, got.code, "%s: PostgreSQL %q, msql serve %q", q, want.msg, got.msg)
		requireNoStageWords(t, q, got.msg)
	}

	for _, q := range []string{
		`SELECT meter_expected_intervals(DATE '2025-10-26', 'PT7M')`,
		`SELECT nosuch FROM readings`,
		`SELECT count(*) FROM readings WHERE "from" > 'yesterday at noon'`,
	} {
		got := ask(t, ms, q)
		require.NotEmpty(t, got.code, q)
		requireNoStageWords(t, q, got.msg)
	}
}

func requireNoStageWords(t *testing.T, q, msg string) {
	t.Helper()
	for _, w := range []string{"run: ", "describe: ", "database/sql/driver", "API error"} {
		require.NotContains(t, msg, w, fmt.Sprintf("%s: the error names a stage of the server, not what went wrong: %s", q, msg))
	}
}
