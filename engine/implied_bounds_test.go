package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/testkit"
)

// TestFromBoundsAnswerAsTheOracle: a statement's own bounds on "from" — each
// comparison, BETWEEN, pairs, as literals and as parameters — at a cold
// file's first and last quarter-hour, inside a file, at the watermark and
// above it, answer as the oracle does, late corrections delivered (resolved
// runs). The planner takes a bound its relation implies out of the WHERE and
// reads the files within the range with no "from" filter: a bound it takes
// out wrongly, or a file read unfiltered that reaches outside, shows here.
func TestFromBoundsAnswerAsTheOracle(t *testing.T) {
	w := testkit.NewWorkload(47)
	w.MaLos, w.Days = 3, 6
	a := newArchivedStore(t, w)
	a.deliverCorrections(t)

	day := a.batch.Days[2].Time()
	edge, _ := time.Parse(time.RFC3339, dayStart(a.batch.Days[2]))
	instants := map[string]time.Time{
		"a day's first quarter-hour": edge,
		"the day before's last":      edge.Add(-15 * time.Minute),
		"inside a day":               day.Add(7*time.Hour + 15*time.Minute),
		"between quarter-hours":      edge.Add(time.Microsecond),
		"the watermark":              a.cut,
		"above the watermark":        a.cut.Add(5 * time.Hour),
	}
	ops := map[string]func(from, x time.Time) bool{
		">=": func(f, x time.Time) bool { return !f.Before(x) },
		">":  func(f, x time.Time) bool { return f.After(x) },
		"<":  func(f, x time.Time) bool { return f.Before(x) },
		"<=": func(f, x time.Time) bool { return !f.After(x) },
		"=":  func(f, x time.Time) bool { return f.Equal(x) },
	}
	for _, x := range instants {
		for op, holds := range ops {
			want := func(r meterstore.Row) bool { return holds(r.From, x) }
			a.requireOracle(t, fmt.Sprintf(`"from" %s %s`, op, tsLiteral(x)), want)
			a.requireOracle(t, fmt.Sprintf(`"from" %s $1`, op), want, x)
			a.requireOracle(t, fmt.Sprintf(`%s %s "from"`, tsLiteral(x), flipped[op]), want)
		}
	}
	pairs := [][2]time.Time{
		{edge, edge.Add(24 * time.Hour)},
		{edge.Add(-15 * time.Minute), edge.Add(24*time.Hour - 15*time.Minute)},
		{instants["inside a day"], instants["above the watermark"]},
		{a.batch.Days[0].Time(), a.cut},
	}
	for _, p := range pairs {
		lo, hi := p[0], p[1]
		halfOpen := func(r meterstore.Row) bool { return !r.From.Before(lo) && r.From.Before(hi) }
		closed := func(r meterstore.Row) bool { return !r.From.Before(lo) && !r.From.After(hi) }
		a.requireOracle(t, `"from" >= $1 AND "from" < $2 AND value IS NOT NULL`, halfOpen, lo, hi)
		a.requireOracle(t, fmt.Sprintf(`"from" >= %s AND "from" < %s`, tsLiteral(lo), tsLiteral(hi)), halfOpen)
		a.requireOracle(t, `"from" BETWEEN $1 AND $2`, closed, lo, hi)
		a.requireOracle(t, fmt.Sprintf(`"from" BETWEEN %s AND %s`, tsLiteral(lo), tsLiteral(hi)), closed)
	}
	// An implied bound before a parameter the statement still uses: the
	// statement takes its parameters without a gap.
	for _, x := range instants {
		a.requireOracle(t, `"from" >= $1 AND "from" > $2`, func(r meterstore.Row) bool { return r.From.After(x) }, x.Add(-time.Hour), x)
	}
}

// TestFromBoundInAnOuterJoinStays: a WHERE bound on the NULL-extended side of
// an outer join also drops the rows the join extended — no bound of a SELECT
// that joins is taken out, though the relation implies it.
func TestFromBoundInAnOuterJoinStays(t *testing.T) {
	w := testkit.NewWorkload(48)
	w.MaLos, w.Days = 2, 5
	a := newArchivedStore(t, w)
	x := tsLiteral(a.batch.Days[2].Time())
	res, err := a.s.Engine.Query(context.Background(), fmt.Sprintf(
		`SELECT count(*) FROM (SELECT 1 AS one) k LEFT JOIN readings r ON r."from" < %[1]s WHERE r."from" >= %[1]s`, x))
	require.NoError(t, err)
	require.Equal(t, []any{int64(0)}, res.Rows[0], "no row of r is both before and at or after %s", x)
}

var flipped = map[string]string{">=": "<=", ">": "<", "<": ">", "<=": ">=", "=": "="}

func tsLiteral(t time.Time) string {
	return "TIMESTAMPTZ '" + t.UTC().Format("2006-01-02 15:04:05.999999") + "+00'"
}

// requireOracle: count(*) and sum(value) of readings under where equal the
// oracle's over the winners want keeps.
func (a *archivedStore) requireOracle(t *testing.T, where string, want func(meterstore.Row) bool, args ...any) {
	t.Helper()
	var n int64
	sum := decimal.Zero
	for _, r := range a.oracle.Winners(time.Time{}, time.Time{}) {
		if want(r) {
			n++
			sum = sum.Add(r.Value)
		}
	}
	q := `SELECT count(*), sum(value) FROM readings WHERE ` + where
	res, err := a.s.Engine.Query(context.Background(), q, args...)
	require.NoError(t, err, q)
	require.Len(t, res.Rows, 1, q)
	got := decimal.Zero
	if d, ok := res.Rows[0][1].(decimal.Decimal); ok {
		got = d
	}
	require.Equal(t, n, res.Rows[0][0], "%s %v: rows", q, args)
	require.True(t, got.Equal(sum), "%s %v: sum %s, oracle %s", q, args, got, sum)
}
