package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSnapshotsCommand(t *testing.T) {
	dep := tinyDemo(t)
	r := msql(t, "", append([]string{"snapshots", "--format", "csv"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Equal(t, "table,snapshot,committed_at,operation,watermark,current", lines[0])
	require.Greater(t, len(lines), 3, "one snapshot per archived window plus the corrections")
	require.True(t, strings.HasSuffix(lines[len(lines)-1], ",true"), "the newest is current")
}
