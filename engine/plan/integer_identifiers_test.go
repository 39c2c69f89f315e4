package plan

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"
)

// An integer argument compared only with malo_id runs as its decimal text
// (any Go integer kind); one the statement also uses elsewhere, a string, a
// named argument are left as they are; an integer compared with another text
// identifier is refused, naming the parameter, the column and the fix.
func TestIntegerArgumentsForTextIdentifiers(t *testing.T) {
	e := testSession(t, nil)
	for _, tc := range []struct {
		name string
		sql  string
		arg  any
		want any
	}{
		{"int64 MaLo", `SELECT * FROM readings WHERE malo_id = $1`, int64(41373559241), "41373559241"},
		{"int32", `SELECT * FROM readings WHERE malo_id = $1 AND "from" >= '2025-01-01'`, int32(123), "123"},
		{"uint64", `SELECT * FROM readings WHERE $1 = malo_id`, uint64(51238696781), "51238696781"},
		{"in both arms of a union", `SELECT * FROM readings WHERE malo_id = $1 UNION ALL SELECT * FROM readings WHERE malo_id = $1`, int64(41373559241), "41373559241"},
		{"also used as a number", `SELECT *, $1 + 1 FROM readings WHERE malo_id = $1`, int64(41373559241), int64(41373559241)},
		{"already text", `SELECT * FROM readings WHERE malo_id = $1`, "41373559241", "41373559241"},
		{"named", `SELECT * FROM readings WHERE malo_id = $m`, sql.Named("m", int64(41373559241)), sql.Named("m", int64(41373559241))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := planThrough(t, e, tc.sql, "extract bounds", tc.arg)
			require.NoError(t, err)
			require.Equal(t, []any{tc.want}, pl.in.Args)
		})
	}

	_, err := planThrough(t, e, `SELECT * FROM readings WHERE obis_code = $1`, "extract bounds", int64(180))
	require.ErrorIs(t, err, ErrIntegerForText)
	var refusal *IntegerForTextError
	require.ErrorAs(t, err, &refusal)
	require.Equal(t, IntegerForTextError{Param: "1", Column: "obis_code", Value: int64(180)}, *refusal)
	require.Contains(t, err.Error(), "send the parameter as text")
}
