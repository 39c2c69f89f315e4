package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
)

// typedArgs reads one tenant's readings through parameters of every kind a
// client binds: an instant with its zone, a string, a decimal, a value that
// may be NULL and a calendar day.
const typedArgs = `SELECT count(*), sum(value), min("from"), max(obis_code) FROM readings
WHERE "from" >= $1 AND malo_id <> $2 AND value >= $3 AND ($4 IS NULL OR obis_code = $4) AND balancing_day >= $5`

// TestKeptStatementCarriesItsArguments: a confined plan's statement is kept
// with its arguments written in as literals, so DuckDB runs it again without
// binding it again — and it answers exactly what the statement with its
// arguments bound answers, for arguments of every kind, each plan with its
// own arguments only, also when two plans alternate.
func TestKeptStatementCarriesItsArguments(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(0x3E)
	w.MaLos, w.Tenants = 4, 2
	a := newArchivedStore(t, w)
	eng := a.s.Engine
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	day := a.batch.Days[1]
	var meters []testkit.Meter
	for _, m := range a.batch.Meters {
		if m.Tenant == "tenant01" {
			meters = append(meters, m)
		}
	}
	require.Len(t, meters, 2)
	obis := meters[1].Channels[0].String()
	argSets := [][]any{
		{day.Time().In(berlin), "no such malo", decimal.RequireFromString("0.000001"), nil, time.Date(day.Year, day.Month, day.Day, 0, 0, 0, 0, time.UTC)},
		{a.batch.Days[0].Time().In(berlin).Add(90 * time.Minute), meters[0].MaloID.String(), decimal.RequireFromString("0.25"), obis, day.String()},
	}
	sc, err := eng.Scoped("tenant", "tenant01")
	require.NoError(t, err)
	var want [][][]any
	for _, args := range argSets {
		res, err := eng.Query(ctx, typedArgs+` AND tenant = 'tenant01'`, args...)
		require.NoError(t, err, "the unconfined handle binds the arguments")
		require.NotZero(t, res.Rows[0][0], "%v selects rows", args)
		want = append(want, res.Rows)
	}
	require.NotEqual(t, want[0], want[1])

	for i, args := range argSets {
		res, err := sc.Query(ctx, typedArgs, args...)
		require.NoError(t, err)
		require.Equal(t, want[i], res.Rows, "first run of argument set %d", i)
		require.False(t, res.Provenance.Reused)
	}
	kept := engine.MainStatementsKept(sc)
	require.Len(t, kept, 2, "each plan keeps its statement")
	for round := range 3 {
		for i, args := range argSets {
			binds := engine.ConfinedBinds(eng)
			res, err := sc.Query(ctx, typedArgs, args...)
			require.NoError(t, err)
			require.True(t, res.Provenance.Reused, "round %d, argument set %d: the plan is reused", round, i)
			require.Equal(t, want[i], res.Rows, "round %d: argument set %d answers its own rows", round, i)
			require.Equal(t, binds, engine.ConfinedBinds(eng), "round %d, argument set %d: the kept statement ran without DuckDB binding it again", round, i)
		}
	}
	require.ElementsMatch(t, kept, engine.MainStatementsKept(sc), "the reused plans ran the statements kept, preparing none")
	for _, q := range kept {
		require.NotContains(t, q, "$", "the kept statement carries its arguments: %s", q)
		require.Contains(t, q, "TIMESTAMPTZ '", "the instant as a literal: %s", q)
	}
	for _, q := range kept {
		require.True(t, strings.Contains(q, "NULL") || strings.Contains(q, "'"+obis+"'"), "each kept statement holds its own plan's obis argument: %s", q)
	}
}
