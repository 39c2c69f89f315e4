package hot_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/metering"
)

var day10 = time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)

func quarterHours(malo, obis string, from time.Time, n int, version uint64) []meterstore.Row {
	rows := make([]meterstore.Row, n)
	for i := range rows {
		rows[i] = qh(malo, obis, from.Add(time.Duration(i)*15*time.Minute), fmt.Sprintf("0.%03d", i%1000+1), version)
	}
	return rows
}

// A delivery carrying one hour and the four quarter-hours inside it would leave
// five rows where four belong.
func TestFiveRowsForFourRefused(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	const v = 20260310000001

	t.Run("hour and quarter-hours in one batch", func(t *testing.T) {
		rows := append(quarterHours(maloA, obisImport, day10, 4, v), iv(maloA, obisImport, day10, time.Hour, "1", v))
		_, err := st.Write(ctx, rows)
		require.ErrorIs(t, err, hot.ErrIntegrity)
		require.Equal(t, int64(0), count(t, st), "nothing written")
	})
	t.Run("hour after the quarter-hours", func(t *testing.T) {
		// Quarter-hours 00:15–01:15; the hour 00:00–01:00 differs in "from" from all of them.
		_, err := st.Write(ctx, quarterHours(maloB, obisImport, day10.Add(15*time.Minute), 4, v))
		require.NoError(t, err)
		_, err = st.Write(ctx, []meterstore.Row{iv(maloB, obisImport, day10, time.Hour, "1", v)})
		var oe *hot.OverlapError
		require.ErrorAs(t, err, &oe)
		require.ErrorIs(t, err, hot.ErrOverlap)
		require.True(t, hot.IsExclusionViolation(err))
		require.Contains(t, oe.Constraint, "_no_overlap")
		require.Equal(t, int64(4), count(t, st))
	})
	t.Run("hour and quarter-hours in one batch, hour not sharing a start", func(t *testing.T) {
		rows := append(quarterHours(maloC, obisImport, day10.Add(15*time.Minute), 4, v), iv(maloC, obisImport, day10, time.Hour, "1", v))
		_, err := st.Write(ctx, rows)
		require.ErrorIs(t, err, hot.ErrOverlap)
		require.Equal(t, int64(4), count(t, st), "nothing of the batch written")
	})
	t.Run("a higher version may overlap", func(t *testing.T) {
		ds, err := st.Write(ctx, []meterstore.Row{iv(maloB, obisImport, day10, time.Hour, "1", v+1)})
		require.NoError(t, err)
		require.Equal(t, meterstore.Inserted, ds[0].Effect)
	})
}

func TestSecondOperatorRefused(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	_, err := st.Write(ctx, []meterstore.Row{qh(maloA, obisImport, day10, "1", 20260310000001)})
	require.NoError(t, err)

	r := qh(maloA, obisImport, day10, "1.1", 20260311000001)
	r.VersionScope = op2 + ":2026-03"
	_, err = st.Write(ctx, []meterstore.Row{r})
	var so *hot.SecondOperatorError
	require.ErrorAs(t, err, &so)
	require.ErrorIs(t, err, hot.ErrSecondOperator)
	require.True(t, hot.IsExclusionViolation(err))
	require.Equal(t, int64(1), count(t, st))

	// The same operator at a higher version is the ordinary correction.
	ds, err := st.Write(ctx, []meterstore.Row{qh(maloA, obisImport, day10, "1.1", 20260311000001)})
	require.NoError(t, err)
	require.Equal(t, meterstore.Superseded, ds[0].Effect)
}

