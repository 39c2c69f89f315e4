package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// TestSessionTimeZoneIsPinned: the session time zone is the engine's setting
// (UTC by default), never the host's — CI runs this package once more under
// TZ=Europe/Berlin — and a literal without an offset, a ::TIMESTAMP and a
// ::DATE cast of a parameter select, across the watermark, exactly the rows
// the oracle finds for that zone's reading of them.
func TestSessionTimeZoneIsPinned(t *testing.T) {
	w := testkit.NewWorkload(0x7A)
	w.MaLos, w.Days, w.Mix = 2, 4, testkit.StromOnly
	a := newArchivedStore(t, w)
	ctx := context.Background()
	tables := []engine.Table{{Config: a.cfg, Hot: store.HotTierOf(a.tbl.Hot), Cold: store.ColdTierOf(a.tbl.Cold)}}
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	for _, tc := range []struct {
		setting, want string
		loc           *time.Location
	}{{"", "UTC", time.UTC}, {"Europe/Berlin", "Europe/Berlin", berlin}} {
		t.Run("zone="+tc.want, func(t *testing.T) {
			e, err := engine.Open(ctx, engine.Config{Tables: tables, TimeZone: tc.setting})
			require.NoError(t, err)
			defer e.Close()
			require.Equal(t, tc.want, e.TimeZone())
			res, err := e.Query(ctx, `SELECT current_setting('TimeZone')`)
			require.NoError(t, err)
			require.Equal(t, tc.want, res.Rows[0][0], "the session zone follows the setting, not the host")

			// An instant one hour below the watermark: read in the zone, the
			// wall clock of the literal lands on either side of the split.
			at := a.cut.Add(-time.Hour)
			wall := at.UTC().Format(time.DateTime)
			local := time.Date(at.Year(), at.Month(), at.Day(), at.Hour(), 0, 0, 0, tc.loc)
			midnight := func(x time.Time) time.Time {
				y, m, d := x.In(tc.loc).Date()
				return time.Date(y, m, d, 0, 0, 0, 0, tc.loc)
			}
			for _, q := range []struct {
				name, sql string
				args      []any
				lo        time.Time
			}{
				{"literal", fmt.Sprintf(`SELECT count(*) FROM readings WHERE "from" >= '%s'`, wall), nil, local},
				{"timestamp cast", `SELECT count(*) FROM readings WHERE "from" >= $1::TIMESTAMP`, []any{at}, at},
				{"date cast", `SELECT count(*) FROM readings WHERE "from" >= $1::DATE`, []any{at}, midnight(at)},
				{"string parameter", `SELECT count(*) FROM readings WHERE "from" >= $1`, []any{wall}, local},
				{"at time zone", fmt.Sprintf(`SELECT count(*) FROM readings WHERE "from" >= TIMESTAMP '%s' AT TIME ZONE 'America/New_York'`, wall),
					nil, time.Date(at.Year(), at.Month(), at.Day(), at.Hour(), 0, 0, 0, mustZone(t, "America/New_York"))},
			} {
				res, err := e.Query(ctx, q.sql, q.args...)
				require.NoError(t, err, q.name)
				require.Equal(t, int64(a.oracle.RowCount(q.lo, time.Time{})), res.Rows[0][0], "%s: rows from %s", q.name, q.lo.UTC())
				require.Equal(t, tc.want, res.Provenance.TimeZone)
			}
		})
	}
	_, err = engine.Open(ctx, engine.Config{Tables: tables, TimeZone: "Mars/Olympus"})
	require.ErrorContains(t, err, "Mars/Olympus")
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}
