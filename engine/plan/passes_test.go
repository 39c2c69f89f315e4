package plan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPassesAreNamedOnce: every pass has one name, and planning through a
// name that is not a pass is an error rather than all of them.
func TestPassesAreNamedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range passes {
		require.False(t, seen[p.name], p.name)
		seen[p.name] = true
	}
	require.Len(t, seen, 15)
	_, err := planThrough(t, testSession(t, nil), `SELECT 1`, "nope")
	require.ErrorContains(t, err, `no pass "nope"`)
}
