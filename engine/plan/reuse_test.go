package plan

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAgainOpensColdFilesWithItsOwnRun: a reused plan's cold scan opens its
// files with the context its own run sets, not the context of the run the
// plan was made in (which has ended, so object storage refused every read
// with "context canceled").
func TestAgainOpensColdFilesWithItsOwnRun(t *testing.T) {
	made, cancel := context.WithCancel(context.Background())
	p := &Plan{registry: &registry{}}
	ps := &Scan{Ctx: made, What: "cold scan", Rows: &RowCounter{}}
	ps.Pager = coldFiles{ps: ps}
	p.register(ps)
	p.SQL = "SELECT * FROM meter_cold_scan(" + SQLString(p.tokens[0]) + ")"
	cancel()

	again := p.Template().Again(context.Background())
	run := context.Background()
	again.Scans[0].Ctx = run
	pager, ok := again.Scans[0].Pager.(coldFiles)
	require.True(t, ok)
	require.Same(t, again.Scans[0], pager.ps, "the reused scan's pager must read the reused scan's context")
	require.NoError(t, pager.ps.Ctx.Err())
}
