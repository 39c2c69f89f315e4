package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
)

// TestIdleScanBuffersAreReleased: hot scans going at once each keep their
// page buffers for the next scans when they end — sized for the largest page
// read, tens of MB after a burst of whole-tier reads — and the engine's idle
// release (CloseIdleStatements, which msql serve calls once a minute untaken)
// gives them up: none stay kept on an idle server. Buffers used since the
// cut-off stay.
func TestIdleScanBuffersAreReleased(t *testing.T) {
	ctx := context.Background()
	t.Setenv(engine.EnvPaths, "go") // the buffers are the Go hot scan's, in the extension run too
	w := testkit.NewWorkload(0x5B)
	w.MaLos = 8
	a := newArchivedStore(t, w)
	eng := a.s.Engine
	eng.CloseIdleStatements(0) // what earlier tests of the package left

	runAtOnce(t, 4, func() (*engine.Rows, error) {
		return eng.Rows(ctx, `SELECT count(*), sum(value) FROM readings WHERE "from" >= $1`, a.cut)
	})
	kept := engine.KeptScanBufferBytes()
	require.Positive(t, kept, "the hot scans kept their buffers for the next ones")

	eng.CloseIdleStatements(time.Hour)
	require.Equal(t, kept, engine.KeptScanBufferBytes(), "buffers used within the hour stay kept")
	eng.CloseIdleStatements(0)
	require.Zero(t, engine.KeptScanBufferBytes(), "an idle server keeps no hot scan buffers (%d bytes before)", kept)
}
