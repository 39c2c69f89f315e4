package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCompletenessCommand(t *testing.T) {
	dep := tinyDemo(t)
	r := msql(t, "", append([]string{"completeness", "--all", "--format", "csv", "2025-09-24", "2025-09-30"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Equal(t, "malo_id,obis_code,tenant,sparte,resolution,expected,actual,missing,surplus,first_gap,substituted,not_billable", lines[0])
	require.Greater(t, len(lines), 4)
	for _, l := range lines[1:] {
		require.Contains(t, l, ",PT15M,576,", "six ordinary days × 96 quarter-hours: %s", l)
	}

	r = msql(t, "", append([]string{"completeness", "2025-10-01"}, dep...)...)
	require.Equal(t, 2, r.code)
}
