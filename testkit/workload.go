package testkit

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
)

// DefaultStart is 2025-10-23 00:00 Europe/Berlin: with the default seven days
// the range holds the autumn DST change — the 100-interval electricity day
// (Sun 26 Oct) and the 25-hour gas day (Sat 25 Oct).
var DefaultStart = time.Date(2025, time.October, 22, 22, 0, 0, 0, time.UTC)

// Default sizes used when a count is zero.
const (
	DefaultMaLos = 8
	DefaultDays  = 7
)

// Mix weighs the Sparten. The zero Mix means DefaultMix. MaLos are allocated
// by largest remainder, so with at least as many MaLos as positive weights
// every weighted Sparte appears.
type Mix struct{ Strom, Gas, Waerme, Wasser float64 }

// DefaultMix has all four Sparten, electricity first.
var DefaultMix = Mix{Strom: 4, Gas: 2, Waerme: 1, Wasser: 1}

// StromOnly is the realistic fixture's mix.
var StromOnly = Mix{Strom: 1}

// Workload configures a generated workload. The zero value of every field
// is documented; counts default when zero, rates mean "none" when zero.
// NewWorkload and Fixture return workloads with the design page's rates.
type Workload struct {
	// Seed alone replays a workload: every draw comes from PCG streams derived
	// from it and from the MaLo and the day, so growing Days does not change
	// the days already generated.
	Seed uint64
	// MaLos is the number of Marktlokationen; 0 = DefaultMaLos.
	MaLos int
	// Days is the number of balancing days; 0 = DefaultDays.
	Days int
	// Start names the first balancing day: the Berlin calendar day containing
	// it. Every Sparte delivers whole balancing days (gas 06:00–06:00 local),
	// so its time of day is otherwise ignored. Zero = DefaultStart.
	Start time.Time
	// Mix weighs the Sparten; zero = DefaultMix (all four).
	Mix Mix
	// ElectricityChannels is 1 (import 1-0:1.29.0) or 2 (import and PV
	// export 1-0:2.29.0); 0 = 2. Gas, heat and water have one channel.
	ElectricityChannels int
	// GasUnit is the unit of gas Lastgang values: KWH (after the Brennwert
	// conversion, channel 7-0:33.29.0) or M3 (Betriebsvolumen, 7-0:3.29.0).
	// Zero = KWH.
	GasUnit metering.Unit
	// MinuteShare is the fraction of MaLos metered at PT1M instead of PT15M;
	// 0 = none.
	MinuteShare float64
	// SubstitutedRate is the fraction of values delivered as SUBSTITUTED; 0 = none.
	SubstitutedRate float64
	// CorrectionRate is the fraction of (MaLo, channel, balancing day) groups
	// restated ×1.05 at the next version by the same operator,
	// CorrectionDelay after the original; 0 = none.
	CorrectionRate float64
	// CorrectionDelay is how much later a correction is recorded; 0 = 72 h.
	CorrectionDelay time.Duration
	// GapRate is the expected fraction of intervals missing, in runs of 1–4
	// intervals; 0 = none. A delivery keeps at least one interval.
	GapRate float64
	// RedeliveryRate is the fraction of original deliveries sent a second
	// time, byte-identical (same version, values and recorded_at), a few hours
	// later; 0 = none.
	RedeliveryRate float64
	// Tenants is the number of values of the identity column "tenant"
	// (tenant01, tenant02, …); 0 = no tenant column.
	Tenants int
	// SharedMaLoShare is the fraction of MaLos also delivered under a second
	// tenant (same MaLo, operator and channels, different values), so a
	// correction of one tenant's reading must not supersede the other's.
	// Needs Tenants ≥ 2; 0 = none.
	SharedMaLoShare float64
	// PointReadings adds Zählerstände for the point table: hourly cumulative
	// register values per MeLo, monotone, consistent with the MaLo's
	// consumption. False = none.
	PointReadings bool
	// TwoMeLoShare is the fraction of MaLos whose consumption is split over
	// two MeLos (two registers under one MaLo); 0 = none.
	TwoMeLoShare float64
	// IdentifyByMelo names the MaLo's (first) MeLo on interval deliveries and
	// makes IntervalTable identify readings by it.
	IdentifyByMelo bool
	// Operators are the network operators' Marktpartner-IDs, one per MaLo;
	// nil = DefaultOperators. Each is parsed; a wrong check digit is an error.
	Operators []string
}

