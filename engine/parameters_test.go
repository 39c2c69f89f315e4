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
