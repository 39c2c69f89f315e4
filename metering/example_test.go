package metering_test

import (
	"fmt"
	"time"

	"github.com/meterstore/meterstore/metering"
)

// Example parses a delivery's identifiers, finds the gas day and
// Bilanzierungsmonat of an interval at 05:00 local on 1 March, and derives
// the version scope from the interval — not from the delivery date.
func Example() {
	malo, err := metering.ParseMaloID(" 41373559241 ")
	if err != nil {
		panic(err)
	}
	obis, _ := metering.ParseObis("1-0:1.8.0*255")
	op, _ := metering.ParseBdewCode("9910125000002")

	from := time.Date(2026, 3, 1, 4, 0, 0, 0, time.UTC) // 05:00 CET
	fmt.Println(malo, obis, obis.Direction())
	fmt.Println("gas day:", metering.GasDay(from))
	fmt.Println("scope gas:", metering.ScopeFor(op, from, metering.SparteGas))
	fmt.Println("scope strom:", metering.ScopeFor(op, from, metering.SparteStrom))

	n, _ := metering.ExpectedIntervals(metering.Date{Year: 2026, Month: time.October, Day: 24}, metering.ResolutionPT15M, metering.SparteGas)
	fmt.Println("gas quarter hours on Sat 24 Oct 2026:", n)

	_, err = metering.ParseMaloID("41373559214")
	fmt.Println(err)
	_, err = metering.ParseSparte("Wärme")
	fmt.Println(err)
	// Output:
	// 41373559241 1-0:1.8.0 IMPORT
	// gas day: 2026-02-28
	// scope gas: 9910125000002:2026-02
	// scope strom: 9910125000002:2026-03
	// gas quarter hours on Sat 24 Oct 2026: 100
	// malo-id "41373559214": check digit (BDEW Lok/Waggon procedure) is 7, not 4; a digit was changed or transposed; take the ID from the master data, not from a retyped copy
	// sparte "Wärme" is not canonical: store "WAERME"
}
