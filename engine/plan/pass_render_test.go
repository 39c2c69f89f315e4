package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRenderReplacesEveryReference: no reference to a configured relation is
// left for DuckDB (whose catalog entries refuse to be read), each hot half is
// registered for the statement and released with it, and a range no tier
// holds is a typed empty relation.
func TestRenderReplacesEveryReference(t *testing.T) {
	e := testSession(t, &fixedCold{dir: t.TempDir(), snapshot: 7, watermark: ts("2025-03-01T00:00:00Z")})
	pl, err := planThrough(t, e, `SELECT * FROM readings r, (SELECT * FROM readings_versions) v WHERE r."from" >= '2025-03-02 00:00:00+00'`, "render")
	require.NoError(t, err)
	require.NotContains(t, pl.out.SQL, "FROM readings")
	tokens := pl.out.tokens
	require.Len(t, tokens, 2)
	for _, tok := range tokens {
		require.Equal(t, 1, strings.Count(pl.out.SQL, tok))
		_, ok := e.scans.get(tok)
		require.True(t, ok)
	}
	pl.out.Release()
	_, ok := e.scans.get(tokens[0])
	require.False(t, ok, "released with the statement")

	pl, err = planThrough(t, e, `SELECT * FROM readings WHERE "from" < '2025-01-01 00:00:00+00' AND "from" >= '2025-01-02 00:00:00+00'`, "render")
	require.NoError(t, err)
	require.Contains(t, pl.out.Explain, "  no tier holds rows in this range")
	require.Contains(t, pl.out.SQL, " WHERE false)")
}