func TestTwoTenantsSameMaloAreTwoReadings(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions", Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}}})
	require.Equal(t, []string{"malo_id", "obis_code", "from", "tenant", "version"}, st.Config().PrimaryKey())
	a := qh(maloA, obisImport, day10, "1", 20260310000001)
	a.Extra = []*string{ptr("tenant-a")}
	b := qh(maloA, obisImport, day10, "2", 20260310000001)
	b.Extra = []*string{ptr("tenant-b")}
	ds, err := st.Write(ctx, []meterstore.Row{a, b})
	require.NoError(t, err)
	require.Equal(t, meterstore.Inserted, ds[0].Effect)
	require.Equal(t, meterstore.Inserted, ds[1].Effect)
	require.Equal(t, int64(2), count(t, st))

	// The overlap rule is tenant-scoped: tenant b's hour does not collide with tenant a's quarter-hour.
	h := iv(maloA, obisImport, day10.Add(-15*time.Minute+24*time.Hour), time.Hour, "4", 20260311000001)
	h.Extra = []*string{ptr("tenant-b")}
	q := qh(maloA, obisImport, day10.Add(24*time.Hour), "1", 20260311000001)
	q.Extra = []*string{ptr("tenant-a")}
	_, err = st.Write(ctx, []meterstore.Row{q, h})
	require.NoError(t, err)

	// A correction for tenant a supersedes tenant a's reading only.
	c := qh(maloA, obisImport, day10, "1.5", 20260310000002)
	c.Extra = []*string{ptr("tenant-a")}
	ds, err = st.Write(ctx, []meterstore.Row{c})
	require.NoError(t, err)
	require.Equal(t, meterstore.Superseded, ds[0].Effect)
	require.Equal(t, "tenant-a", *ds[0].Superseded.Extra[0])
	require.True(t, ds[0].Superseded.Value.Equal(decimal.RequireFromString("1")))
}

func TestPointTableTwoMelosKeepsBoth(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "meter_reads_versions", TimeModel: meterstore.Point})
	require.True(t, st.Config().IdentifyByMelo())
	mk := func(melo string) meterstore.Row {
		return meterstore.Row{MaloID: maloA, MeloID: ptr(melo), ObisCode: "1-0:1.8.0", Sparte: "STROM", From: day10,
			Value: decimal.Zero, Unit: "KWH", Quality: "MEASURED", SourceKind: "SMGW", Version: 20260310000001,
			VersionScope: scopeMar, RecordedAt: testNow}
	}
	// Two freshly installed meters agree at zero: keyed on the MaLo alone one would be dropped.
	ds, err := st.Write(ctx, []meterstore.Row{mk(meloA), mk(meloB)})
	require.NoError(t, err)
	require.Equal(t, meterstore.Inserted, ds[0].Effect)
	require.Equal(t, meterstore.Inserted, ds[1].Effect)
	require.Equal(t, int64(2), count(t, st))

	r := mk(meloA)
	r.MeloID = nil
	_, err = st.Write(ctx, []meterstore.Row{r})
	require.ErrorIs(t, err, hot.ErrInvalidRow)
	r = mk(meloA)
	to := day10.Add(time.Hour)
	r.To = &to
	_, err = st.Write(ctx, []meterstore.Row{r})
	require.ErrorIs(t, err, hot.ErrInvalidRow)
}

func TestConcurrentWritersCreateTheSamePartition(t *testing.T) {
	ctx := context.Background()
	st, pool := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	newDay := time.Date(2026, 3, 28, 0, 0, 0, 0, time.UTC) // beyond the headroom
	before, err := st.Partitions(ctx)
	require.NoError(t, err)

	malos := []string{maloA, maloB, maloC, maloD}
	obis := []string{obisImport, obisExport}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			w := hot.New(pool, st.Config()) // its own partition cache, like another process
			rows := quarterHours(malos[g%4], obis[(g/4)%2], newDay, 96, 20260328000001+uint64(g/8))
			if g/8 == 1 { // the second eight write a higher version of the same readings
				for i := range rows {
					rows[i].Value = rows[i].Value.Add(decimal.NewFromInt(1))
				}
			}
			_, err := w.Write(ctx, rows)
			errs <- err
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	after, err := st.Partitions(ctx)
	require.NoError(t, err)
	require.Len(t, after, len(before)+1)
	require.Equal(t, int64(16*96), count(t, st))

	// And EnsurePartitions itself, many callers at once, a week ahead.
	var wg2 sync.WaitGroup
	errs2 := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			errs2 <- hot.New(pool, st.Config()).EnsurePartitions(ctx, newDay.Add(24*time.Hour), newDay.Add(8*24*time.Hour))
		}()
	}
	wg2.Wait()
	close(errs2)
	for err := range errs2 {
		require.NoError(t, err)
	}
	final, err := st.Partitions(ctx)
	require.NoError(t, err)
	require.Len(t, final, len(after)+7)
}

