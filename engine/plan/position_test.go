package plan

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/metering"
)

func TestInUserStatementPointsIntoTheUsersText(t *testing.T) {
	ran := `SELECT malo_id, sum(valu) FROM ((SELECT * FROM (SELECT malo_id, melo_id, obis_code FROM x))) AS readings WHERE (r.foo = 1)`
	for _, c := range []struct{ user, duck, want string }{
		{
			user: "SELECT malo_id, sum(valu) FROM readings GROUP BY 1",
			duck: "Binder Error: Referenced column \"valu\" not found in FROM clause!\n\nLINE 1: SELECT malo_id, sum(valu) FROM ((SELECT * FROM (SELECT malo_id, melo_id, obis_code...\n                            ^",
			want: "Binder Error: Referenced column \"valu\" not found in FROM clause!\n\nLINE 1: SELECT malo_id, sum(valu) FROM readings GROUP BY 1\n                            ^",
		},
		{
			user: "SELECT *\nFROM readings r\nWHERE r.foo = 1",
			duck: "Binder Error: Values list \"r\" does not have a column named \"foo\"\n\nLINE 1: ...obis_code FROM x))) AS readings WHERE (r.foo = 1)\n                                                  ^",
			want: "Binder Error: Values list \"r\" does not have a column named \"foo\"\n\nLINE 3: WHERE r.foo = 1\n              ^",
		},
		{ // a word of any letters is one token: zählerstand occurs once, z and (z do not
			user: "SELECT zähler FROM readings WHERE zählerstand > 1",
			duck: "Binder Error: no zählerstand\n\nLINE 1: ...obis_code FROM x))) AS readings WHERE (zählerstand > 1)\n                                                  ^",
			want: "Binder Error: no zählerstand\n\nLINE 1: SELECT zähler FROM readings WHERE zählerstand > 1\n                                          ^",
		},
		{ // the text occurs twice in the user's statement: no caret rather than a wrong one
			user: "SELECT r.foo = 1, 1 FROM readings r WHERE r.foo = 1",
			duck: "Binder Error: no foo\n\nLINE 1: ...obis_code FROM x))) AS readings WHERE (r.foo = 1)\n                                                  ^",
			want: "Binder Error: no foo",
		},
	} {
		base := errors.New(c.duck)
		got := InUserStatement(base, c.user, ran)
		require.Equal(t, c.want, got.Error())
		require.ErrorIs(t, got, base)
	}
	plain := errors.New("Conversion Error: no context")
	require.Equal(t, plain, InUserStatement(plain, "SELECT 1", ran))
}

func TestParseErrorCaret(t *testing.T) {
	require.Equal(t, "parse: syntax error at end of input\n\nLINE 1: SELECT 1 +\n                  ^", parseError("SELECT 1 +", "syntax error at end of input", 10).Error())
	require.Equal(t, "parse: syntax error at or near \"x\"\n\nLINE 2: FRM x\n            ^", parseError("SELECT *\nFRM x", `syntax error at or near "x"`, 13).Error())
	require.Equal(t, "parse: odd", parseError("SELECT", "odd", -1).Error())
}

// Every instant's balancing day, in every Sparte, lies in the span dayRange
// gives that day — across both DST changes and the gas day's 06:00 start.
func TestDayRangeHoldsEveryRowOfTheDay(t *testing.T) {
	start := time.Date(2025, 3, 28, 0, 0, 0, 0, time.UTC)
	for at := start; at.Before(start.AddDate(0, 7, 5)); at = at.Add(15 * time.Minute) {
		for _, s := range metering.Sparten() {
			r := dayRange(metering.BalancingDay(at, s))
			require.False(t, at.Before(r.lo) || !at.Before(r.hi), "%s %s", at, s)
		}
	}
}

// TestUnimplementedSyntaxIsAParseError: a query using syntax DuckDB's parser
// does not implement (BETWEEN SYMMETRIC) is refused as that, naming DuckDB's
// words — not as "SELECT is not a query", which sent the user looking for a
// statement-kind problem in a plain SELECT.
func TestUnimplementedSyntaxIsAParseError(t *testing.T) {
	conn := duckConn(t)
	for _, q := range []string{
		`SELECT * FROM readings WHERE "from" BETWEEN SYMMETRIC TIMESTAMPTZ '2025-10-25' AND TIMESTAMPTZ '2025-10-24'`,
		`WITH x AS (SELECT 1 AS a) SELECT * FROM x WHERE a NOT BETWEEN SYMMETRIC 3 AND 1`,
	} {
		_, err := serialize(context.Background(), conn, q)
		var parse *ParseError
		require.ErrorAs(t, err, &parse, q)
		require.Contains(t, err.Error(), "not implemented", q)
		require.NotContains(t, err.Error(), "is not a query", q)
	}
	for q, want := range map[string]string{
		`PRAGMA version`:                 "PRAGMA is not a query",
		`COPY readings TO '/tmp/x'`:      "COPY changes data",
		`SET TimeZone = 'UTC'`:           "SET is not a query",
		`EXPLAIN SELECT * FROM range(1)`: "EXPLAIN is not a query",
	} {
		_, err := serialize(context.Background(), conn, q)
		require.ErrorIs(t, err, ErrNotAQuery, q)
		require.Contains(t, err.Error(), want, q)
	}
}
