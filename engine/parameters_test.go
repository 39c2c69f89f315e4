package engine_test

import (
	"context"
	"database/sql"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/testkit"
)

// A balancing day bound as a parameter — a string as the shell's .param and
// pgwire's text format bind it, a time.Time as Go callers and pgwire's DATE
// do, a named parameter — prunes cold files and the hot range as the literal
// does, and the answer is the oracle's.
func TestDayParametersPrune(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(41)
	w.MaLos, w.Days = 3, 6
	a := newArchivedStore(t, w)
	all := time.Time{}
	byDay := a.oracle.SumBy(all, all, func(r meterstore.Row) string { return r.BalancingDay.Format(time.DateOnly) })
	coldDay, hotDay := a.batch.Days[1], a.batch.Days[len(a.batch.Days)-1]
	require.True(t, hotDay.Time().After(a.cut), "hot day %s, watermark %s", hotDay, a.cut)

	for _, day := range []metering.Date{coldDay, hotDay} {
		forms := map[string]struct {
			where string
			arg   any
		}{
			"string":    {`balancing_day = $1`, day.String()},
			"time.Time": {`balancing_day = $1`, day.Time()},
			"named":     {`balancing_day = $day`, sql.Named("day", day.String())},
			"Params":    {`balancing_day = $day`, engine.Params{"day": day.String(), "1": "unused", "malo": "unused"}},
		}
		for name, f := range forms {
			q := `SELECT sum(value) FROM readings WHERE ` + f.where
			got, _ := querySum(t, a.s.Engine, q, f.arg)
			want := byDay[day.String()]
			require.True(t, got.Equal(want), "%s %s: engine %s oracle %s", day, name, got, want)

			plan, err := a.s.Engine.Explain(ctx, q, f.arg)
			require.NoError(t, err)
			plan, _, _ = strings.Cut(plan, "\nprovenance:")
			if day == hotDay {
				require.NotContains(t, plan, "  cold:", "%s %s:\n%s", day, name, plan)
				require.Contains(t, plan, "  hot: from ["+dayStart(day)+", ", "%s %s:\n%s", day, name, plan)
				continue
			}
			require.NotContains(t, plan, "  hot:", "%s %s:\n%s", day, name, plan)
			require.Positive(t, prunedFiles(t, plan), "%s %s:\n%s", day, name, plan)
		}
	}

	// "from" against a date string: midnight of the session's zone (UTC).
	from := hotDay.String()
	got, _ := querySum(t, a.s.Engine, `SELECT sum(value) FROM readings WHERE "from" >= $1`, from)
	require.True(t, got.Equal(a.oracle.Sum(hotDay.Time(), all)), "engine %s oracle %s", got, a.oracle.Sum(hotDay.Time(), all))
	plan, err := a.s.Engine.Explain(ctx, `SELECT sum(value) FROM readings WHERE "from" >= $1`, from)
	require.NoError(t, err)
	require.NotContains(t, plan, "  cold:", plan)
}

// Params bind the parameters a statement uses, by name, whatever else they
// hold; a parameter without a value is refused by name, never bound to
// another value by position.
func TestParamsBindWhatTheStatementUses(t *testing.T) {
	ctx := context.Background()
	a := newArchivedStore(t, testkit.NewWorkload(43))
	ps := engine.Params{"1": int64(41), "2": "x", "day": "2026-03-29", "kind": "GAS"}
	res, err := a.s.Engine.Query(ctx, `SELECT $1::INTEGER + 1 AS answer`, ps)
	require.NoError(t, err)
	require.Equal(t, []any{int32(42)}, res.Rows[0])
	res, err = a.s.Engine.Query(ctx, `SELECT $day::DATE + 1 AS next, $kind AS kind`, ps)
	require.NoError(t, err)
	require.Equal(t, []any{time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC), "GAS"}, res.Rows[0])

	for q, want := range map[string]string{
		`SELECT $kind, $malo`:    "the statement uses $malo, which is not set",
		`SELECT ?, ?, ?`:         "the statement uses $3 (or ?), which is not set",
		`SELECT $2::INTEGER + 1`: "the statement uses $2 but not $1",
	} {
		_, err := a.s.Engine.Query(ctx, q, ps)
		var pe *engine.ParamError
		require.ErrorAs(t, err, &pe, q)
		require.EqualError(t, pe, want, q)
	}
}

// dayStart is the earliest "from" of balancing day d in any Sparte (00:00
// Berlin), as EXPLAIN prints it.
func dayStart(d metering.Date) string {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, berlin).UTC().Format(time.RFC3339)
}

var prunedCount = regexp.MustCompile(`(\d+) pruned by statistics`)

// prunedFiles is the number of files EXPLAIN's cold line says were pruned.
func prunedFiles(t *testing.T, plan string) int {
	m := prunedCount.FindStringSubmatch(plan)
	require.NotNil(t, m, plan)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}
