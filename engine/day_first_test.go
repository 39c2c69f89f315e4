package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/testkit"
)

// monthFigures are one balancing month's sum, count, least and greatest value.
type monthFigures struct {
	sum, min, max decimal.Decimal
	n             int64
}

func (m monthFigures) String() string {
	return fmt.Sprintf("sum %s, %d rows, min %s, max %s", m.sum, m.n, m.min, m.max)
}

// TestMonthlyFiguresByBalancingMonth: the portfolio's monthly sums, counts and
// extremes by balancing month — which the planner groups by the stored day
// first — are the oracle's, before and after late corrections land on both
// sides of the watermark (appended to Iceberg below it, in PostgreSQL above
// it), on the cold tier, the hot tier and both.
func TestMonthlyFiguresByBalancingMonth(t *testing.T) {
	w := testkit.NewWorkload(0x39)
	w.MaLos, w.Days, w.CorrectionRate = 3, 40, 0.2
	a := newArchivedStore(t, w)
	ctx := context.Background()
	q := `SELECT date_trunc('month', balancing_day) AS m, sum(value), count(*) AS n, min(value), max(value)
		FROM readings WHERE "from" >= $1 AND "from" < $2 GROUP BY 1 ORDER BY 1`
	first, end := a.batch.Days[0].Time(), a.batch.Days[len(a.batch.Days)-1].AddDays(1).Time()
	plan, err := a.s.Engine.Explain(ctx, "EXPLAIN "+q, first, end)
	require.NoError(t, err)
	require.GreaterOrEqual(t, strings.Count(plan, "GROUP_BY"), 2, "grouped by the day, then by the month:\n%s", plan)
	check := func(from, to time.Time) {
		t.Helper()
		want := oracleMonths(a, from, to)
		require.NotEmpty(t, want)
		res, err := a.s.Engine.Query(ctx, q, from, to)
		require.NoError(t, err)
		require.Len(t, res.Rows, len(want), "months %v", want)
		for _, row := range res.Rows {
			month := row[0].(time.Time).Format(time.DateOnly)
			got := monthFigures{sum: row[1].(decimal.Decimal), n: row[2].(int64), min: row[3].(decimal.Decimal), max: row[4].(decimal.Decimal)}
			w := want[month]
			require.True(t, got.sum.Equal(w.sum) && got.n == w.n && got.min.Equal(w.min) && got.max.Equal(w.max),
				"[%s, %s) month %s: engine %s, oracle %s", from, to, month, got, w)
		}
	}
	for _, corrected := range []bool{false, true} {
		if corrected {
			a.deliverCorrections(t)
		}
		check(first, end)                   // both tiers
		check(first, a.cut)                 // cold only
		check(a.cut, end)                   // hot only
		check(first.AddDate(0, 0, 10), end) // from a day within the first month
	}
}

// oracleMonths is the oracle's figures per balancing month of the current
// rows with from in [from, to).
func oracleMonths(a *archivedStore, from, to time.Time) map[string]monthFigures {
	out := map[string]monthFigures{}
	for _, r := range a.oracle.Winners(from, to) {
		d := r.BalancingDay
		key := time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		m, seen := out[key]
		if !seen || r.Value.LessThan(m.min) {
			m.min = r.Value
		}
		if !seen || r.Value.GreaterThan(m.max) {
			m.max = r.Value
		}
		m.sum, m.n = m.sum.Add(r.Value), m.n+1
		out[key] = m
	}
	return out
}