func TestRedeliveryOf10000RowsChangesNothing(t *testing.T) {
	ctx := context.Background()
	st, pool := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	var rows []meterstore.Row
	for _, m := range []string{maloA, maloB, maloC, maloD} {
		for _, o := range []string{obisImport, obisExport} {
			rows = append(rows, quarterHours(m, o, day10, 1250, 20260310000001)...)
		}
	}
	require.Len(t, rows, 10_000)
	ds, err := st.Write(ctx, rows)
	require.NoError(t, err)
	for _, d := range ds {
		require.Equal(t, meterstore.Inserted, d.Effect)
	}
	fingerprint := func() string {
		var s string
		require.NoError(t, pool.QueryRow(ctx, `SELECT md5(string_agg(xmin::text || ctid::text || t::text, ',' ORDER BY malo_id, obis_code, "from"))
			FROM readings_versions t`).Scan(&s))
		return s
	}
	before := fingerprint()

	ds, err = st.Write(ctx, rows)
	require.NoError(t, err)
	require.Len(t, ds, 10_000)
	dups := 0
	for _, d := range ds {
		if d.Effect == meterstore.Duplicate {
			dups++
		}
	}
	require.Equal(t, 10_000, dups)
	require.Equal(t, int64(10_000), count(t, st))
	require.Equal(t, before, fingerprint(), "no tuple written, updated or moved")
}

func TestDisplacements(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	w := func(r meterstore.Row) meterstore.Displacement {
		t.Helper()
		ds, err := st.Write(ctx, []meterstore.Row{r})
		require.NoError(t, err)
		require.Len(t, ds, 1)
		return ds[0]
	}
	d := w(qh(maloA, obisImport, day10, "1", 20260310000002))
	require.Equal(t, meterstore.Inserted, d.Effect)
	require.Nil(t, d.Superseded)

	d = w(qh(maloA, obisImport, day10, "2", 20260310000003))
	require.Equal(t, meterstore.Superseded, d.Effect)
	require.NotNil(t, d.Superseded)
	require.Equal(t, uint64(20260310000002), d.Superseded.Version)
	require.True(t, d.Superseded.Value.Equal(decimal.RequireFromString("1")))
	require.True(t, d.Effect.ChangedCurrentValue())

	d = w(qh(maloA, obisImport, day10, "0.5", 20260310000001))
	require.Equal(t, meterstore.Shadowed, d.Effect, "a backfill below the current version")
	require.False(t, d.Effect.ChangedCurrentValue())

	d = w(qh(maloA, obisImport, day10, "2", 20260310000003))
	require.Equal(t, meterstore.Duplicate, d.Effect)

	// Quality travels with the value: a SUBSTITUTED replaced by MEASURED at the same number is a change.
	sub := qh(maloA, obisImport, day10.Add(15*time.Minute), "3", 20260310000001)
	sub.Quality = "SUBSTITUTED"
	require.Equal(t, meterstore.Inserted, w(sub).Effect)
	meas := qh(maloA, obisImport, day10.Add(15*time.Minute), "3", 20260310000002)
	d = w(meas)
	require.Equal(t, meterstore.Superseded, d.Effect)
	require.Equal(t, "SUBSTITUTED", d.Superseded.Quality)

	// Within one batch rows are applied in order.
	ds, err := st.Write(ctx, []meterstore.Row{
		qh(maloA, obisImport, day10, "5", 20260310000005),
		qh(maloA, obisImport, day10, "4", 20260310000004),
		qh(maloA, obisImport, day10, "5", 20260310000005),
	})
	require.NoError(t, err)
	require.Equal(t, meterstore.Superseded, ds[0].Effect)
	require.Equal(t, uint64(20260310000003), ds[0].Superseded.Version)
	require.Equal(t, meterstore.Shadowed, ds[1].Effect)
	require.Equal(t, meterstore.Duplicate, ds[2].Effect)
	require.Equal(t, int64(7), count(t, st))
}

