package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// audit has no backing API yet and says so instead of pretending.
func TestAuditCommandSaysNotAvailable(t *testing.T) {
	r := msql(t, "", "audit", "tenant")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "audit tenant: not available yet")
}
