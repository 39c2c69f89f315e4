package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/internal/testhooks"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/settings"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	op1   = "9910125000002"
	op2   = "9904768000008"
	maloA = "41373559241"
	maloB = "51238696781"
	meloA = "DE0001234567890ABCDEFGHIJKLMNOPQR"
	meloB = "DE0001234567890ABCDEFGHIJKLMNOPQS"
	imp   = "1-0:1.29.0"
	exp   = "1-0:2.29.0"
)

// day0 is the first day the hand-written deliveries use (partitions are UTC days).
var day0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

type env struct {
	ctx  context.Context
	pool *pgxpool.Pool
	cat  *catalog.Catalog
	st   *store.Store
	dsn  string
	wh   string // warehouse location
	cfg  store.Config
}

// open starts a store over cfgs on a fresh database and a temp warehouse.
func open(t testing.TB, tune func(*setup), cfgs ...meterstore.TableConfig) *env {
	t.Helper()
	wh, s3 := s3test.Local(t)
	return openOn(t, wh, s3, tune, cfgs...)
}

// setup is what a test tunes before the store opens: its configuration and
// the test hooks store.Open takes from its context.
type setup struct {
	store.Config
	hooks testhooks.Hooks
}

// openOn starts a store over cfgs on a fresh database and the warehouse wh.
func openOn(t testing.TB, wh string, s3 settings.S3Settings, tune func(*setup), cfgs ...meterstore.TableConfig) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{ctx: ctx, dsn: pgtest.Database(t), wh: wh}
	pool, err := pgxpool.New(ctx, e.dsn)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	e.pool = pool
	e.cat, err = catalog.Open(ctx, catalog.Options{DSN: e.dsn, Warehouse: wh, S3: s3, Pool: pool})
	require.NoError(t, err)
	t.Cleanup(func() { e.cat.Close() })
	// The clock stays at day0 while the deliveries (mk) carry their own
	// recorded_at days later: the future check is off unless a test turns it on.
	set := setup{Config: store.Config{Pool: pool, Catalog: e.cat, Tables: cfgs, Now: func() time.Time { return day0 }, RecordedAtSkew: -1}}
	if tune != nil {
		tune(&set)
	}
	e.cfg = set.Config
	e.st, err = store.Open(testhooks.With(ctx, set.hooks), e.cfg)
	require.NoError(t, err)
	t.Cleanup(func() { e.st.Close() })
	return e
}

func intervalTable(t testing.TB, mod func(*meterstore.TableSpec)) meterstore.TableConfig {
	spec := meterstore.TableSpec{Name: "readings_versions"}
	if mod != nil {
		mod(&spec)
	}
	cfg, err := spec.Build()
	require.NoError(t, err)
	return cfg
}

type dl struct {
	malo, melo, obis, op string
	from                 time.Time
	n                    int // 15-minute intervals
	value                string
	step                 string // added per interval
	quality              metering.Quality
	version              uint64
	extra                map[string]string
	readings             bool
}

// mk builds one delivery of n 15-minute intervals (or n readings) from d.from.
func mk(t testing.TB, d dl) meterstore.StoredSeries {
	t.Helper()
	if d.malo == "" {
		d.malo = maloA
	}
	if d.obis == "" {
		d.obis = imp
	}
	if d.op == "" {
		d.op = op1
	}
	if d.n == 0 {
		d.n = 4
	}
	if d.quality == 0 {
		d.quality = metering.QualityMeasured
	}
	if d.version == 0 {
		d.version = 20260301000001
	}
	if d.step == "" {
		d.step = "0"
	}
	malo, err := metering.ParseMaloID(d.malo)
	require.NoError(t, err)
	obis, err := metering.ParseObis(d.obis)
	require.NoError(t, err)
	op, err := metering.ParseBdewCode(d.op)
	require.NoError(t, err)
	src, err := metering.SourceMscons(op, "MSCONS-1")
	require.NoError(t, err)
	v, err := metering.NewVersion(d.version)
	require.NoError(t, err)
	del := metering.Delivery{MaloID: malo, Obis: obis, Sparte: metering.SparteStrom, Unit: metering.UnitKWh,
		Source: src, Scope: metering.ScopeFor(op, d.from, metering.SparteStrom), Version: v,
		RecordedAt: d.from.Add(48 * time.Hour).Add(time.Duration(d.version%1000) * time.Second)}
	if d.melo != "" {
		del.MeloID, err = metering.ParseMeloID(d.melo)
		require.NoError(t, err)
	}
	val := decimal.RequireFromString(d.value)
	step := decimal.RequireFromString(d.step)
	for i := 0; i < d.n; i++ {
		from := d.from.Add(time.Duration(i) * 15 * time.Minute)
		x := val.Add(step.Mul(decimal.NewFromInt(int64(i))))
		if d.readings {
			del.Readings = append(del.Readings, metering.Reading{At: from, Value: x, Quality: d.quality})
		} else {
			del.Intervals = append(del.Intervals, metering.Interval{From: from, To: from.Add(15 * time.Minute), Value: x, Quality: d.quality})
		}
	}
	return meterstore.StoredSeries{Delivery: del, Extra: d.extra}
}

// archiveThrough archives every window ending at or before end.
func (e *env) archiveThrough(t testing.TB, tbl *store.Table, end time.Time) {
	t.Helper()
	_, err := tbl.Archive(e.ctx, end.Add(tbl.Config().SettlementLag()), 0)
	require.NoError(t, err)
	w, err := tbl.Watermark(e.ctx)
	require.NoError(t, err)
	require.True(t, w.Equal(end), "watermark %s, want %s", w, end)
}

func (e *env) healthy(t testing.TB, tbl *store.Table) {
	t.Helper()
	r, err := tbl.VerifyInvariant(e.ctx)
	require.NoError(t, err)
	require.True(t, r.Healthy, r.String())
	require.Empty(t, r.Detached)
}

// scalar runs a one-value query.
func (e *env) scalar(t testing.TB, q string, args ...any) any {
	t.Helper()
	res, err := e.st.Query(e.ctx, q, args...)
	require.NoError(t, err)
	require.Len(t, res.Rows, 1)
	return res.Rows[0][0]
}

func dec(t testing.TB, v any) decimal.Decimal {
	t.Helper()
	if v == nil {
		return decimal.Zero
	}
	d, ok := v.(decimal.Decimal)
	require.True(t, ok, "%T", v)
	return d
}

func effects(o store.AppendOutcome) map[meterstore.Effect]int {
	m := map[meterstore.Effect]int{}
	for _, d := range o.Displacements {
		m[d.Effect]++
	}
	return m
}
