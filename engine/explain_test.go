package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/testkit"
)

// EXPLAIN shows the engine's split and DuckDB's plan without running the
// statement; EXPLAIN ANALYZE runs the rewritten statement and DuckDB's plan
// carries its profile — in any spelling of the keywords.
func TestExplainAnalyzeRunsTheRewrittenStatement(t *testing.T) {
	w := testkit.NewWorkload(7)
	w.MaLos, w.Days = 2, 4
	a := newArchivedStore(t, w)
	ctx := context.Background()
	q := `SELECT count(*) FROM readings WHERE "from" >= $1`
	from := a.cut.Add(-24 * time.Hour)
	for _, c := range []struct {
		prefix   string
		analyzed bool
	}{{"", false}, {"EXPLAIN ", false}, {"explain\n", false}, {"EXPLAIN ANALYZE ", true}, {"explain  analyze\t", true}} {
		plan, err := a.s.Engine.Explain(ctx, c.prefix+q, from)
		require.NoError(t, err, c.prefix)
		require.Contains(t, plan, "MeterStore plan\n", c.prefix)
		if c.analyzed {
			require.Contains(t, plan, "DuckDB plan, run and profiled (EXPLAIN ANALYZE):\n", c.prefix)
			require.Contains(t, plan, "Total Time:", c.prefix)
		} else {
			require.Contains(t, plan, "\nDuckDB plan:\n", c.prefix)
			require.NotContains(t, plan, "Total Time:", c.prefix)
		}
	}
}

// EXPLAIN ANALYZE of a statement run before reuses its cached plan; the
// reused plan's scans read with the explaining call's context, not the
// finished run's (whose end cancelled it).
func TestExplainAnalyzeAfterTheSameStatementRan(t *testing.T) {
	w := testkit.NewWorkload(7)
	w.MaLos, w.Days = 2, 4
	a := newArchivedStore(t, w)
	ctx := context.Background()
	q := `SELECT count(*) FROM readings WHERE "from" >= $1`
	from := a.cut.Add(-24 * time.Hour)
	ran, err := a.s.Engine.Query(ctx, q, from)
	require.NoError(t, err)
	require.True(t, ran.Provenance.TouchedHotTier(), "the statement reads the hot tier")
	plan, err := a.s.Engine.Explain(ctx, "EXPLAIN ANALYZE "+q, from)
	require.NoError(t, err)
	require.Contains(t, plan, "Total Time:")
}
