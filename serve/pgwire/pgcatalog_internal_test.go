package pgwire

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSelectListLen: FROM ends the select list only as a word of its own —
// not inside a name, whatever letters the name has, nor after a dot.
func TestSelectListLen(t *testing.T) {
	for q, want := range map[string]int{
		"SELECT a, b FROM t":                  2,
		"SELECT f(a, b), c FROM t":            2,
		"SELECT a.from, b, c FROM t":          3,
		"SELECT fromage, b FROM t":            2,
		"SELECT fromänderung, b FROM t":       2,
		"SELECT größe_from, b FROM t":         2,
		"SELECT übfrom, b, c FROM t":          3,
		"SELECT 'a, b' AS x, \"from\" FROM t": 2,
		"SELECT":                              0,
	} {
		require.Equal(t, want, selectListLen(q), q)
	}
}
