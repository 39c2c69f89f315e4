package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// peakRSS runs msql with args (a fresh MSQL_HOME) and returns its peak
// resident memory in MiB and its stderr; the run must succeed.
func peakRSS(t *testing.T, args ...string) (float64, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, msqlBin, args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "MSQL_HOME="+filepath.Join(home, "msql"), "HOME="+home, "PAGER=cat")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Run(), errb.String())
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return float64(ru.Maxrss) / 1024, errb.String() // Linux reports KiB
}

// A large result is printed as it is read, in every output format: the
// shell's peak memory for 1 M rows stays within a window of the peak for a
// thousand rows, instead of holding every row (and its rendered text) first.
func TestLargeResultStreamsInEveryFormat(t *testing.T) {
	dep := deploymentArgs(t)
	const query = `SELECT range AS n, 'meter-' || range AS name, range * 0.25 AS kwh FROM range(%d)`
	out := filepath.Join(t.TempDir(), "out")
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			run := func(rows int) float64 {
				args := append([]string{"--format", format, "-o", out, "--max-width", "0", "-c", fmt.Sprintf(query, rows)}, dep...)
				mib, stderr := peakRSS(t, args...)
				require.Empty(t, strings.TrimSpace(stderr))
				return mib
			}
			small := run(1000)
			large := run(1_000_000)
			fi, err := os.Stat(out)
			require.NoError(t, err)
			require.Greater(t, fi.Size(), int64(1_000_000*10), "the whole result is written")
			t.Logf("%s: peak RSS %.0f MiB for 1 000 rows, %.0f MiB for 1 000 000 rows", format, small, large)
			require.Less(t, large-small, 120.0, "peak RSS grew by %.0f MiB for 1 M rows: the result is held, not streamed", large-small)
		})
	}
}

// A result longer than the window prints exactly as one that fits, in every
// format, when its first window holds its widest values.
func TestStreamedResultPrintsAsAWhole(t *testing.T) {
	res := table{columns: []string{"n", "name"}, types: []string{"BIGINT", "VARCHAR"}}
	for i := 0; i < 7; i++ {
		res.rows = append(res.rows, []any{int64(10 - i), fmt.Sprintf("meter %d", 9-i)})
	}
	res.rows = append(res.rows, []any{int64(3), nil})
	print := func(format string, window int) string {
		defer func(w int) { windowRows = w }(windowRows)
		windowRows = window
		var b bytes.Buffer
		p := &printer{out: &b, format: format, maxWidth: 40, nullText: "NULL", provenance: true}
		_, started, err := p.printStream(tableStream(res), time.Now(), func() {})
		require.NoError(t, err)
		require.Equal(t, window < len(res.rows), started)
		return b.String()
	}
	for _, format := range formats {
		whole := print(format, 100)
		require.Equal(t, whole, print(format, 2), format)
		var direct bytes.Buffer
		require.NoError(t, render(&direct, res, renderOptions{format: format, maxWidth: 40, nullText: "NULL"}))
		require.Equal(t, direct.String(), whole, format)
	}
}
