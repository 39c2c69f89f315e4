package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMaintenanceCommand(t *testing.T) {
	dep := tinyDemo(t)
	r := msql(t, "", append([]string{"maintenance", "--once"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	// The real clock is far past the demo's data: every remaining window is settled.
	require.Contains(t, r.stdout, "readings_versions: archived ")
	require.Contains(t, r.stdout, "readings_versions: watermark ")

	r = msql(t, "", append([]string{"maintenance", "--interval", "0s"}, dep...)...)
	require.Equal(t, 2, r.code)
}
