package engine_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
)

// duckdbOperators are the operator names of the DuckDB plan an Explain ends
// with, in the order the plan prints them: the first line inside each box.
func duckdbOperators(t *testing.T, explain string) []string {
	t.Helper()
	_, plan, ok := strings.Cut(explain, "DuckDB plan:\n")
	require.True(t, ok, explain)
	name := regexp.MustCompile(`│\s*([A-Z][A-Z_]+)\s*│`)
	var ops []string
	lines := strings.Split(plan, "\n")
	for i := 1; i < len(lines); i++ {
		if !strings.Contains(lines[i-1], "┌") {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(lines[i], -1) {
			ops = append(ops, m[1])
		}
	}
	require.NotEmpty(t, ops, plan)
	return ops
}

// The shell's session and a server's walled session run a statement under one
// plan: DuckDB's top_n_window_elimination, which turns ranked resolution
// (ROW_NUMBER() = 1) into an aggregate, is on in both databases or off in both;
// the walled session's cold half runs in the shell's database and is fed.
func TestOneWindowPlanForEverySession(t *testing.T) {
	w := testkit.NewWorkload(41)
	w.MaLos, w.Days = 3, 5
	a := newArchivedStore(t, w)
	a.deliverCorrections(t)
	ctx := context.Background()
	for _, q := range []string{
		`SELECT sum(value) FROM readings`,
		`SELECT malo_id, max("from") FROM readings WHERE "from" >= $1 GROUP BY ALL`,
	} {
		var args []any
		if strings.Contains(q, "$1") {
			args = append(args, a.cut)
		}
		plans := map[string][]string{}
		for name, e := range map[string]*engine.Engine{"shell": a.s.Engine, "walled": a.s.Engine.Walled()} {
			out, err := e.Explain(ctx, q, args...)
			require.NoError(t, err)
			require.Contains(t, out, "ROW_NUMBER() OVER", "%s: the statement ranks the hot tier: %s", name, out)
			plans[name] = duckdbOperators(t, out)
		}
		for name, ops := range plans {
			require.Contains(t, ops, "HASH_GROUP_BY", "%s: the ranking is eliminated: %s", name, q)
			require.NotContains(t, ops, "WINDOW", "%s: %s", name, q)
		}
		// A walled database opens no file: its cold half is the shell's
		// database's plan, fed through meter_fed_scan.
		if slices.Contains(plans["shell"], "READ_PARQUET") {
			require.Contains(t, plans["walled"], "METER_FED_SCAN", q)
		}
		require.NotContains(t, plans["walled"], "READ_PARQUET", q)
	}
}
