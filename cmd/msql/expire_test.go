package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExpireSnapshotsCommand(t *testing.T) {
	dep := tinyDemo(t)
	r := msql(t, "", append([]string{"expire-snapshots", "--retention", "1h"}, dep...)...)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "shorter than")
	require.Contains(t, r.stderr, "Try: --allow-short-retention")

	r = msql(t, "", append([]string{"expire-snapshots", "--retention", "1ns", "--min-keep", "2", "--allow-short-retention", "--dry-run"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "would remove")

	r = msql(t, "", append([]string{"expire-snapshots", "--retention", "1ns", "--min-keep", "2", "--allow-short-retention"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "readings_versions: removed ")

	r = msql(t, "", append([]string{"snapshots", "--format", "csv"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 3, len(splitLines(r.stdout)), "header and the two kept snapshots: %s", r.stdout)
}

func splitLines(s string) []string {
	var out []string
	for _, l := range append([]string(nil), splitKeep(s)...) {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func splitKeep(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
