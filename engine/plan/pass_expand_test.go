package plan

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/duckstream"
)

// TestExpandCompleteness: meter_completeness(…) becomes its statement over the
// resolved relation, found by the next pass like any reference; its arguments
// are evaluated with the statement's parameters, and wrong ones are refused
// naming the argument.
func TestExpandCompleteness(t *testing.T) {
	e := testSession(t, nil)
	pl, err := planThrough(t, e, `SELECT * FROM meter_completeness($1, '2025-01-03') AS c`, "find references", "2025-01-01")
	require.NoError(t, err)
	require.Len(t, pl.refs, 1)
	require.Equal(t, "readings", pl.refs[0].n.TableName)
	require.True(t, pl.refs[0].rel.resolved)
	sql, err := deserialize(context.Background(), pl.conn, pl.root)
	require.NoError(t, err)
	require.Contains(t, sql, `) AS c`)
	require.Contains(t, sql, `balancing_day >= CAST('2025-01-01' AS DATE)`)

	for q, msg := range map[string]string{
		`SELECT * FROM meter_completeness('2025-01-01')`:                    "takes two or three arguments",
		`SELECT * FROM meter_completeness("from", '2025-01-02')`:            "argument 1 must be a constant",
		`SELECT * FROM meter_completeness('2025-01-02', '2025-01-01')`:      "is before from",
		`SELECT * FROM meter_completeness('2025-01-01', '2025-01-02', 'x')`: `no table "x"`,
		`SELECT * FROM meter_completeness($1, '2025-01-02')`:                "bind a string",
	} {
		_, err := planThrough(t, e, q, "expand table functions")
		require.ErrorContains(t, err, msg, q)
	}
}

// TestCompletenessDateFromATime: a time.Time bound to meter_completeness's
// from or to is read by the one rule every DATE parameter follows
// (duckstream's): its day in the session's zone, a UTC midnight the day it
// names, and a value whose own day is not the session's refused naming both.
func TestCompletenessDateFromATime(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	newYork, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	for _, zone := range []string{"UTC", "Europe/Berlin"} {
		e := newSession(t, zone, &Table{Config: testConfig(t), Hot: &fixedHot{}, Cold: &fixedCold{dir: t.TempDir()}})
		for _, tc := range []struct {
			arg       time.Time
			ambiguous map[string]string // session zone → the value's day there, when not its own
		}{
			{arg: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)},
			{arg: time.Date(2025, 1, 2, 0, 0, 0, 0, berlin), ambiguous: map[string]string{"UTC": "2025-01-01"}},
			{arg: time.Date(2025, 1, 2, 22, 0, 0, 0, newYork), ambiguous: map[string]string{"UTC": "2025-01-03", "Europe/Berlin": "2025-01-03"}},
			{arg: time.Date(2025, 1, 2, 12, 0, 0, 0, berlin)},
		} {
			pl, err := planThrough(t, e, `SELECT * FROM meter_completeness($1, $1) AS c`, "expand table functions", tc.arg)
			if day, ok := tc.ambiguous[zone]; ok {
				var amb *duckstream.AmbiguousDateError
				require.ErrorAs(t, err, &amb, "zone %s, %s", zone, tc.arg)
				require.Equal(t, day, amb.Session)
				require.Equal(t, "2025-01-02", amb.Own)
				continue
			}
			require.NoError(t, err, "zone %s, %s", zone, tc.arg)
			sql, err := deserialize(context.Background(), pl.conn, pl.root)
			require.NoError(t, err)
			require.Contains(t, sql, `balancing_day >= CAST('2025-01-02' AS DATE)`, "zone %s, %s", zone, tc.arg)
		}
	}
}
