package proof

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// Case counts: every case is a fresh deployment, so the CI count is what fits
// the suite's time; the long suite draws bigger shapes too.
const (
	propertyCasesCI   = 50
	propertyCasesLong = 500
)

var propertySeed = flag.String("seed", "", "run only the property case of this seed (as the replay line prints it)")

// propertyStarts are first days a shape may begin on: the autumn DST change
// (Sat 25 Oct 2025 is a 25-hour gas day, Sun 26 Oct a 100-interval
// electricity day), the spring one (Sun 29 Mar 2026, 92 intervals) and an
// ordinary winter day.
var propertyStarts = []time.Time{
	time.Date(2025, time.October, 24, 22, 0, 0, 0, time.UTC),
	time.Date(2026, time.March, 27, 23, 0, 0, 0, time.UTC),
	time.Date(2026, time.January, 13, 23, 0, 0, 0, time.UTC),
}

// propertyShape is one case's workload and interleaving, drawn from its seed
// alone: replaying the seed replays the case.
type propertyShape struct {
	seed     uint64
	work     testkit.Workload
	points   bool // a point table beside the interval table
	archive  int  // an archival after one step in archive
	maxChunk int  // deliveries per append, 1..maxChunk
}

func shapeOf(seed uint64, big bool) propertyShape {
	r := rand.New(rand.NewPCG(seed, seed^0x51A9E))
	w := testkit.NewWorkload(seed)
	w.MaLos, w.Days = 2+r.IntN(3), 1+r.IntN(3)
	if big {
		w.MaLos, w.Days = 3+r.IntN(8), 2+r.IntN(5)
	}
	w.Start = propertyStarts[r.IntN(len(propertyStarts))]
	w.Mix = testkit.Mix{Strom: 2, Gas: float64(r.IntN(2)), Waerme: float64(r.IntN(4) / 3), Wasser: float64(r.IntN(4) / 3)}
	w.ElectricityChannels = 1 + r.IntN(2)
	if r.IntN(2) == 0 {
		w.GasUnit = metering.UnitM3
	}
	w.Tenants = []int{0, 0, 1, 2, 3}[r.IntN(5)]
	if w.Tenants >= 2 && r.IntN(2) == 0 {
		w.SharedMaLoShare = 0.5
	}
	w.MinuteShare = []float64{0, 0, 0.3, 1}[r.IntN(4)]
	w.CorrectionRate = []float64{0, 0.1, 0.3, 0.6}[r.IntN(4)]
	// Corrections arrive between one hour and four days later, so some land
	// after their window is archived (late corrections) and some do not.
	w.CorrectionDelay = time.Duration(1+r.IntN(96)) * time.Hour
	w.RedeliveryRate = []float64{0, 0.1, 0.4}[r.IntN(3)]
	w.GapRate = []float64{0, 0.02}[r.IntN(2)]
	w.SubstitutedRate = 0.05
	s := propertyShape{seed: seed, work: w, points: r.IntN(3) == 0, archive: 1 + r.IntN(4), maxChunk: 1 + r.IntN(12)}
	if s.points {
		w.PointReadings = true
		w.TwoMeLoShare = float64(r.IntN(2)) * 0.5
		s.work = w
	}
	return s
}

func (s propertyShape) String() string {
	w := s.work
	return fmt.Sprintf("maLos %d days %d from %s mix %+v channels %d gas %s tenants %d shared %.1f minute %.1f corrections %.1f after %s redeliveries %.1f gaps %.2f points %t archive 1/%d chunk ≤%d",
		w.MaLos, w.Days, w.Start.Format(time.DateOnly), w.Mix, w.ElectricityChannels, w.GasUnit, w.Tenants, w.SharedMaLoShare, w.MinuteShare,
		w.CorrectionRate, w.CorrectionDelay, w.RedeliveryRate, w.GapRate, s.points, s.archive, s.maxChunk)
}

// propertySeeds are the cases to run: one -seed, else the CI or long count
// from a fixed base, so every run of the suite checks the same cases.
func propertySeeds(t *testing.T) []uint64 {
	if *propertySeed != "" {
		s, err := strconv.ParseUint(*propertySeed, 0, 64)
		require.NoError(t, err, "-seed %q", *propertySeed)
		return []uint64{s}
	}
	n := propertyCasesCI
	if *long {
		n = propertyCasesLong
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = 0x5EED00 + uint64(i)*7919
	}
	return seeds
}

// replayLine is the command that runs one case again.
func replayLine(seed uint64, big bool) string {
	l := ""
	if big {
		l = " -long"
	}
	return fmt.Sprintf("go test -count=1 ./proof -run 'TestProperty$' -seed %#x%s", seed, l)
}

// TestProperty: random workload shapes (tenants, point tables, minute series,
// gas, DST days, late corrections, redeliveries) × random interleavings of
// appends and archival runs at random instants; after every step the store
// agrees with the oracle, the invariant holds and the watermark never moves
// back. A failing case prints its replay line; keep its seed in
// propertyRegressions.
func TestProperty(t *testing.T) {
	for _, seed := range propertySeeds(t) {
		runPropertyCase(t, seed, *long)
	}
}

func runPropertyCase(t *testing.T, seed uint64, big bool) {
	t.Run(fmt.Sprintf("seed=%#x", seed), func(t *testing.T) {
		s := shapeOf(seed, big)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("replay: %s\nshape: %s", replayLine(seed, big), s)
			}
		})
		runProperty(t, s)
	})
}