// NewWorkload returns the default workload for seed with the design page's
// rates: 1 % SUBSTITUTED and 1 % of groups corrected.
func NewWorkload(seed uint64) Workload {
	return Workload{Seed: seed, SubstitutedRate: 0.01, CorrectionRate: 0.01}
}

// Fixture is the benchmarks' realistic fixture (design.md, Performance
// targets): 500 MaLo × 2 channels × 180 days of 15-minute electricity, 1 %
// SUBSTITUTED, 1 % of groups restated at the next version ×1.05 three days later.
func Fixture(seed uint64) Workload {
	w := NewWorkload(seed)
	w.MaLos, w.Days, w.Mix, w.ElectricityChannels = 500, 180, StromOnly, 2
	return w
}

// DemoStart is the first day of the demo portfolio (23 Sep 2025 00:00
// Berlin): 60 days from it run to mid-November and hold the autumn DST change.
var DemoStart = time.Date(2025, time.September, 22, 22, 0, 0, 0, time.UTC)

// Demo is the portfolio `msql demo` loads: two tenants, a share of MaLos
// metered every minute, gaps, redeliveries and corrections, some MaLos
// shared by both tenants. The interop suite folds the same workload in the
// oracle to check what msql reports on the loaded deployment.
func Demo(seed uint64, malos, days int, minuteShare, correctionRate float64) Workload {
	w := NewWorkload(seed)
	w.MaLos, w.Days, w.Start, w.Tenants = malos, days, DemoStart, 2
	w.MinuteShare, w.GapRate, w.RedeliveryRate, w.CorrectionRate = minuteShare, 0.002, 0.01, correctionRate
	w.SharedMaLoShare = 0.05
	return w
}

// Kind says why a delivery is in the batch.
type Kind uint8

// Delivery kinds.
const (
	Original   Kind = iota + 1 // first delivery of a meter-day
	Correction                 // a restatement at the next version
	Redelivery                 // a byte-identical re-send of an original
)

func (k Kind) String() string {
	switch k {
	case Original:
		return "original"
	case Correction:
		return "correction"
	case Redelivery:
		return "redelivery"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Delivery is one generated delivery: one (MaLo, channel, balancing day), or
// for a point delivery one (MaLo, MeLo, register, balancing day).
type Delivery struct {
	Series meterstore.StoredSeries
	Kind   Kind
	// Point marks Zählerstände for the point table.
	Point bool
	// Arrival is when the delivery reaches the store. It equals RecordedAt
	// except for a Redelivery, which repeats the original's RecordedAt.
	Arrival time.Time
}

// Meter describes one generated series owner: a MaLo under a tenant.
type Meter struct {
	MaloID     metering.MaloID
	Sparte     metering.Sparte
	Operator   metering.BdewCode
	Resolution metering.Resolution
	Unit       metering.Unit       // of the interval channels
	Channels   []metering.ObisCode // interval channels
	// MeloIDs holds one MeLo, or two when the MaLo's consumption is split.
	MeloIDs      []metering.MeloID
	Register     metering.ObisCode // point-table register
	RegisterUnit metering.Unit
	Tenant       string // "" without tenants
	Region       int    // shares a daily cloud factor
	// Shared marks the second-tenant copy of a shared MaLo.
	Shared bool

	scale, kwp float64
	share      float64 // first MeLo's share of consumption when two
	register   []decimal.Decimal
}

// Batch is a generated workload in ingestion order.
type Batch struct {
	// Workload is the configuration with defaults filled in.
	Workload Workload
	Meters   []Meter
	// Days are the balancing days, in order (each Sparte on its own bounds).
	Days []metering.Date
	// Deliveries go to the interval table in this order: by arrival —
	// originals the morning after their day, redeliveries hours later,
	// corrections CorrectionDelay after the original.
	Deliveries []Delivery
	// Points go to the point table, in arrival order (empty unless PointReadings).
	Points []Delivery
}

// IntervalTable is a table declaration that holds the workload's Lastgänge:
// a "tenant" identity column when Tenants > 0, identified by MeLo when
// IdentifyByMelo.
func (w Workload) IntervalTable(name string) meterstore.TableSpec {
	s := meterstore.TableSpec{Name: name, TimeModel: meterstore.Interval}
	if w.IdentifyByMelo {
		t := true
		s.IdentifyByMelo = &t
	}
	if w.Tenants > 0 {
		s.Columns = []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}}
	}
	return s
}

