package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
)

// hotPartialsLine is what EXPLAIN says of a hot half PostgreSQL aggregates.
const hotPartialsLine = "partial aggregates by day computed by PostgreSQL"

// groupFigures are one group's sum and row count.
type groupFigures struct {
	sum string // to the value's six decimals
	n   int64
}

// TestHotPartialsAnswerAsTheOracle: sums and counts by balancing day or
// month and channel — whose hot half PostgreSQL resolves and aggregates —
// are the oracle's, before and after late corrections land on both sides of
// the watermark, over both tiers (a day on both sides of it is two partial
// rows), the hot tier alone and from within the hot window; on each hot path.
func TestHotPartialsAnswerAsTheOracle(t *testing.T) {
	onEachHotPath(t, func(t *testing.T, _ bool) { checkHotPartials(t) })
}

func checkHotPartials(t *testing.T) {
	w := testkit.NewWorkload(0x3a)
	w.MaLos, w.Days, w.CorrectionRate, w.Tenants = 3, 40, 0.2, 2
	a := newArchivedStore(t, w)
	first, end := a.batch.Days[0].Time(), a.batch.Days[len(a.batch.Days)-1].AddDays(1).Time()
	tenant := "tenant01"
	for _, corrected := range []bool{false, true} {
		if corrected {
			a.deliverCorrections(t)
		}
		for _, unit := range []string{"day", "month"} {
			q := fmt.Sprintf(`SELECT date_trunc('%s', balancing_day) AS d, obis_code, sum(value) AS s, count(*) AS n
				FROM readings WHERE "from" >= $1 AND "from" < $2 GROUP BY 1, 2 ORDER BY 1, 2`, unit)
			byTenant := fmt.Sprintf(`SELECT date_trunc('%s', balancing_day) AS d, obis_code, sum(value) AS s, count(*) AS n
				FROM readings WHERE tenant = $3 AND "from" BETWEEN $1 AND $2 GROUP BY 1, 2 ORDER BY 1, 2`, unit)
			for _, r := range [][2]time.Time{{first, end}, {a.cut, end}, {a.cut.Add(time.Hour), end}} {
				want := oracleGroups(a, unit, "", r[0], r[1])
				requireHotPartials(t, a.s.Engine, q, true, r[0], r[1])
				require.Equal(t, want, engineGroups(t, a.s.Engine, q, r[0], r[1]), "%s over [%s, %s)", q, r[0], r[1])
				requireSameAnswer(t, a.s.Engine, q, strings.Replace(q, `"from" < $2`, `"from" < $2 AND "from" <> $2`, 1), r[0], r[1])
				last := r[1].Add(-time.Microsecond) // BETWEEN is inclusive
				requireHotPartials(t, a.s.Engine, byTenant, true, r[0], last, tenant)
				require.Equal(t, oracleGroups(a, unit, tenant, r[0], r[1]), engineGroups(t, a.s.Engine, byTenant, r[0], last, tenant), byTenant)
			}
		}
	}
}

// TestHotPartialsRefused: where PostgreSQL could not compute exactly what
// the inner level would — a conjunct the hot scans do not push (on the
// value, on the balancing day), an open lower bound the scans' range need
// not lie within, a scoped session — the hot half is read row by row, and
// the answer is still the oracle's.
func TestHotPartialsRefused(t *testing.T) {
	w := testkit.NewWorkload(0x3b)
	w.MaLos, w.Days, w.CorrectionRate, w.Tenants = 3, 20, 0.2, 2
	a := newArchivedStore(t, w)
	a.deliverCorrections(t)
	first, end := a.batch.Days[0].Time(), a.batch.Days[len(a.batch.Days)-1].AddDays(1).Time()
	const shape = `SELECT date_trunc('month', balancing_day) AS d, obis_code, sum(value) AS s, count(*) AS n FROM readings WHERE %s GROUP BY 1, 2 ORDER BY 1, 2`
	for _, where := range []string{
		`"from" >= $1 AND "from" < $2 AND value > -1000000`,
		`"from" >= $1 AND "from" < $2 AND balancing_day >= DATE '1990-01-01'`,
		`"from" >= $1 AND "from" < $2 AND (malo_id = 'none' OR TRUE)`,
		`"from" >= $1 AND "from" < $2 AND "from" <> $2`,
	} {
		q := fmt.Sprintf(shape, where)
		requireHotPartials(t, a.s.Engine, q, false, first, end)
		require.Equal(t, oracleGroups(a, "month", "", first, end), engineGroups(t, a.s.Engine, q, first, end), q)
	}
	// A lower bound inside the hot window is the scans' own: pushed.
	q := fmt.Sprintf(shape, `"from" >= $1 AND "from" < $2`)
	requireHotPartials(t, a.s.Engine, q, true, a.cut.Add(time.Hour), end)
	scoped, err := a.s.Engine.Scoped("tenant", "tenant02")
	require.NoError(t, err)
	requireHotPartials(t, scoped, q, false, first, end)
	require.Equal(t, oracleGroups(a, "month", "tenant02", first, end), engineGroups(t, scoped, q, first, end), "scoped")
}

