package telemetry

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The backlog counts settled windows past the watermark, whole steps only; a
// table with nothing archived has neither lag nor backlog.
func TestBacklogAndLag(t *testing.T) {
	w := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	s := TableState{Watermark: w, SettlementLag: 7 * 24 * time.Hour, ArchivalStep: 24 * time.Hour}
	for _, c := range []struct {
		now     time.Time
		backlog int64
	}{
		{w.Add(7 * 24 * time.Hour), 0},            // the window [W, W+1d) settles only at W+8d
		{w.Add(8*24*time.Hour - time.Second), 0},  // not yet
		{w.Add(8 * 24 * time.Hour), 1},            // settled, not archived
		{w.Add(8*24*time.Hour + 23*time.Hour), 1}, // still one
		{w.Add(10 * 24 * time.Hour), 3},           // a table nobody archives grows one a day
		{w.Add(-time.Hour), 0},                    // a clock behind the watermark
	} {
		require.Equal(t, c.backlog, s.Backlog(c.now), "now %s", c.now)
	}
	require.Equal(t, 9*24*time.Hour, s.Lag(w.Add(9*24*time.Hour)))
	require.Zero(t, TableState{SettlementLag: time.Hour, ArchivalStep: time.Hour}.Backlog(w))
	require.Zero(t, TableState{}.Lag(w))
}
