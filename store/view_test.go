package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// A typed read of a kind the store holds no table of is an error naming the
// other read, from the store and from every view derived from it.
func TestTypedReadsWithoutTheTableKind(t *testing.T) {
	points, err := meterstore.TableSpec{Name: "register_versions", TimeModel: meterstore.Point}.Build()
	require.NoError(t, err)
	views := func(e *env) map[string]typedReads {
		return map[string]typedReads{"store": e.st, "AsKnownAt": e.st.AsKnownAt(time.Now())}
	}
	e := open(t, nil, points)
	for name, v := range views(e) {
		_, err = v.Series(maloA).Obis(imp).Collect(e.ctx)
		require.ErrorIs(t, err, store.ErrWrongTimeModel, name)
		require.Contains(t, err.Error(), "Readings", name)
		_, err = v.Series(maloA).Latest(e.ctx)
		require.ErrorIs(t, err, store.ErrWrongTimeModel, name)
		_, err = v.Series(maloA).Channels(e.ctx)
		require.ErrorIs(t, err, store.ErrWrongTimeModel, name)
	}
	_, err = e.st.Series(maloA).Collect(e.ctx)
	require.ErrorIs(t, err, store.ErrWrongTimeModel, "the store's own Series, as callers had it")

	e = open(t, nil, intervalTable(t, nil))
	for name, v := range views(e) {
		_, err = v.Readings(maloA).Collect(e.ctx)
		require.ErrorIs(t, err, store.ErrWrongTimeModel, name)
		require.Contains(t, err.Error(), "Series", name)
		_, err = v.Readings(maloA).Deliveries(e.ctx)
		require.ErrorIs(t, err, store.ErrWrongTimeModel, name)
		_, err = v.Readings(maloA).Latest(e.ctx)
		require.ErrorIs(t, err, store.ErrWrongTimeModel, name)
	}
}

// derivedFixture is a two-tenant store with an interval and a point table,
// both partly archived, with corrections on both sides of the watermark, and
// the oracles of both tables.
type derivedFixture struct {
	e                *env
	batch            testkit.Batch
	intervals, point *store.Table
	oi, op           *testkit.Oracle
	wm               time.Time
	knownAt          time.Time // between the first and the last delivery
	ceiling          uint64    // a version ceiling that excludes the later days
}

func newDerivedFixture(t *testing.T) *derivedFixture {
	t.Helper()
	w := testkit.NewWorkload(23)
	w.MaLos, w.Days, w.Mix = 3, 4, testkit.StromOnly
	w.Tenants, w.SharedMaLoShare, w.PointReadings, w.TwoMeLoShare = 2, 0.7, true, 0.6
	w.CorrectionRate, w.CorrectionDelay = 0.4, time.Hour
	batch, err := w.Generate()
	require.NoError(t, err)
	ic := w.IntervalTable("readings_versions").MustBuild()
	pc := w.PointTable("register_versions").MustBuild()
	f := &derivedFixture{batch: batch, oi: testkit.NewOracle(ic), op: testkit.NewOracle(pc)}
	f.e = open(t, func(c *setup) { c.Now = func() time.Time { return batch.Days[0].Time() } }, ic, pc)
	f.intervals, _ = f.e.st.Table(ic.Name())
	f.point, _ = f.e.st.Table(pc.Name())

	var originals, corrections, points []meterstore.StoredSeries
	var recorded []time.Time
	for _, d := range batch.Deliveries {
		recorded = append(recorded, d.Series.RecordedAt)
		if d.Kind == testkit.Correction {
			corrections = append(corrections, d.Series)
		} else {
			originals = append(originals, d.Series)
		}
	}
	for _, d := range batch.Points {
		points = append(points, d.Series)
	}
	require.NotEmpty(t, corrections)
	f.append(t, originals, points)
	cut := batch.Days[len(batch.Days)-1].Time()
	for _, tbl := range []*store.Table{f.intervals, f.point} {
		_, err := tbl.Archive(f.e.ctx, cut.Add(tbl.Config().SettlementLag()), 0)
		require.NoError(t, err)
	}
	for _, tbl := range []*store.Table{f.intervals, f.point} {
		wm, err := tbl.Watermark(f.e.ctx)
		require.NoError(t, err)
		require.True(t, wm.Equal(cut), "watermark of %s %s, want %s", tbl.Config().Name(), wm, cut)
	}
	f.wm = cut
	f.append(t, corrections, nil)

	slices.SortFunc(recorded, time.Time.Compare)
	f.knownAt = recorded[len(recorded)/2]
	f.ceiling = testkit.Version(batch.Days[1]).Uint64()
	return f
}

