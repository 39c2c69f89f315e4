package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/testkit"
)

// TestCompleteness compares meter_completeness and (*Engine).Completeness with
// the oracle on the autumn DST week (100-interval day, 25-hour gas day) and a
// spring week (92 intervals), with 1-minute series (1500/1380), gaps, and a
// range spanning the watermark.
func TestCompleteness(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		start time.Time
		dst   metering.Date
		want  map[string]int64 // expected intervals on the DST day per resolution, electricity
	}{
		{"autumn", testkit.DefaultStart, metering.Date{Year: 2025, Month: time.October, Day: 26}, map[string]int64{"PT15M": 100, "PT1M": 1500}},
		{"spring", time.Date(2026, time.March, 26, 12, 0, 0, 0, time.UTC), metering.Date{Year: 2026, Month: time.March, Day: 29}, map[string]int64{"PT15M": 92, "PT1M": 1380}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := testkit.NewWorkload(31)
			w.Start, w.Days, w.MaLos, w.Tenants = tc.start, 6, 8, 2
			w.MinuteShare, w.GapRate, w.SubstitutedRate, w.CorrectionRate = 0.3, 0.002, 0.05, 0.1
			a := newArchivedStore(t, w)
			a.deliverCorrections(t)
			eng := a.s.Engine
			from, to := a.batch.Days[0], a.batch.Days[len(a.batch.Days)-1].AddDays(1)
			require.True(t, from.Time().Before(a.cut) && a.cut.Before(to.Time()), "the range spans the watermark")

			got, prov, err := eng.Completeness(ctx, from, to)
			require.NoError(t, err)
			require.True(t, prov.SpansTiers())
			want := a.oracle.Completeness(from, to)
			require.Len(t, got, len(want))
			incomplete, minute, gas := 0, 0, 0
			for i, g := range got {
				o := want[i]
				require.Equal(t, o.MaloID, g.MaloID)
				require.Equal(t, o.ObisCode, g.ObisCode)
				require.Equal(t, o.Identity, g.Identity)
				require.Equal(t, o.Resolution, g.Resolution)
				require.Equal(t, o.Sparte, g.Sparte)
				require.EqualValues(t, o.Expected, g.Expected, "%s %s", g.MaloID, g.Resolution)
				require.EqualValues(t, o.Actual, g.Actual)
				require.EqualValues(t, o.Missing, g.Missing)
				require.EqualValues(t, o.Surplus, g.Surplus)
				require.EqualValues(t, o.Substituted, g.Substituted)
				require.EqualValues(t, o.NotBillable, g.NotBillable)
				require.Equal(t, o.Complete, g.Complete)
				if o.FirstGap.IsZero() {
					require.Nil(t, g.FirstGap)
				} else {
					require.NotNil(t, g.FirstGap)
					require.Equal(t, o.FirstGap, *g.FirstGap)
				}
				if !g.Complete {
					incomplete++
				}
				if g.Resolution == "PT1M" {
					minute++
				}
				if g.Sparte == "GAS" {
					gas++
				}
			}
			require.NotZero(t, incomplete, "the workload has gaps")
			require.NotZero(t, minute, "the workload has 1-minute series")
			require.NotZero(t, gas, "the workload has gas")

			// The DST day alone: the calendar, not 96 / 1440.
			day, _, err := eng.Completeness(ctx, tc.dst, tc.dst.AddDays(1))
			require.NoError(t, err)
			seen := map[string]bool{}
			for _, r := range day {
				if r.Sparte == "STROM" {
					require.Equal(t, tc.want[r.Resolution], r.Expected, "%s %s", r.MaloID, r.Resolution)
					seen[r.Resolution] = true
				}
			}
			require.True(t, seen["PT15M"] && seen["PT1M"], "%v", seen)
			// The gas day before the autumn change is 25 hours, the one before the spring change 23.
			gasDay, _, err := eng.Completeness(ctx, tc.dst.AddDays(-1), tc.dst)
			require.NoError(t, err)
			for _, r := range gasDay {
				if r.Sparte == "GAS" && r.Resolution == "PT15M" {
					require.Equal(t, tc.want["PT15M"], r.Expected, "gas day %s", tc.dst.AddDays(-1))
				}
			}

			// The SQL table function, parameters bound.
			res, err := eng.Query(ctx, `SELECT count(*) FILTER (WHERE NOT complete), CAST(sum(missing) AS BIGINT), CAST(sum(surplus) AS BIGINT) FROM meter_completeness($1, $2)`,
				from.String(), to.String())
			require.NoError(t, err)
			var missing, surplus int64
			for _, o := range want {
				missing += int64(o.Missing)
				surplus += int64(o.Surplus)
			}
			require.EqualValues(t, incomplete, res.Rows[0][0])
			require.Equal(t, missing, res.Rows[0][1])
			require.Equal(t, surplus, res.Rows[0][2])
			// A time.Time is read by the rule of every DATE parameter: its day
			// in the session's zone (UTC here) — a Berlin noon and a UTC midnight
			// are that day — and a Berlin midnight, the UTC day before, refused.
			berlin, err := time.LoadLocation("Europe/Berlin")
			require.NoError(t, err)
			inBerlin := func(d metering.Date, hour int) time.Time {
				return time.Date(d.Time().Year(), d.Time().Month(), d.Time().Day(), hour, 0, 0, 0, berlin)
			}
			for _, args := range [][]any{{inBerlin(from, 12), inBerlin(to, 12)}, {from.Time(), to.Time()}} {
				again, err := eng.Query(ctx, `SELECT count(*) FILTER (WHERE NOT complete), CAST(sum(missing) AS BIGINT), CAST(sum(surplus) AS BIGINT) FROM meter_completeness($1, $2)`, args...)
				require.NoError(t, err, "%s", args[0])
				require.Equal(t, res.Rows, again.Rows, "%s", args[0])
			}
			_, err = eng.Query(ctx, `SELECT * FROM meter_completeness($1, $2)`, inBerlin(from, 0), inBerlin(to, 0))
			var amb *engine.AmbiguousDateError
			require.ErrorAs(t, err, &amb)
			require.Equal(t, from.String(), amb.Own)
			res, err = eng.Query(ctx, `SELECT malo_id, first_gap FROM meter_completeness('`+from.String()+`', '`+to.String()+`') c WHERE NOT c.complete ORDER BY 1`)
			require.NoError(t, err)
			require.Len(t, res.Rows, incomplete)

			// Scoped: only the tenant's series.
			sc, err := eng.Scoped("tenant", "tenant02")
			require.NoError(t, err)
			rows, _, err := sc.Completeness(ctx, from, to)
			require.NoError(t, err)
			require.NotEmpty(t, rows)
			for _, r := range rows {
				require.Equal(t, []string{"tenant02"}, r.Identity)
			}
			// Historical: only what is archived.
			hist, err := eng.InReadMode(engine.Historical)
			require.NoError(t, err)
			_, hp, err := hist.Completeness(ctx, from, to)
			require.NoError(t, err)
			require.False(t, hp.TouchedHotTier())
		})
	}
}
