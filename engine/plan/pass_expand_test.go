package plan

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
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
