package udf

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/metering"
)

// TestHourMemoAgreesWithMetering compares the memo with metering itself
// over instants from 1850 to 2200, in random order so slots collide and
// refill, including Berlin's pre-1893 local mean time (+0:53:28), whose
// hours straddle midnight and must not be cached.
func TestHourMemoAgreesWithMetering(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	from := time.Date(1850, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	to := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	memos := map[string]struct {
		m *hourMemo
		f func(time.Time) metering.Date
	}{
		"local_day": {localDayMemo, metering.LocalDay},
		"gas_day":   {gasDayMemo, metering.GasDay},
		"gas_month": {balancingMonthMemos[metering.SparteGas], func(t time.Time) metering.Date {
			return metering.BalancingMonth(t, metering.SparteGas)
		}},
	}
	lmtMidnight := time.Date(1880, 5, 5, 0, 0, 0, 0, metering.Berlin())
	for name, c := range memos {
		t.Run(name, func(t *testing.T) {
			check := func(ts time.Time) {
				require.Equal(t, c.f(ts).Time(), c.m.date(ts), "%s", ts)
			}
			for range 200_000 {
				check(time.UnixMicro(from + rng.Int64N(to-from)).UTC())
			}
			for _, d := range []time.Duration{-time.Minute, 0, time.Minute, -time.Minute, 0} {
				check(lmtMidnight.Add(d).UTC())
			}
		})
	}
}
