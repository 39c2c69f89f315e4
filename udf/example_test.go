package udf_test

import (
	"context"
	"fmt"
	"time"

	"github.com/meterstore/meterstore/udf"
)

func Example() {
	db, err := udf.Open("") // in-memory; every pooled connection has the functions
	if err != nil {
		panic(err)
	}
	defer db.Close()

	// 03:00 UTC on the spring DST Sunday: the calendar day for electricity,
	// still the Saturday's Gastag for gas — the 23-hour gas day.
	var strom, gas time.Time
	var n int
	err = db.QueryRowContext(context.Background(), `
		SELECT meter_balancing_day(ts, 'STROM'), meter_balancing_day(ts, 'GAS'),
		       meter_expected_intervals(meter_balancing_day(ts, 'GAS'), 'PT15M', 'GAS')
		FROM (SELECT TIMESTAMPTZ '2026-03-29 03:00:00+00' AS ts)`).Scan(&strom, &gas, &n)
	if err != nil {
		panic(err)
	}
	fmt.Println(strom.Format(time.DateOnly), gas.Format(time.DateOnly), n)
	// Output: 2026-03-29 2026-03-28 92
}
