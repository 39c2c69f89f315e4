package testkit_test

import (
	"fmt"
	"time"

	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/testkit"
)

// Example generates a week of electricity spanning the autumn DST change,
// folds it into the oracle and asks what a store holding the same deliveries
// must answer. A deployment runs the same against its own table declaration
// and compares with its store.
func Example() {
	w := testkit.NewWorkload(0x5EED) // the seed alone replays this
	w.MaLos, w.Mix = 4, testkit.StromOnly
	w.CorrectionRate, w.RedeliveryRate = 0.05, 0.05

	batch, err := w.Generate()
	if err != nil {
		panic(err)
	}
	cfg := w.IntervalTable("readings_versions").MustBuild()
	oracle := testkit.NewOracle(cfg)
	rec, err := oracle.RecordDeliveries(batch.Deliveries...) // the order a store ingests them
	if err != nil {
		panic(err)
	}
	all := time.Time{} // zero bounds are open

	fmt.Println("days:", batch.Days[0], "to", batch.Days[len(batch.Days)-1])
	fmt.Println("resolved rows:", oracle.RowCount(all, all)) // 4 MaLo × 2 channels × (6×96 + 100)
	fmt.Println("redelivered rows skipped:", rec.Duplicate > 0)
	fmt.Println("naive sum overstates:", oracle.NaiveSum(all, all).GreaterThan(oracle.Sum(all, all)))

	sunday := metering.Date{Year: 2025, Month: time.October, Day: 26}
	c := oracle.Completeness(sunday, sunday.AddDays(1))[0]
	fmt.Println("26 Oct:", c.Resolution, "expected", c.Expected, "actual", c.Actual, "complete", c.Complete)
	// Output:
	// days: 2025-10-23 to 2025-10-29
	// resolved rows: 5408
	// redelivered rows skipped: true
	// naive sum overstates: true
	// 26 Oct: PT15M expected 100 actual 100 complete true
}