func TestConflictingRestatementRefused(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	const v = 20260310000001
	_, err := st.Write(ctx, []meterstore.Row{qh(maloA, obisImport, day10, "1", v)})
	require.NoError(t, err)

	other := qh(maloB, obisImport, day10, "7", v)
	_, err = st.Write(ctx, []meterstore.Row{other, qh(maloA, obisImport, day10, "1.000001", v)})
	var re *hot.RestatementError
	require.ErrorAs(t, err, &re)
	require.ErrorIs(t, err, hot.ErrRestatement)
	require.Equal(t, uint64(v), re.Offered.Version)
	require.Equal(t, maloA, re.Offered.MaloID)
	require.Equal(t, []string{"value"}, re.Fields)
	require.Contains(t, err.Error(), fmt.Sprint(v))
	require.Equal(t, int64(1), count(t, st), "nothing of the batch written")

	// A second Messlokation under an existing reading names identify_by_melo.
	m := qh(maloA, obisImport, day10, "1", v)
	m.MeloID = ptr(meloA)
	_, err = st.Write(ctx, []meterstore.Row{m})
	require.ErrorAs(t, err, &re)
	require.Equal(t, []string{"melo_id"}, re.Fields)
	require.Contains(t, re.Hint, "identify_by_melo")

	// A conflicting pair inside one batch is refused too.
	_, err = st.Write(ctx, []meterstore.Row{qh(maloC, obisImport, day10, "1", v), qh(maloC, obisImport, day10, "2", v)})
	require.ErrorIs(t, err, hot.ErrRestatement)
	require.Equal(t, int64(1), count(t, st))
}

