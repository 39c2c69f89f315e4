package store_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

// exampleTB lets the Example borrow the throwaway PostgreSQL the tests use.
type exampleTB struct {
	testing.TB
	cleanups []func()
}

func (e *exampleTB) Helper()                           {}
func (e *exampleTB) Cleanup(f func())                  { e.cleanups = append(e.cleanups, f) }
func (e *exampleTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// Example appends a day of 15-minute values, archives it, appends a late
// correction (routed to Iceberg), and reads the meter back as a domain type.
func Example() {
	ctx := context.Background()
	tb := &exampleTB{}
	defer func() {
		for i := len(tb.cleanups) - 1; i >= 0; i-- {
			tb.cleanups[i]()
		}
	}()
	dsn := pgtest.Database(tb)
	pool, err := pgxpool.New(ctx, dsn)
	must(err)
	defer pool.Close()
	dir, err := os.MkdirTemp("", "meterstore-example")
	must(err)
	defer os.RemoveAll(dir)
	cat, err := catalog.Open(ctx, catalog.Options{DSN: dsn, Warehouse: "file://" + dir, Pool: pool})
	must(err)
	defer cat.Close()

	cfg := meterstore.TableSpec{Name: "readings_versions"}.MustBuild()
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	st, err := store.Open(ctx, store.Config{Pool: pool, Catalog: cat, Tables: []meterstore.TableConfig{cfg},
		Now: func() time.Time { return day.Add(30 * time.Hour) }}) // the store's clock: the deliveries below arrive then
	must(err)
	defer st.Close()

	malo, _ := metering.ParseMaloID("41373559241")
	obis, _ := metering.ParseObis("1-0:1.29.0")
	op, _ := metering.ParseBdewCode("9910125000002")
	src, _ := metering.SourceMscons(op, "MSCONS-4711")
	delivery := func(version uint64, value string, quality metering.Quality, hours int) meterstore.StoredSeries {
		v, _ := metering.NewVersion(version)
		d := metering.Delivery{MaloID: malo, Obis: obis, Sparte: metering.SparteStrom, Unit: metering.UnitKWh,
			Source: src, Scope: metering.ScopeFor(op, day, metering.SparteStrom), Version: v, RecordedAt: day.Add(30 * time.Hour)}
		for i := 0; i < hours*4; i++ {
			from := day.Add(time.Duration(i) * 15 * time.Minute)
			d.Intervals = append(d.Intervals, metering.Interval{From: from, To: from.Add(15 * time.Minute),
				Value: decimal.RequireFromString(value), Quality: quality})
		}
		return meterstore.StoredSeries{Delivery: d}
	}

	out, err := st.Append(ctx, delivery(20260303000001, "0.25", metering.QualityMeasured, 24))
	must(err)
	fmt.Println("hot rows:", out.HotRows, "late corrections:", out.HadLateCorrections())

	tbl, _ := st.Table("readings_versions")
	_, err = tbl.Archive(ctx, day.Add(24*time.Hour).Add(cfg.SettlementLag()), 0)
	must(err)

	out, err = st.Append(ctx, delivery(20260305000001, "0.5", metering.QualitySubstituted, 1))
	must(err)
	fmt.Println("cold rows:", out.ColdRows, "late corrections:", out.HadLateCorrections(), "first effect:", out.Displacements[0].Effect)

	series, err := st.Series("41373559241").Obis("1-0:1.29.0*255").Range(day, day.Add(24*time.Hour)).Collect(ctx)
	must(err)
	sum := decimal.Zero
	for _, iv := range series.Intervals {
		sum = sum.Add(iv.Value)
	}
	fmt.Println("intervals:", len(series.Intervals), "sum:", sum.StringFixed(2), series.Unit)
	latest, err := st.Series("41373559241").QualityIn(metering.QualitySubstituted).Latest(ctx)
	must(err)
	fmt.Println("last substitute at:", latest.From.Format(time.RFC3339))
	// Output:
	// hot rows: 96 late corrections: false
	// cold rows: 4 late corrections: true first effect: Superseded
	// intervals: 96 sum: 25.00 KWH
	// last substitute at: 2026-03-02T00:45:00Z
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
