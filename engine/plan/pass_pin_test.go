package plan

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPinOncePerTable: every reference to a table splits at the one pinned
// watermark; an as-of read of a snapshot the table lacks fails, never falls
// back to current data.
func TestPinOncePerTable(t *testing.T) {
	w := ts("2025-03-01T00:00:00Z")
	e := testSession(t, &fixedCold{dir: t.TempDir(), snapshot: 7, watermark: w})
	pl, err := planThrough(t, e, `SELECT * FROM readings r JOIN readings_versions v USING (malo_id)`, "pin snapshot and watermark")
	require.NoError(t, err)
	require.Same(t, pl.refs[0].pin, pl.refs[1].pin)
	require.Equal(t, int64(7), pl.refs[0].pin.snapshot)
	require.True(t, w.Equal(pl.out.Provenance.Watermarks["readings"]))

	_, err = planThrough(t, e.AsOf(6, nil), `SELECT * FROM readings`, "pin snapshot and watermark")
	require.ErrorIs(t, err, ErrNoSnapshot)
	_, err = planThrough(t, e.AsOf(0, nil), `SELECT * FROM readings`, "pin snapshot and watermark")
	require.ErrorIs(t, err, ErrNoSnapshot)
	pl, err = planThrough(t, e.AsOfTime(time.Now(), nil), `SELECT * FROM readings`, "pin snapshot and watermark")
	require.NoError(t, err)
	require.Equal(t, int64(7), pl.refs[0].pin.snapshot)
}
