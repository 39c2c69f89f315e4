package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// testEngine is an engine over testConfig's table with fixed tiers (nothing
// archived unless cold is set up), for the passes' tests.
func testEngine(t testing.TB, cold *fixedCold) *Engine {
	t.Helper()
	if cold == nil {
		cold = &fixedCold{dir: t.TempDir()}
	}
	e, err := Open(context.Background(), Config{Tables: []Table{{Config: testConfig(t), Hot: &fixedHot{}, Cold: cold}}})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}

// planThrough parses q on e and runs the passes through the one named last.
func planThrough(t testing.TB, e *Engine, q, last string, args ...any) (*planning, error) {
	t.Helper()
	ctx := context.Background()
	conn, catalog, err := e.conn(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	pl, err := e.newPlanning(ctx, conn, catalog, q, args)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { pl.out.release(e) })
	return pl, pl.run(ctx, last)
}

// TestPassesAreNamedOnce: every pass has one name, and planning through a
// name that is not a pass is an error rather than all of them.
func TestPassesAreNamedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range passes {
		require.False(t, seen[p.name], p.name)
		seen[p.name] = true
	}
	require.Len(t, seen, 10)
	_, err := planThrough(t, testEngine(t, nil), `SELECT 1`, "nope")
	require.ErrorContains(t, err, `no pass "nope"`)
}