func (f *derivedFixture) append(t *testing.T, intervals, points []meterstore.StoredSeries) {
	t.Helper()
	_, err := f.e.st.Append(f.e.ctx, intervals...)
	require.NoError(t, err)
	_, err = f.oi.RecordSeries(intervals...)
	require.NoError(t, err)
	if len(points) > 0 {
		_, err = f.e.st.AppendReadings(f.e.ctx, points...)
		require.NoError(t, err)
		_, err = f.op.RecordSeries(points...)
		require.NoError(t, err)
	}
}

// reading is one value of a typed read, as the oracle has it too.
type reading struct {
	at      time.Time
	value   decimal.Decimal
	quality string
}

// of keeps the oracle rows of one channel of one reading, in order.
func of(rows []meterstore.Row, malo, obis, melo, tenant string) []reading {
	out := []reading{}
	for _, r := range rows {
		if r.MaloID != malo || r.ObisCode != obis || (melo != "" && (r.MeloID == nil || *r.MeloID != melo)) ||
			(r.Extra[0] == nil || *r.Extra[0] != tenant) {
			continue
		}
		out = append(out, reading{r.From, r.Value, r.Quality})
	}
	return out
}

func intervalReadings(ivs []metering.Interval) []reading {
	out := []reading{}
	for _, iv := range ivs {
		out = append(out, reading{iv.From, iv.Value, iv.Quality.String()})
	}
	return out
}

func registerReadings(rs *store.RegisterSeries) []reading {
	out := []reading{}
	if rs != nil {
		for _, r := range rs.Readings {
			out = append(out, reading{r.At, r.Value, r.Quality.String()})
		}
	}
	return out
}