// requireSameAnswer asserts that q, whose hot half PostgreSQL aggregates,
// and rows, the same statement read row by row (a conjunct the hot scans do
// not push), answer the same columns, types and values, in the same order.
func requireSameAnswer(t *testing.T, e *engine.Engine, q, rows string, args ...any) {
	t.Helper()
	requireHotPartials(t, e, rows, false, args...)
	ctx := context.Background()
	got, err := e.Query(ctx, q, args...)
	require.NoError(t, err, q)
	want, err := e.Query(ctx, rows, args...)
	require.NoError(t, err, rows)
	require.NotEmpty(t, want.Rows)
	require.Equal(t, want.Columns, got.Columns)
	require.Equal(t, want.Types, got.Types)
	require.Equal(t, fmt.Sprint(want.Rows), fmt.Sprint(got.Rows), q)
}

// requireHotPartials asserts whether EXPLAIN shows q's hot half aggregated
// by PostgreSQL.
func requireHotPartials(t *testing.T, e *engine.Engine, q string, want bool, args ...any) {
	t.Helper()
	plan, err := e.Explain(context.Background(), "EXPLAIN "+q, args...)
	require.NoError(t, err)
	require.Contains(t, plan, "hot: from", "the statement reads the hot tier:\n%s", plan)
	require.Equal(t, want, strings.Contains(plan, hotPartialsLine), "%s\n%s", q, plan)
	if want {
		require.Contains(t, plan, "FROM (SELECT \"malo_id\"", "PostgreSQL resolves the rows it aggregates:\n%s", plan)
	}
}

// engineGroups is q's answer as "day|channel" → figures.
func engineGroups(t *testing.T, e *engine.Engine, q string, args ...any) map[string]groupFigures {
	t.Helper()
	res, err := e.Query(context.Background(), q, args...)
	require.NoError(t, err, q)
	out := map[string]groupFigures{}
	for _, row := range res.Rows {
		key := row[0].(time.Time).Format(time.DateOnly) + "|" + row[1].(string)
		out[key] = groupFigures{sum: row[2].(decimal.Decimal).StringFixed(6), n: row[3].(int64)}
	}
	return out
}

// oracleGroups is the oracle's current rows with from in [from, to) (of
// tenant, unless ""), summed and counted by balancing day or month
// (unit) and channel.
func oracleGroups(a *archivedStore, unit, tenant string, from, to time.Time) map[string]groupFigures {
	sums, counts := map[string]decimal.Decimal{}, map[string]int64{}
	tenantAt := -1
	for i, c := range a.cfg.ExtraColumns() {
		if c.Name == "tenant" {
			tenantAt = i
		}
	}
	for _, r := range a.oracle.Winners(from, to) {
		if tenant != "" && (tenantAt < 0 || r.Extra[tenantAt] == nil || *r.Extra[tenantAt] != tenant) {
			continue
		}
		d := r.BalancingDay
		if unit == "month" {
			d = time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC)
		}
		key := d.Format(time.DateOnly) + "|" + r.ObisCode
		sums[key], counts[key] = sums[key].Add(r.Value), counts[key]+1
	}
	out := map[string]groupFigures{}
	for key, n := range counts {
		out[key] = groupFigures{sum: sums[key].StringFixed(6), n: n}
	}
	return out
}
