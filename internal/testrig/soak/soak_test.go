package soak

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	duration = flag.Duration("duration", 0, "run the soak this long (0: skip TestSoak); go tool task soak -- --duration 10m")
	seed     = flag.String("seed", "0x50A4", "the soak's seed: the workload, the readers' questions and the faults' order and timing")
	summary  = flag.String("summary", "", "append the run's Markdown summary to this file")
)

// TestSoak is `go tool task soak`: a deployment of separate processes under
// load and faults, checked against the oracle (package doc).
func TestSoak(t *testing.T) {
	if *duration == 0 {
		t.Skip("the soak runs with -duration (go tool task soak -- --duration 10m)")
	}
	s, err := strconv.ParseUint(*seed, 0, 64)
	require.NoError(t, err, "-seed")
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	work, err := os.MkdirTemp("", "meterstore-soak-")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), *duration+15*time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Duration: *duration, Seed: s, Work: work, Root: root, Log: os.Stderr})
	require.NoError(t, err, "soak in %s", work)
	t.Log("\n" + res.Summary)
	if *summary != "" {
		f, err := os.OpenFile(*summary, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = f.WriteString(res.Summary)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	require.Empty(t, res.Failures, "replay: go tool task soak -- --duration %s --seed %#x (deployment kept in %s)", *duration, s, work)
	require.NoError(t, os.RemoveAll(work))
}
