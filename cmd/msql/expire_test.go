package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExpireSnapshotsCommand(t *testing.T) {
	dep := tinyDemo(t)
	// A misspelt table is refused, not a run that expires nothing and says nothing.
	r := msql(t, "", append([]string{"expire-snapshots", "--table", "readingz", "--dry-run"}, dep...)...)
	require.Equal(t, 2, r.code, r.stdout)
	require.Contains(t, r.stderr, `no table "readingz"`)
	require.Contains(t, r.stderr, "Try: --table readings_versions")

	r = msql(t, "", append([]string{"expire-snapshots", "--retention", "1h"}, dep...)...)
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
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\n' })
}