// PointTable is a table declaration for the workload's Zählerstände
// (identified by MeLo, the point-table default).
func (w Workload) PointTable(name string) meterstore.TableSpec {
	s := meterstore.TableSpec{Name: name, TimeModel: meterstore.Point}
	if w.Tenants > 0 {
		s.Columns = []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}}
	}
	return s
}

func rate(name string, v float64) error {
	if v < 0 || v > 1 || v != v {
		return fmt.Errorf("testkit: %s %v must be within [0, 1]", name, v)
	}
	return nil
}

// normalized fills defaults and validates.
func (w Workload) normalized() (Workload, error) {
	if w.MaLos == 0 {
		w.MaLos = DefaultMaLos
	}
	if w.Days == 0 {
		w.Days = DefaultDays
	}
	if w.Start.IsZero() {
		w.Start = DefaultStart
	}
	if w.Mix == (Mix{}) {
		w.Mix = DefaultMix
	}
	if w.ElectricityChannels == 0 {
		w.ElectricityChannels = 2
	}
	if w.GasUnit.IsZero() {
		w.GasUnit = metering.UnitKWh
	}
	if w.CorrectionDelay == 0 {
		w.CorrectionDelay = 72 * time.Hour
	}
	if w.Operators == nil {
		w.Operators = slices.Clone(DefaultOperators)
	}
	switch {
	case w.MaLos < 0 || w.Days < 0 || w.Tenants < 0:
		return w, errors.New("testkit: MaLos, Days and Tenants must not be negative")
	case w.ElectricityChannels != 1 && w.ElectricityChannels != 2:
		return w, fmt.Errorf("testkit: ElectricityChannels %d must be 1 or 2", w.ElectricityChannels)
	case w.Mix.Strom < 0 || w.Mix.Gas < 0 || w.Mix.Waerme < 0 || w.Mix.Wasser < 0:
		return w, errors.New("testkit: Mix weights must not be negative")
	case w.CorrectionDelay < 0:
		return w, errors.New("testkit: CorrectionDelay must not be negative")
	case len(w.Operators) == 0:
		return w, errors.New("testkit: Operators is empty")
	case w.SharedMaLoShare > 0 && w.Tenants < 2:
		return w, errors.New("testkit: SharedMaLoShare needs Tenants ≥ 2")
	}
	if err := metering.SparteGas.AllowsUnit(w.GasUnit); err != nil {
		return w, fmt.Errorf("testkit: GasUnit: %w", err)
	}
	for _, r := range []struct {
		n string
		v float64
	}{{"MinuteShare", w.MinuteShare}, {"SubstitutedRate", w.SubstitutedRate}, {"CorrectionRate", w.CorrectionRate},
		{"GapRate", w.GapRate}, {"RedeliveryRate", w.RedeliveryRate}, {"SharedMaLoShare", w.SharedMaLoShare}, {"TwoMeLoShare", w.TwoMeLoShare}} {
		if err := rate(r.n, r.v); err != nil {
			return w, err
		}
	}
	return w, nil
}

// mix64 is SplitMix64's finaliser, used to derive independent stream seeds.
func mix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// stream derives a PCG generator for one purpose from the seed.
func stream(seed uint64, parts ...uint64) *rand.Rand {
	a, b := mix64(seed), mix64(^seed)
	for _, p := range parts {
		a = mix64(a ^ p)
		b = mix64(b + p)
	}
	return rand.New(rand.NewPCG(a, b))
}

