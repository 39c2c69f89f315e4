package duckstream

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

// literalCase is a statement and arguments whose answer, as text, must not
// change when the arguments are written into the statement.
type literalCase struct {
	q    string
	args []any
}

func literalCases(t *testing.T) []literalCase {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	instant := time.Date(2025, 10, 26, 2, 30, 15, 123456789, berlin)
	day := time.Date(2025, 3, 30, 0, 0, 0, 0, time.UTC)
	const typed = `SELECT CAST(v AS VARCHAR), typeof(v) FROM (SELECT $1 AS v)`
	var cases []literalCase
	for _, v := range []any{"it's", "", `a\b ä`, int64(-9223372036854775808), 7, uint32(9), int8(-3), 0.1, float32(1.5),
		math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), true, false, nil, []byte{0, 1, 'x', '\'', '\\', 255},
		decimal.RequireFromString("123.456789"), decimal.RequireFromString("-0.000001"), instant, day,
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)} {
		cases = append(cases, literalCase{typed, []any{v}})
	}
	for _, v := range []any{day, time.Date(2025, 3, 30, 12, 0, 0, 0, berlin), "2025-03-30", instant} {
		cases = append(cases,
			literalCase{`SELECT CAST(d >= $1 AS VARCHAR), CAST(d = $1 AS VARCHAR), typeof($1) FROM (SELECT DATE '2025-03-30' AS d)`, []any{v}},
			literalCase{`SELECT CAST(ts >= $1 AS VARCHAR), CAST(ts = $1 AS VARCHAR), typeof($1) FROM (SELECT TIMESTAMPTZ '2025-03-30 01:30:00+01' AS ts)`, []any{v}},
			literalCase{`SELECT CAST(ts >= $1 AS VARCHAR), CAST(ts = $1 AS VARCHAR) FROM (SELECT TIMESTAMP '2025-03-30 00:00:00' AS ts)`, []any{v}})
	}
	cases = append(cases,
		literalCase{`SELECT CAST(v >= $1 AS VARCHAR), CAST(v + $1 AS VARCHAR) FROM (SELECT CAST('0.5' AS DECIMAL(18,6)) AS v)`, []any{decimal.RequireFromString("0.4999995")}},
		literalCase{`SELECT CAST(coalesce($2, $1) AS VARCHAR), '$1 stays text', "$2" FROM (SELECT 1 AS "$2")`, []any{"first", nil}},
		literalCase{`SELECT CAST($malo = '1' AS VARCHAR) /* $malo */, CAST(d AS VARCHAR) FROM (SELECT $day AS d)`, []any{sql.Named("malo", "1"), sql.Named("day", day)}},
	)
	return cases
}

// sessionConn is a connection of a fresh database in Europe/Berlin, where
// an instant's text, a cast to DATE or TIMESTAMP depend on the zone.
func sessionConn(t *testing.T, ctx context.Context, db *sql.DB) *sql.Conn {
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "SET TimeZone = 'Europe/Berlin'")
	require.NoError(t, err)
	return conn
}

// answerText runs q on conn through a stream, kept as prepared by kept if
// not nil, and gives its one row as text.
func answerText(t *testing.T, ctx context.Context, conn *sql.Conn, kept *Prepared, q string, args []any) []string {
	t.Helper()
	var stream *sql.DB
	var err error
	if kept != nil {
		stream, err = kept.Open(DriverDecimals, func() error { return nil })
	} else {
		stream, err = Open(conn, DriverDecimals, func() error { return nil })
	}
	require.NoError(t, err)
	defer stream.Close()
	rows, err := stream.QueryContext(ctx, q, args...)
	require.NoError(t, err, "%s %v", q, args)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	require.True(t, rows.Next(), "%s: a row", q)
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	require.NoError(t, rows.Scan(ptrs...))
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = fmt.Sprint(v)
	}
	return out
}

// TestPrepareBoundAnswersAsBound: a statement prepared with its arguments
// written in as literals runs without arguments and answers exactly what it
// answers with them bound — text, type and comparisons alike — for strings,
// integers, floats (NaN, infinities, -0), booleans, NULL, blobs, decimals,
// instants with their zone, calendar days, named parameters; and leaves
// alone what only looks like a parameter (in a literal, an identifier, a
// comment).
func TestPrepareBoundAnswersAsBound(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	for _, c := range literalCases(t) {
		conn := sessionConn(t, ctx, db)
		want := answerText(t, ctx, conn, nil, c.q, c.args)
		p, err := PrepareBound(ctx, conn, c.q, c.args)
		require.NoError(t, err, "%s %v", c.q, c.args)
		require.True(t, p.Bound(), "%s %v: every argument has a literal", c.q, c.args)
		for range 2 {
			require.Equal(t, want, answerText(t, ctx, conn, p, p.Query(), nil), "%s %v as %s", c.q, c.args, p.Query())
		}
		require.NoError(t, p.Close())
	}
}

// TestPrepareBoundLeavesWhatItCannotWrite: an argument duckdb-go binds by
// rules of its own (an interval; a time.Time to a TIME) keeps the
// statement's parameters, bound at each run.
func TestPrepareBoundLeavesWhatItCannotWrite(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	clock := time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)
	for q, args := range map[string][]any{
		`SELECT CAST($1 AS VARCHAR)`:                                        {duckdb.Interval{Days: 1}},
		`SELECT CAST(t = $1 AS VARCHAR) FROM (SELECT TIME '10:00:00' AS t)`: {clock},
	} {
		conn := sessionConn(t, ctx, db)
		want := answerText(t, ctx, conn, nil, q, args)
		p, err := PrepareBound(ctx, conn, q, args)
		require.NoError(t, err)
		require.False(t, p.Bound(), "%v", args)
		require.Equal(t, q, p.Query())
		require.Equal(t, want, answerText(t, ctx, conn, p, q, args))
		require.NoError(t, p.Close())
	}
}
