package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// TestTimeArgumentOfADateParameter: a time.Time bound where the statement
// wants a DATE is its day in the session's zone, as DuckDB's cast of an instant
// takes it — a Berlin midnight in a Berlin session is that day, not the UTC day
// before it — and a value whose own day is another is refused, never read as
// either; a UTC midnight (how pgwire and Flight SQL bind a date) is its day in
// every zone. In each zone, on a cold and a hot day.
func TestTimeArgumentOfADateParameter(t *testing.T) {
	w := testkit.NewWorkload(0x7B)
	w.MaLos, w.Days, w.Mix = 2, 5, testkit.StromOnly
	a := newArchivedStore(t, w)
	ctx := context.Background()
	tables := []engine.Table{{Config: a.cfg, Hot: store.HotTierOf(a.tbl.Hot), Cold: store.ColdTierOf(a.tbl.Cold)}}
	berlin, newYork := mustZone(t, "Europe/Berlin"), mustZone(t, "America/New_York")
	all := time.Time{}
	byDay := a.oracle.SumBy(all, all, func(r meterstore.Row) string { return r.BalancingDay.Format(time.DateOnly) })
	for _, zone := range []string{"", "Europe/Berlin", "America/New_York"} {
		e, err := engine.Open(ctx, engine.Config{Tables: tables, TimeZone: zone})
		require.NoError(t, err)
		defer e.Close()
		for _, day := range []time.Time{a.batch.Days[1].Time(), a.batch.Days[len(a.batch.Days)-1].Time()} {
			want := byDay[day.Format(time.DateOnly)]
			require.False(t, want.IsZero())
			y, m, d := day.Date()
			for _, arg := range []time.Time{
				time.Date(y, m, d, 0, 0, 0, 0, berlin),
				time.Date(y, m, d, 23, 30, 0, 0, berlin),
				time.Date(y, m, d, 22, 0, 0, 0, newYork),
				time.Date(y, m, d, 0, 0, 0, 0, time.UTC),
			} {
				for _, q := range []string{
					`SELECT sum(value) FROM readings WHERE balancing_day = $1`,
					`SELECT sum(value) FROM readings WHERE balancing_day = $1::DATE`,
					`SELECT sum(value) FROM readings WHERE balancing_day BETWEEN $1 AND $1`,
				} {
					res, err := e.Query(ctx, q, arg)
					utcMidnight := arg.Location() == time.UTC && arg.Hour() == 0
					if session := arg.In(mustZone(t, e.TimeZone())).Format(time.DateOnly); session != arg.Format(time.DateOnly) && !utcMidnight {
						var amb *engine.AmbiguousDateError
						require.ErrorAs(t, err, &amb, "zone %q, %s with %s", zone, q, arg)
						require.Equal(t, session, amb.Session)
						continue
					}
					require.NoError(t, err, q)
					got := res.Rows[0][0].(decimal.Decimal)
					require.True(t, got.Equal(want), "zone %q, %s with %s: got %s, want %s (the day %s)", zone, q, arg, got, want, day.Format(time.DateOnly))
				}
			}
		}
	}
}