// propertyTable is one table of a case with its own oracle.
type propertyTable struct {
	tbl    *store.Table
	oracle *testkit.Oracle
	point  bool
}

func runProperty(t *testing.T, s propertyShape) {
	rng := rand.New(rand.NewPCG(s.seed, s.seed^0x9E3779B97F4A7C15))
	var ds []testkit.Delivery
	require.NoError(t, s.work.Stream(func(d testkit.Delivery) error { ds = append(ds, d); return nil }))
	cfgs := []meterstore.TableConfig{s.work.IntervalTable("readings_versions").MustBuild()}
	if s.points {
		cfgs = append(cfgs, s.work.PointTable("register_versions").MustBuild())
	}
	first, _ := metering.DayBounds(metering.LocalDay(s.work.Start), metering.SparteStrom)
	e := newEnv(t, first, cfgs...)
	tables := make([]propertyTable, len(cfgs))
	for i, cfg := range cfgs {
		tbl, ok := e.cur.st.Table(cfg.Name())
		require.True(t, ok)
		tables[i] = propertyTable{tbl: tbl, oracle: testkit.NewOracle(cfg), point: cfg.TimeModel() == meterstore.Point}
	}
	lag := cfgs[0].SettlementLag()

	lastWM := make([]time.Time, len(tables))
	var late, archived, steps int
	for rest := ds; len(rest) > 0; steps++ {
		n := min(len(rest), 1+rng.IntN(s.maxChunk))
		chunk := rest[:n]
		rest = rest[n:]
		for _, pt := range tables {
			late += appendChunk(t, e, pt, chunk, steps)
		}
		// Archival at a random instant: up to one day past the newest arrival,
		// so windows holding rows whose corrections are still to come settle.
		if rng.IntN(s.archive) == 0 {
			pt := tables[rng.IntN(len(tables))]
			arrival := chunk[len(chunk)-1].Arrival
			now := arrival.Add(lag).Add(-time.Duration(rng.IntN(72)) * time.Hour).Add(time.Duration(rng.IntN(24)) * time.Hour)
			res, err := pt.tbl.Archive(e.ctx, now, rng.IntN(3))
			require.NoError(t, err, "step %d: archive %s at %s", steps, pt.tbl.Config().Name(), now)
			require.False(t, res.LeaseContended)
			archived += len(res.Windows)
		}
		check := rng.IntN(3) == 0 || len(rest) == 0
		for i, pt := range tables {
			lastWM[i] = checkTable(t, e, pt, lastWM[i], check, fmt.Sprintf("step %d", steps))
		}
	}
	// Archive everything settled, then check once more across both tiers.
	end := ds[len(ds)-1].Arrival.Add(lag).Add(48 * time.Hour)
	for i, pt := range tables {
		_, err := pt.tbl.Archive(e.ctx, end, 0)
		require.NoError(t, err)
		lastWM[i] = checkTable(t, e, pt, lastWM[i], true, "after the final archival")
	}
	t.Logf("%d deliveries in %d steps, %d windows archived, %d late rows routed to Iceberg, final watermark %s, %d resolved rows",
		len(ds), steps, archived, late, lastWM[0].Format(time.RFC3339), tables[0].oracle.RowCount(time.Time{}, time.Time{}))
}

// appendChunk writes the chunk's deliveries for pt's time model and records
// them in its oracle; it returns the rows routed to Iceberg.
func appendChunk(t *testing.T, e *env, pt propertyTable, chunk []testkit.Delivery, step int) int {
	var mine []testkit.Delivery
	var series []meterstore.StoredSeries
	for _, d := range chunk {
		if d.Point == pt.point {
			mine = append(mine, d)
			series = append(series, d.Series)
		}
	}
	if len(series) == 0 {
		return 0
	}
	write := pt.tbl.Append
	if pt.point {
		write = pt.tbl.AppendReadings
	}
	out, err := write(e.ctx, series...)
	require.NoError(t, err, "step %d: append %d deliveries to %s", step, len(series), pt.tbl.Config().Name())
	_, err = pt.oracle.RecordDeliveries(mine...)
	require.NoError(t, err)
	wm, err := pt.tbl.Watermark(e.ctx)
	require.NoError(t, err)
	for _, d := range out.Displacements {
		require.Equal(t, !wm.IsZero() && d.Row.From.Before(wm), d.Tier == store.ColdTier, "a row's from alone decides its tier")
	}
	return out.ColdRows
}

// checkTable asserts the watermark did not move back from last and the
// invariant holds, and with full the store agrees with the oracle; it returns
// the watermark.
func checkTable(t *testing.T, e *env, pt propertyTable, last time.Time, full bool, label string) time.Time {
	wm, err := pt.tbl.Watermark(e.ctx)
	require.NoError(t, err)
	name := pt.tbl.Config().Name()
	require.False(t, wm.Before(last), "%s: %s watermark moved back from %s to %s", label, name, last, wm)
	r, err := pt.tbl.VerifyInvariant(e.ctx)
	require.NoError(t, err)
	require.True(t, r.Healthy, "%s: %s: %s", label, name, r)
	if full {
		agree(t, e, pt.oracle, fmt.Sprintf("%s: %s (watermark %s)", label, name, wm.Format(time.RFC3339)))
	}
	return wm
}