// firstDifference is the index at which a and b differ, -1 when they agree.
func firstDifference(a, b []reading) int {
	for i := range min(len(a), len(b)) {
		if !a[i].at.Equal(b[i].at) || !a[i].value.Equal(b[i].value) || a[i].quality != b[i].quality {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func sameReadings(t *testing.T, want, got []reading, what string) {
	t.Helper()
	if i := firstDifference(want, got); i >= 0 {
		show := func(rs []reading) string {
			if i >= len(rs) {
				return "nothing"
			}
			return fmt.Sprintf("%s %s %s", rs[i].at.Format(time.RFC3339), rs[i].value, rs[i].quality)
		}
		t.Fatalf("%s: %d readings, oracle %d; #%d is %s, oracle %s", what, len(got), len(want), i, show(got), show(want))
	}
}

// A view derived with AsOf, AsOfTime, AsKnownAt or Scoped answers the typed
// reads — Series and Readings — under its pin, ceilings and scope, equal to
// the oracle under the same bounds, with the store's refusals.
func TestTypedReadsOnDerivedViews(t *testing.T) {
	f := newDerivedFixture(t)
	st, ctx := f.e.st, f.e.ctx
	all := time.Time{}
	scoped, err := st.Scoped("tenant", "tenant01")
	require.NoError(t, err)
	ceiling := f.ceiling

	for _, tc := range []struct {
		name string
		// views read the interval and the point table (AsOf pins one table's snapshot id).
		series, readings typedReads
		oi, op           testkit.View
		to               time.Time // the range read: cold only under AsOf
		tenant           string    // the scope, "" for none
	}{
		{name: "AsOf", series: st.AsOf(f.intervals.Cold().CurrentSnapshotID(), &ceiling), readings: st.AsOf(f.point.Cold().CurrentSnapshotID(), &ceiling),
			oi: f.oi.With(testkit.Ceiling{MaxVersion: ceiling}), op: f.op.With(testkit.Ceiling{MaxVersion: ceiling}), to: f.wm},
		{name: "AsOfTime", series: st.AsOfTime(time.Now(), &ceiling), readings: st.AsOfTime(time.Now(), &ceiling),
			oi: f.oi.With(testkit.Ceiling{MaxVersion: ceiling}), op: f.op.With(testkit.Ceiling{MaxVersion: ceiling}), to: f.wm},
		{name: "AsKnownAt", series: st.AsKnownAt(f.knownAt), readings: st.AsKnownAt(f.knownAt),
			oi: f.oi.With(testkit.Ceiling{KnownAt: f.knownAt}), op: f.op.With(testkit.Ceiling{KnownAt: f.knownAt})},
		{name: "Scoped", series: scoped, readings: scoped, oi: f.oi.Current(), op: f.op.Current(), tenant: "tenant01"},
		{name: "Scoped then AsKnownAt", series: scoped.AsKnownAt(f.knownAt), readings: scoped.AsKnownAt(f.knownAt),
			oi: f.oi.With(testkit.Ceiling{KnownAt: f.knownAt}), op: f.op.With(testkit.Ceiling{KnownAt: f.knownAt}), tenant: "tenant01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			winners, current := tc.oi.Winners(all, tc.to), f.oi.Winners(all, all)
			registers, currentRegisters := tc.op.Winners(all, tc.to), f.op.Winners(all, all)
			differs, compared := false, 0
			for _, m := range f.batch.Meters {
				malo, tenant := m.MaloID.String(), m.Tenant
				if tc.tenant != "" && tenant != tc.tenant {
					continue
				}
				for _, ch := range m.Channels {
					what := fmt.Sprintf("series %s %s %s", malo, ch, tenant)
					q := tc.series.Series(malo).Obis(ch.String())
					if tc.tenant == "" {
						q = q.ColumnEq("tenant", tenant)
					}
					ivs, err := q.Range(all, tc.to).Intervals(ctx)
					require.NoError(t, err, what)
					want := of(winners, malo, ch.String(), "", tenant)
					sameReadings(t, want, intervalReadings(ivs), what)
					differs = differs || firstDifference(want, of(current, malo, ch.String(), "", tenant)) >= 0
					compared++
				}
				for _, melo := range m.MeloIDs {
					what := fmt.Sprintf("register %s %s %s", malo, melo, tenant)
					q := tc.readings.Readings(malo).Melo(melo.String()).Obis(m.Register.String())
					if tc.tenant == "" {
						q = q.ColumnEq("tenant", tenant)
					}
					rs, err := q.Range(all, tc.to).Collect(ctx)
					require.NoError(t, err, what)
					want := of(registers, malo, m.Register.String(), melo.String(), tenant)
					sameReadings(t, want, registerReadings(rs), what)
					differs = differs || firstDifference(want, of(currentRegisters, malo, m.Register.String(), melo.String(), tenant)) >= 0
					compared++
				}
			}
			require.Positive(t, compared)
			if tc.tenant == "" {
				require.True(t, differs, "the view's ceiling changes some answer, so a read ignoring it fails")
			} else {
				f.otherTenantInvisible(t, tc.series, tc.tenant)
			}
			f.refusals(t, tc.series, tc.readings, tc.tenant != "")
		})
	}
}

// otherTenantInvisible checks a view scoped to tenant reads nothing of the
// other tenant of a shared MaLo, which the store holds.
func (f *derivedFixture) otherTenantInvisible(t *testing.T, scoped typedReads, tenant string) {
	t.Helper()
	for _, m := range f.batch.Meters {
		if m.Tenant == tenant {
			continue
		}
		q := func(v typedReads) *store.SeriesQuery {
			return v.Series(m.MaloID.String()).Obis(m.Channels[0].String()).ColumnEq("tenant", m.Tenant)
		}
		ivs, err := q(f.e.st).Intervals(f.e.ctx)
		require.NoError(t, err)
		require.NotEmpty(t, ivs)
		ivs, err = q(scoped).Intervals(f.e.ctx)
		require.NoError(t, err)
		require.Empty(t, ivs, "%s of %s is outside the scope", m.MaloID, m.Tenant)
	}
}

// refusals checks a view refuses what the store refuses: a read spanning two
// channels, or two readings (two tenants of a shared MaLo, two meters under
// one MaLo) — except two tenants where the view is scoped to one.
func (f *derivedFixture) refusals(t *testing.T, series, readings typedReads, scoped bool) {
	t.Helper()
	ctx := f.e.ctx
	var shared string
	var twoMeLos *testkit.Meter
	for i, m := range f.batch.Meters {
		if m.Shared {
			shared = m.MaloID.String()
		}
		if len(m.MeloIDs) == 2 && !m.Shared && (!scoped || m.Tenant == "tenant01") { // a shared copy has no registers
			twoMeLos = &f.batch.Meters[i]
		}
	}
	require.NotEmpty(t, shared, "the workload shares a MaLo between the two tenants")
	require.NotNil(t, twoMeLos, "the workload splits a MaLo over two meters")
	_, err := series.Series(shared).Collect(ctx)
	require.ErrorIs(t, err, store.ErrAmbiguousSeries)
	require.Contains(t, err.Error(), ".Obis(..)")
	_, err = series.Series(shared).Obis(imp).Collect(ctx)
	if scoped {
		require.NoError(t, err, "one tenant is visible")
	} else {
		require.ErrorIs(t, err, store.ErrAmbiguousSeries)
		require.Contains(t, err.Error(), `.ColumnEq("tenant", ..)`)
	}
	_, err = series.Series(shared).ColumnEq("bilanzkreis", "x").Collect(ctx)
	require.ErrorIs(t, err, store.ErrNotMergeKey)
	_, err = series.ReadingsIn(f.intervals.Config().Name(), shared).Collect(ctx)
	require.ErrorIs(t, err, store.ErrWrongTimeModel)
	_, err = readings.Readings(twoMeLos.MaloID.String()).Obis(twoMeLos.Register.String()).ColumnEq("tenant", twoMeLos.Tenant).Collect(ctx)
	require.ErrorIs(t, err, store.ErrAmbiguousSeries)
	require.Contains(t, err.Error(), ".Melo(..)")
}

// Two winners for one reading (two network operators, written with integrity
// constraints off) are refused through every derived view as on the store.
func TestDerivedViewsRefuseTwoWinners(t *testing.T) {
	cfg := intervalTable(t, func(s *meterstore.TableSpec) { s.DisableIntegrityConstraints = true })
	e := open(t, nil, cfg)
	tbl, _ := e.st.Table("readings_versions")
	for i, op := range []string{op1, op2} {
		rows, err := cfg.Encode(mk(t, dl{from: day0, value: "1", op: op, version: 20260301000001 + uint64(i)}))
		require.NoError(t, err)
		_, err = tbl.Hot().Write(e.ctx, rows)
		require.NoError(t, err)
	}
	e.archiveThrough(t, tbl, day0.Add(24*time.Hour))
	scoped, err := e.st.Scoped("malo_id", maloA)
	require.NoError(t, err)
	for name, v := range map[string]typedReads{
		"store":     e.st,
		"AsOf":      e.st.AsOf(tbl.Cold().CurrentSnapshotID(), nil),
		"AsKnownAt": e.st.AsKnownAt(day0.Add(30 * 24 * time.Hour)),
		"Scoped":    scoped,
	} {
		_, err := v.Series(maloA).Obis(imp).Collect(e.ctx)
		require.ErrorIs(t, err, store.ErrInvariantViolated, name)
		_, err = v.Series(maloA).Obis(imp).Latest(e.ctx)
		require.ErrorIs(t, err, store.ErrInvariantViolated, name)
	}
}

// typedReads is what the store and every view derived from it offer alike.
type typedReads interface {
	Series(malo string) *store.SeriesQuery
	Readings(malo string) *store.ReadingsQuery
	SeriesIn(table, malo string) *store.SeriesQuery
	ReadingsIn(table, malo string) *store.ReadingsQuery
}
