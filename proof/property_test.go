package proof

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"meterstore"
	"meterstore/metering"
	"meterstore/testkit"
)

// propertyCase is one random workload and interleaving, replayed from seed.
type propertyCase struct {
	seed    uint64
	maLos   int
	days    int
	tenants int
	minute  float64
}

func propertyCases() []propertyCase {
	if *long {
		var cs []propertyCase
		for i := range 12 {
			cs = append(cs, propertyCase{seed: 0xA11CE + uint64(i)*7919, maLos: 6 + i%5, days: 5 + i%4, tenants: i % 3, minute: float64(i%2) * 0.2})
		}
		return cs
	}
	return []propertyCase{
		{seed: 0x5EED01, maLos: 5, days: 4},
		{seed: 0x5EED02, maLos: 4, days: 5, tenants: 2},
		{seed: 0x5EED03, maLos: 4, days: 4, minute: 0.25},
	}
}

// TestProperty: random workloads × random interleavings of appends (originals,
// late corrections, redeliveries), archival runs at random instants and
// queries; after every step the store agrees with the oracle, the invariant
// holds and the watermark never moves back.
func TestProperty(t *testing.T) {
	for _, pc := range propertyCases() {
		t.Run(fmt.Sprintf("seed=%#x", pc.seed), func(t *testing.T) {
			t.Logf("replay: seed %#x maLos %d days %d tenants %d minuteShare %.2f", pc.seed, pc.maLos, pc.days, pc.tenants, pc.minute)
			runProperty(t, pc)
		})
	}
}

func runProperty(t *testing.T, pc propertyCase) {
	rng := rand.New(rand.NewPCG(pc.seed, pc.seed^0x9E3779B97F4A7C15))
	w := testkit.NewWorkload(pc.seed)
	w.MaLos, w.Days, w.Tenants, w.MinuteShare = pc.maLos, pc.days, pc.tenants, pc.minute
	if pc.tenants >= 2 {
		w.SharedMaLoShare = 0.5
	}
	w.CorrectionRate, w.RedeliveryRate, w.GapRate = 0.15, 0.1, 0.02
	// Corrections arrive between one hour and four days later, so some land
	// after their window is archived (late corrections) and some do not.
	w.CorrectionDelay = time.Duration(1+rng.IntN(96)) * time.Hour
	batch, err := w.Generate()
	require.NoError(t, err)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	oracle := testkit.NewOracle(cfg)

	first, _ := metering.DayBounds(batch.Days[0], metering.SparteStrom)
	e := newEnv(t, first, cfg)
	tbl := e.table(t)
	lag := cfg.SettlementLag()

	var lastWM time.Time
	var late, archived, steps int
	ds := batch.Deliveries
	for len(ds) > 0 {
		n := min(len(ds), 1+rng.IntN(12))
		chunk := ds[:n]
		ds = ds[n:]
		series := make([]meterstore.StoredSeries, len(chunk))
		for i, d := range chunk {
			series[i] = d.Series
		}
		out, err := e.cur.st.Append(e.ctx, series...)
		require.NoError(t, err, "step %d: append %d deliveries", steps, n)
		_, err = oracle.RecordDeliveries(chunk...)
		require.NoError(t, err)
		late += out.ColdRows
		wm := e.watermark(t)
		for _, d := range out.Displacements {
			require.Equal(t, !wm.IsZero() && d.Row.From.Before(wm), d.Tier == 2, "a row's from alone decides its tier")
		}
		steps++

		// Archival at a random instant: up to one day past the newest arrival,
		// so windows holding rows whose corrections are still to come settle.
		if rng.IntN(3) == 0 {
			arrival := chunk[len(chunk)-1].Arrival
			now := arrival.Add(lag).Add(-time.Duration(rng.IntN(72)) * time.Hour).Add(time.Duration(rng.IntN(24)) * time.Hour)
			res, err := tbl.Archive(e.ctx, now, rng.IntN(3))
			require.NoError(t, err, "step %d: archive at %s", steps, now)
			require.False(t, res.LeaseContended)
			archived += len(res.Windows)
		}
		wm = e.watermark(t)
		require.False(t, wm.Before(lastWM), "watermark moved back from %s to %s", lastWM, wm)
		lastWM = wm
		e.healthy(t)
		if rng.IntN(3) == 0 || len(ds) == 0 {
			agree(t, e, oracle, fmt.Sprintf("step %d (watermark %s)", steps, wm.Format(time.RFC3339)))
		}
	}
	// Archive everything settled, then check once more across both tiers.
	end := batch.Deliveries[len(batch.Deliveries)-1].Arrival.Add(lag).Add(48 * time.Hour)
	_, err = tbl.Archive(e.ctx, end, 0)
	require.NoError(t, err)
	e.healthy(t)
	agree(t, e, oracle, "after the final archival")
	t.Logf("%d deliveries in %d steps, %d windows archived, %d late rows routed to Iceberg, final watermark %s, %d resolved rows",
		len(batch.Deliveries), steps, archived, late, e.watermark(t).Format(time.RFC3339), oracle.RowCount(time.Time{}, time.Time{}))
}
