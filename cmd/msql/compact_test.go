package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCompactCommand(t *testing.T) {
	dep := tinyDemo(t)
	r := msql(t, "", append([]string{"maintenance", "--once"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	answer := func() string {
		t.Helper()
		r := msql(t, "", append(dep, "--format", "csv", "-c", `SELECT count(*), sum(value) FROM readings`, "-c", `SELECT count(*) FROM readings_versions`)...)
		require.Equal(t, 0, r.code, r.stderr)
		return r.stdout
	}
	before := answer()

	r = msql(t, "", append([]string{"compact", "--month", "September"}, dep...)...)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "Try: --month 2025-09")

	r = msql(t, "", append([]string{"compact", "--dry-run"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "readings_versions: would compact tenant=tenant01/from_month=2025-09")
	require.Equal(t, before, answer(), "a dry run changes nothing")

	r = msql(t, "", append([]string{"compact", "--month", "2025-09"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "readings_versions: compacted tenant=tenant01/from_month=2025-09: ")
	require.Contains(t, r.stdout, " → 2 files")
	require.Equal(t, before, answer(), "compaction changes no answer")
	r = msql(t, "", append(dep, "--format", "csv", "-c", `SELECT "partition", files, compacted, last_compaction IS NOT NULL AS has_compaction
		FROM system.partitions WHERE month = DATE '2025-09-01' ORDER BY 1`)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "partition,files,compacted,has_compaction\ntenant=tenant01/from_month=2025-09,2,true,true\ntenant=tenant02/from_month=2025-09,2,true,true\n", r.stdout)

	r = msql(t, "", append([]string{"compact"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, "from_month=2025-09", "September is compacted already")

	r = msql(t, "", append([]string{"maintenance", "--once", "--compact", "--orphan-age", "1m"}, dep...)...)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "Try: --orphan-age 72h")
	r = msql(t, "", append([]string{"maintenance", "--once", "--compact", "--compact-quiet", "1ns"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, before, answer())

	r = msql(t, "", append([]string{"compact", "--open-month-files", "-1"}, dep...)...)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "Try: --open-month-files 0")
}