// Stream purposes.
const (
	purposeAlloc = iota + 1
	purposeMeter
	purposeDay
	purposeCloud
)

func dayOrdinal(d metering.Date) uint64 { return uint64(d.Time().Unix() / 86400) }

type gen struct {
	w      Workload
	meters []Meter
	days   []metering.Date
	seq    int
	msgs   int
}

// allocate assigns n slots to weights by largest remainder, then shuffles.
func allocate(r *rand.Rand, n int, m Mix) []metering.Sparte {
	ws := []struct {
		s metering.Sparte
		w float64
	}{{metering.SparteStrom, m.Strom}, {metering.SparteGas, m.Gas}, {metering.SparteWaerme, m.Waerme}, {metering.SparteWasser, m.Wasser}}
	total := m.Strom + m.Gas + m.Waerme + m.Wasser
	counts := make([]int, len(ws))
	rem := make([]float64, len(ws))
	left := n
	for i, x := range ws {
		q := x.w / total * float64(n)
		counts[i] = int(q)
		rem[i] = q - float64(counts[i])
		left -= counts[i]
	}
	// Every weighted Sparte gets one slot before remainders are compared.
	for i, x := range ws {
		if left > 0 && x.w > 0 && counts[i] == 0 {
			counts[i]++
			rem[i] = -1
			left--
		}
	}
	for ; left > 0; left-- {
		best := 0
		for i := range rem {
			if rem[i] > rem[best] {
				best = i
			}
		}
		counts[best]++
		rem[best] = -1
	}
	out := make([]metering.Sparte, 0, n)
	for i, x := range ws {
		for range counts[i] {
			out = append(out, x.s)
		}
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func newGen(w Workload) (*gen, error) {
	w, err := w.normalized()
	if err != nil {
		return nil, err
	}
	ops := make([]metering.BdewCode, len(w.Operators))
	for i, s := range w.Operators {
		if ops[i], err = metering.ParseBdewCode(s); err != nil {
			return nil, fmt.Errorf("testkit: operator: %w", err)
		}
	}
	g := &gen{w: w}
	first := metering.LocalDay(w.Start)
	for i := range w.Days {
		g.days = append(g.days, first.AddDays(i))
	}
	sparten := allocate(stream(w.Seed, purposeAlloc), w.MaLos, w.Mix)
	seen := map[string]bool{}
	for i, sp := range sparten {
		r := stream(w.Seed, purposeMeter, uint64(i))
		m := Meter{Sparte: sp, Operator: ops[r.IntN(len(ops))], Resolution: metering.ResolutionPT15M, Region: r.IntN(3)}
		for {
			if m.MaloID, err = newMaloID(r, sp); err != nil {
				return nil, err
			}
			if !seen[m.MaloID.String()] {
				seen[m.MaloID.String()] = true
				break
			}
		}
		if r.Float64() < w.MinuteShare {
			m.Resolution = metering.ResolutionPT1M
		}
		switch sp {
		case metering.SparteStrom:
			m.Unit, m.Register, m.RegisterUnit = metering.UnitKWh, ObisRegisterStrom, metering.UnitKWh
			m.Channels = []metering.ObisCode{ObisImport}
			if w.ElectricityChannels == 2 {
				m.Channels = append(m.Channels, ObisExport)
			}
			m.scale = 0.6 + 0.8*r.Float64()
		case metering.SparteGas:
			m.Unit, m.Register, m.RegisterUnit = w.GasUnit, ObisRegisterGas, metering.UnitM3
			m.Channels = []metering.ObisCode{ObisGasEnergy}
			if w.GasUnit == metering.UnitM3 {
				m.Channels = []metering.ObisCode{ObisGasVolume}
			}
			m.scale = 0.5 + 1.5*r.Float64()
		case metering.SparteWaerme:
			m.Unit, m.Register, m.RegisterUnit = metering.UnitKWh, ObisRegisterHeat, metering.UnitKWh
			m.Channels = []metering.ObisCode{ObisHeatEnergy}
			m.scale = 0.5 + 2.5*r.Float64()
		case metering.SparteWasser:
			m.Unit, m.Register, m.RegisterUnit = metering.UnitM3, ObisRegisterWasser, metering.UnitM3
			m.Channels = []metering.ObisCode{ObisWaterVol}
			m.scale = 0.5 + r.Float64()
		}
		m.kwp = 3 + 7*r.Float64()
		netz := 100000 + r.IntN(900000)
		melos := 1
		if r.Float64() < w.TwoMeLoShare {
			melos = 2
		}
		m.share = 0.3 + 0.4*r.Float64()
		for range melos {
			id, err := newMeloID(r, netz)
			if err != nil {
				return nil, err
			}
			m.MeloIDs = append(m.MeloIDs, id)
			m.register = append(m.register, dec6(float64(r.IntN(40000))+r.Float64()))
		}
		if w.Tenants > 0 {
			t := r.IntN(w.Tenants)
			m.Tenant = fmt.Sprintf("tenant%02d", t+1)
			if r.Float64() < w.SharedMaLoShare {
				c := m
				c.Shared = true
				c.Tenant = fmt.Sprintf("tenant%02d", (t+1)%w.Tenants+1)
				c.scale *= 0.8 + 0.4*r.Float64()
				c.MeloIDs = slices.Clone(m.MeloIDs)
				c.register = slices.Clone(m.register)
				g.meters = append(g.meters, m)
				m = c
			}
		}
		g.meters = append(g.meters, m)
	}
	return g, nil
}

type pending struct {
	d   Delivery
	seq int
}

// Stream generates the workload in ingestion (arrival) order without
// holding it all in memory: only corrections not yet due are buffered. fn
// sees interval and point deliveries interleaved (Delivery.Point tells them
// apart); an error from fn stops the stream and is returned.
func (w Workload) Stream(fn func(Delivery) error) error {
	g, err := newGen(w)
	if err != nil {
		return err
	}
	return g.run(fn)
}

func (g *gen) run(fn func(Delivery) error) error {
	var queue []pending
	flush := func(before time.Time) error {
		slices.SortStableFunc(queue, func(a, b pending) int {
			return cmp.Or(a.d.Arrival.Compare(b.d.Arrival), cmp.Compare(a.seq, b.seq))
		})
		n := 0
		for n < len(queue) && (before.IsZero() || queue[n].d.Arrival.Before(before)) {
			if err := fn(queue[n].d); err != nil {
				return err
			}
			n++
		}
		queue = slices.Delete(queue, 0, n)
		return nil
	}
	for _, day := range g.days {
		for mi := range g.meters {
			out, err := g.meterDay(mi, day)
			if err != nil {
				return err
			}
			for _, d := range out {
				queue = append(queue, pending{d: d, seq: g.seq})
				g.seq++
			}
		}
		// Nothing of the next day arrives before its electricity day has
		// ended plus one hour: emit everything due before then.
		next, _ := metering.DayBounds(day.AddDays(2), metering.SparteStrom)
		if err := flush(next.Add(time.Hour)); err != nil {
			return err
		}
	}
	return flush(time.Time{})
}

// Generate produces the whole workload in memory.
func (w Workload) Generate() (Batch, error) {
	g, err := newGen(w)
	if err != nil {
		return Batch{}, err
	}
	b := Batch{Workload: g.w, Days: slices.Clone(g.days)}
	err = g.run(func(d Delivery) error {
		if d.Point {
			b.Points = append(b.Points, d)
		} else {
			b.Deliveries = append(b.Deliveries, d)
		}
		return nil
	})
	if err != nil {
		return Batch{}, err
	}
	b.Meters = make([]Meter, len(g.meters))
	for i, m := range g.meters {
		m.register = nil
		m.Channels = slices.Clone(m.Channels)
		m.MeloIDs = slices.Clone(m.MeloIDs)
		b.Meters[i] = m
	}
	return b, nil
}

// Version returns the original version of balancing day d: yyyymmdd000001.
func Version(d metering.Date) metering.Version {
	v, err := metering.NewVersion(uint64(d.Year*10000+int(d.Month)*100+d.Day)*1_000_000 + 1)
	if err != nil {
		panic(err) // unreachable: never zero
	}
	return v
}

func (g *gen) source(op metering.BdewCode) (metering.Source, error) {
	g.msgs++
	return metering.SourceMscons(op, fmt.Sprintf("TK%016X-%07d", g.w.Seed, g.msgs))
}

func provenance(at time.Time, event string, note *string) metering.Provenance {
	return metering.Provenance{{OccurredAt: at, EventType: event, Actor: metering.SourceKindMSCONS, Note: note}}
}

// meterDay generates one meter's deliveries for one balancing day: the
// originals per channel, their redeliveries and corrections, and the point
// readings.
func (g *gen) meterDay(mi int, day metering.Date) ([]Delivery, error) {
	w := g.w
	m := &g.meters[mi]
	ord := dayOrdinal(day)
	tenantSalt := uint64(0)
	if m.Shared {
		tenantSalt = 1
	}
	r := stream(w.Seed, purposeDay, mixMalo(m.MaloID), ord, tenantSalt)
	cloud := 0.15 + 0.85*stream(w.Seed, purposeCloud, uint64(m.Region), ord).Float64()

	from, to := metering.DayBounds(day, m.Sparte)
	step, _ := m.Resolution.Fixed()
	per15 := float64(step) / float64(15*time.Minute)
	n := int(to.Sub(from) / step)
	recorded := to.Add(time.Hour + time.Duration(r.IntN(3600))*time.Second)
	version := Version(day)
	scope := metering.ScopeFor(m.Operator, from, m.Sparte)
	var extra map[string]string
	if m.Tenant != "" {
		extra = map[string]string{"tenant": m.Tenant}
	}
	var melo metering.MeloID
	if w.IdentifyByMelo {
		melo = m.MeloIDs[0]
	}

	var out []Delivery
	var consumption []decimal.Decimal // the first channel's values, before gaps
	for ci, ch := range m.Channels {
		ivs := make([]metering.Interval, 0, n)
		for i := range n {
			f := from.Add(time.Duration(i) * step)
			mid := f.Add(step / 2)
			var v float64
			switch {
			case m.Sparte == metering.SparteStrom && ch == ObisExport:
				v = pv(mid, m.kwp, cloud, 0.95+0.1*r.Float64())
			case m.Sparte == metering.SparteStrom:
				v = household(mid, m.scale, 0.8+0.4*r.Float64())
			case m.Sparte == metering.SparteGas:
				v = gasShape(mid, m.scale, 0.85+0.3*r.Float64())
				if m.Unit == metering.UnitM3 {
					v /= gasKWhPerM3
				}
			case m.Sparte == metering.SparteWaerme:
				v = heatShape(mid, m.scale, 0.9+0.2*r.Float64())
			default:
				v = waterShape(mid, m.scale, 0.7+0.6*r.Float64())
			}
			q := metering.QualityMeasured
			if r.Float64() < w.SubstitutedRate {
				q = metering.QualitySubstituted
			}
			iv, err := metering.NewInterval(f, f.Add(step), dec6(v*per15), q)
			if err != nil {
				return nil, err
			}
			ivs = append(ivs, iv)
		}
		if ci == 0 {
			consumption = make([]decimal.Decimal, n)
			for i, iv := range ivs {
				consumption[i] = iv.Value
			}
		}
		ivs = gaps(r, ivs, w.GapRate)

		src, err := g.source(m.Operator)
		if err != nil {
			return nil, err
		}
		orig := metering.Delivery{
			MaloID: m.MaloID, MeloID: melo, Obis: ch, Sparte: m.Sparte, Unit: m.Unit, Resolution: m.Resolution,
			Intervals: ivs, Source: src, Provenance: provenance(recorded, "INGESTED", nil),
			Scope: scope, Version: version, RecordedAt: recorded,
		}
		out = append(out, Delivery{Series: meterstore.StoredSeries{Delivery: orig, Extra: extra}, Kind: Original, Arrival: recorded})

		if r.Float64() < w.RedeliveryRate {
			again := orig
			again.Intervals = slices.Clone(orig.Intervals)
			again.Provenance = slices.Clone(orig.Provenance)
			out = append(out, Delivery{Series: meterstore.StoredSeries{Delivery: again, Extra: maps.Clone(extra)}, Kind: Redelivery,
				Arrival: recorded.Add(2*time.Hour + time.Duration(r.IntN(4*3600))*time.Second)})
		}
		if r.Float64() < w.CorrectionRate {
			fix := make([]metering.Interval, len(ivs))
			for i, iv := range ivs {
				iv.Value = iv.Value.Mul(decimal.RequireFromString("1.05")).Round(6)
				fix[i] = iv
			}
			at := recorded.Add(w.CorrectionDelay)
			src, err := g.source(m.Operator)
			if err != nil {
				return nil, err
			}
			note := "restates version " + version.String() + " ×1.05"
			corr := orig
			corr.Intervals, corr.Source, corr.Version, corr.RecordedAt = fix, src, version.Next(), at
			corr.Provenance = provenance(at, "CORRECTED", &note)
			out = append(out, Delivery{Series: meterstore.StoredSeries{Delivery: corr, Extra: maps.Clone(extra)}, Kind: Correction, Arrival: at})
		}
	}

	if w.PointReadings && !m.Shared {
		pts, err := g.points(m, from, step, consumption, scope, version, recorded, extra)
		if err != nil {
			return nil, err
		}
		out = append(out, pts...)
	}
	return out, nil
}

func mixMalo(m metering.MaloID) uint64 {
	var h uint64 = 1469598103934665603
	for _, c := range []byte(m.String()) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}

// gaps drops runs of 1–4 intervals so that about rate of them are missing.
func gaps(r *rand.Rand, ivs []metering.Interval, rate float64) []metering.Interval {
	if rate <= 0 {
		return ivs
	}
	out := ivs[:0:0]
	skip := 0
	for _, iv := range ivs {
		if skip == 0 && r.Float64() < rate/2.5 {
			skip = 1 + r.IntN(4)
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, iv)
	}
	if len(out) == 0 {
		out = append(out, ivs[0])
	}
	return out
}

// points produces hourly register readings for each MeLo of m over the day:
// the register at each full hour from the day start is the previous value
// plus the consumption since, split between two MeLos by m.share.
func (g *gen) points(m *Meter, from time.Time, step time.Duration, consumption []decimal.Decimal,
	scope metering.VersionScope, version metering.Version, recorded time.Time, extra map[string]string) ([]Delivery, error) {
	var out []Delivery
	perHour := int(time.Hour / step)
	for k, melo := range m.MeloIDs {
		share := 1.0
		if len(m.MeloIDs) == 2 {
			share = m.share
			if k == 1 {
				share = 1 - m.share
			}
		}
		sh := decimal.NewFromFloat(share)
		var rds []metering.Reading
		reg := m.register[k]
		for i := 0; i*perHour < len(consumption); i++ {
			at := from.Add(time.Duration(i) * time.Hour)
			rd, err := metering.NewReading(at, reg, metering.QualityMeasured)
			if err != nil {
				return nil, err
			}
			rds = append(rds, rd)
			var used decimal.Decimal
			for _, v := range consumption[i*perHour : min((i+1)*perHour, len(consumption))] {
				used = used.Add(v)
			}
			if m.Sparte == metering.SparteGas && m.Unit == metering.UnitKWh {
				used = used.Div(decimal.NewFromFloat(gasKWhPerM3))
			}
			reg = reg.Add(used.Mul(sh).Truncate(6))
		}
		m.register[k] = reg
		src, err := g.source(m.Operator)
		if err != nil {
			return nil, err
		}
		d := metering.Delivery{
			MaloID: m.MaloID, MeloID: melo, Obis: m.Register, Sparte: m.Sparte, Unit: m.RegisterUnit, Resolution: metering.ResolutionPT1H,
			Readings: rds, Source: src, Provenance: provenance(recorded, "INGESTED", nil),
			Scope: scope, Version: version, RecordedAt: recorded,
		}
		out = append(out, Delivery{Series: meterstore.StoredSeries{Delivery: d, Extra: maps.Clone(extra)}, Kind: Original, Point: true, Arrival: recorded})
	}
	return out, nil
}
