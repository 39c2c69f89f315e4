package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestArchiveCommand(t *testing.T) {
	dep := tinyDemo(t)
	// The demo left a week hot; a clock far ahead makes two more windows settled.
	r := msql(t, "", append([]string{"archive", "--max-windows", "2", "--now", "2030-01-01"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3, r.stdout)
	require.Contains(t, lines[0], "readings_versions: archived ")
	require.Contains(t, lines[1], "readings_versions: archived ")
	require.Contains(t, lines[2], "readings_versions: watermark 2025-")

	r = msql(t, "", append([]string{"archive", "--table", "nope"}, dep...)...)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "Try: --table readings_versions")
}
