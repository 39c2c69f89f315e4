package meterstore

import (
	"fmt"

	"github.com/meterstore/meterstore/metering"
)

// ErrUnitPair: a row carries a unit its Sparte cannot have — electricity in
// m³, water in kWh. Both are units, so a unit list alone lets them through,
// and every sum over the Sparte would add them to values in its own unit. The
// hot tier's unit_of_sparte CHECK and every cold write path refuse the pair with
// errors wrapping it; it is metering.ErrUnitNotAllowed, which the row
// validator's refusal wraps too.
var ErrUnitPair = metering.ErrUnitNotAllowed

// UnitPair is a (sparte, unit) pair in their stored spellings.
type UnitPair struct{ Sparte, Unit string }

func (p UnitPair) String() string { return p.Sparte + "/" + p.Unit }

// UnitPairs lists every pair metering allows (Sparte.AllowsUnit: the measured
// and the billing unit), Sparten and units in canonical order.
func UnitPairs() []UnitPair {
	var out []UnitPair
	for _, s := range metering.Sparten() {
		for _, u := range metering.Units() {
			if s.AllowsUnit(u) == nil {
				out = append(out, UnitPair{s.String(), u.String()})
			}
		}
	}
	return out
}

// CheckUnitPair refuses a stored pair metering does not allow, naming the
// sparte, the unit and the units the sparte takes (wrapping ErrUnitPair, or
// metering's code error for a spelling that is no Sparte or unit at all).
func CheckUnitPair(sparte, unit string) error {
	s, err := metering.ParseSparte(sparte)
	if err != nil {
		return fmt.Errorf("sparte %q: %w", sparte, err)
	}
	u, err := metering.ParseUnit(unit)
	if err != nil {
		return fmt.Errorf("unit %q: %w", unit, err)
	}
	return s.AllowsUnit(u)
}