func TestWriteValidatesRows(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	cases := map[string]func(r *meterstore.Row){
		"malo check digit":       func(r *meterstore.Row) { r.MaloID = "41373559242" },
		"obis not canonical":     func(r *meterstore.Row) { r.ObisCode = "1-0:1.29.0*255" },
		"sparte alias":           func(r *meterstore.Row) { r.Sparte = "ELECTRICITY" },
		"water in kWh":           func(r *meterstore.Row) { r.Sparte = "WASSER" },
		"quality lower case":     func(r *meterstore.Row) { r.Quality = "measured" },
		"resolution seconds":     func(r *meterstore.Row) { r.Resolution = ptr("PT900S") },
		"scope of another month": func(r *meterstore.Row) { r.VersionScope = op1 + ":2026-02" },
		"operator check digit":   func(r *meterstore.Row) { r.VersionScope = "9900357000004:2026-03" },
		"no version":             func(r *meterstore.Row) { r.Version = 0 },
		"no to":                  func(r *meterstore.Row) { r.To = nil },
		"melo lower case":        func(r *meterstore.Row) { r.MeloID = ptr("de0001234567890abcdefghijklmnopqr") },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			r := qh(maloA, obisImport, day10, "1", 20260310000001)
			f(&r)
			_, err := st.Write(ctx, []meterstore.Row{r})
			require.ErrorIs(t, err, hot.ErrInvalidRow)
		})
	}
	var ce *metering.CodeError
	r := qh(maloA, obisImport, day10, "1", 20260310000001)
	r.Unit = "kWh"
	_, err := st.Write(ctx, []meterstore.Row{r})
	require.True(t, errors.As(err, &ce), "the metering error stays reachable: %v", err)
	require.Equal(t, int64(0), count(t, st))

	// balancing_day is derived, never taken from the caller: gas at 05:00 local on
	// 11 March belongs to the Gastag of 10 March.
	g := qh(maloA, obisImport, time.Date(2026, 3, 11, 4, 0, 0, 0, time.UTC), "1", 20260310000001)
	g.Sparte, g.BalancingDay = "GAS", time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	ds, err := st.Write(ctx, []meterstore.Row{g})
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), ds[0].Row.BalancingDay)
	var stored time.Time
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT balancing_day FROM readings_versions`).Scan(&stored))
	require.Equal(t, "2026-03-10", stored.Format("2006-01-02"))
}

func TestWriteThroughEncode(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	malo, err := metering.ParseMaloID(maloA)
	require.NoError(t, err)
	obis, err := metering.ParseObis(obisImport)
	require.NoError(t, err)
	op, err := metering.ParseBdewCode(op1)
	require.NoError(t, err)
	src, err := metering.SourceMscons(op, "MSG-1")
	require.NoError(t, err)
	version, err := metering.NewVersion(20260310000001)
	require.NoError(t, err)
	var ivs []metering.Interval
	for i := 0; i < 96; i++ {
		from := day10.Add(-time.Hour + time.Duration(i)*15*time.Minute) // a Berlin day
		x, err := metering.NewInterval(from, from.Add(15*time.Minute), decimal.RequireFromString("0.25"), metering.QualityMeasured)
		require.NoError(t, err)
		ivs = append(ivs, x)
	}
	rows, err := st.Config().Encode(meterstore.StoredSeries{Delivery: metering.Delivery{
		MaloID: malo, Obis: obis, Sparte: metering.SparteStrom, Unit: metering.UnitKWh, Resolution: metering.ResolutionPT15M,
		Intervals: ivs, Source: src, Scope: metering.ScopeFor(op, day10, metering.SparteStrom), Version: version, RecordedAt: testNow,
	}})
	require.NoError(t, err)
	ds, err := st.Write(ctx, rows)
	require.NoError(t, err)
	require.Len(t, ds, 96)
	require.Equal(t, int64(96), count(t, st))
}

// The prior state is read by span of "from" per reading: stored rows inside the
// span that the batch does not name are neither reported nor confused with
// the rows it does name, and Lookup returns the named merge keys only.
func TestSparseCorrectionWithinStoredSpan(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	_, err := st.Write(ctx, quarterHours(maloA, obisImport, day10, 8, 20260310000001))
	require.NoError(t, err)
	_, err = st.Write(ctx, []meterstore.Row{qh(maloA, obisImport, day10.Add(30*time.Minute), "9", 20260310000002)})
	require.NoError(t, err)

	batch := []meterstore.Row{
		qh(maloA, obisImport, day10, "5", 20260310000003),
		qh(maloA, obisImport, day10.Add(30*time.Minute), "9", 20260310000002),
		qh(maloA, obisImport, day10.Add(105*time.Minute), "5", 20260310000003),
	}
	ds, err := st.Write(ctx, batch)
	require.NoError(t, err)
	require.Equal(t, meterstore.Superseded, ds[0].Effect)
	require.Equal(t, day10, ds[0].Superseded.From)
	require.True(t, ds[0].Superseded.Value.Equal(decimal.RequireFromString("0.001")))
	require.Equal(t, meterstore.Duplicate, ds[1].Effect)
	require.Equal(t, meterstore.Superseded, ds[2].Effect)
	require.Equal(t, day10.Add(105*time.Minute), ds[2].Superseded.From)
	require.True(t, ds[2].Superseded.Value.Equal(decimal.RequireFromString("0.008")))
	require.Equal(t, int64(11), count(t, st))

	stored, err := st.Lookup(ctx, batch)
	require.NoError(t, err)
	require.Len(t, stored, 6, "00:00 v1 v3, 00:30 v1 v2, 01:45 v1 v3")
	for _, r := range stored {
		require.Contains(t, []time.Time{day10, day10.Add(30 * time.Minute), day10.Add(105 * time.Minute)}, r.From)
	}
}

// Write encodes its COPY itself: numbers of every shape reach the database as
// the same numbers (rounded to numeric(18,6) by the database, as before).
func TestWriteNumbersRoundTrip(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	values := map[string]string{
		"0": "0", "-0.000001": "-0.000001", "999999999999.999999": "999999999999.999999", "-12345678.9": "-12345678.9",
		"10000": "10000", "0.0001": "0.0001", "1e3": "1000", "0.1234565": "0.123457", "-0.1234565": "-0.123457",
	}
	var rows []meterstore.Row
	want := map[time.Time]string{}
	i := 0
	for in, out := range values {
		r := qh(maloA, obisImport, day10.Add(time.Duration(i)*15*time.Minute), "1", 20260310000001)
		r.Value = decimal.RequireFromString(in)
		rows = append(rows, r)
		want[r.From] = out
		i++
	}
	_, err := st.Write(ctx, rows)
	require.NoError(t, err)
	stored, err := st.Lookup(ctx, rows)
	require.NoError(t, err)
	require.Len(t, stored, len(rows))
	for _, r := range stored {
		require.True(t, r.Value.Equal(decimal.RequireFromString(want[r.From])), "%s: stored %s, want %s", r.From, r.Value, want[r.From])
		require.Equal(t, uint64(20260310000001), r.Version)
	}
}
