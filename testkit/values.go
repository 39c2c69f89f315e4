package testkit

import (
	"math"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore/metering"
)

// The shapes below give values per quarter hour; a 1-minute series gets the
// same curve scaled by 1/15.

func gauss(h, mu, sigma float64) float64 {
	x := (h - mu) / sigma
	return math.Exp(-0.5 * x * x)
}

// localHour is the Berlin wall-clock hour (fractional) of t.
func localHour(t time.Time) float64 {
	l := t.In(metering.Berlin())
	return float64(l.Hour()) + float64(l.Minute())/60 + float64(l.Second())/3600
}

// seasonPhase is sin over the year with its zero crossing at the spring
// equinox: +1 near midsummer, −1 near midwinter.
func seasonPhase(t time.Time) float64 {
	return math.Sin(2 * math.Pi * float64(t.YearDay()-80) / 365.25)
}

// Household load bounds per quarter hour (kWh), from the realistic fixture.
const (
	ImportMinPer15 = 0.02
	ImportMaxPer15 = 0.4
	// ExportMaxPer15 bounds PV feed-in per quarter hour (a 10 kWp roof at full sun).
	ExportMaxPer15 = 2.5
)

// household is the import curve: a base load with peaks near 07:30 and 19:30
// local, a little more in winter, × the meter's scale × row noise, clamped to
// the fixture's 0.02–0.4 kWh per quarter hour.
func household(mid time.Time, scale, noise float64) float64 {
	h := localHour(mid)
	shape := 0.06 + 0.10*gauss(h, 7.5, 1.0) + 0.18*gauss(h, 19.5, 1.6) + 0.03*gauss(h, 12.5, 1.5)
	season := 1 - 0.12*seasonPhase(mid)
	v := shape * season * scale * noise
	return math.Min(math.Max(v, ImportMinPer15), ImportMaxPer15)
}

// pvDaylight returns the half-width (hours) of the PV bell and the solar noon
// in UTC hours for Germany (~10°E, so noon ≈ 11:20 UTC): daylight is ~7.7 h at
// midwinter and ~16.7 h at midsummer.
func pvDaylight(mid time.Time) (noonUTC, half float64) {
	return 11.33, (12.2 + 4.5*seasonPhase(mid)) / 2
}

// pv is the export curve: a bell around solar noon whose width and height
// follow the season, × the roof size × the region's cloud factor for the day
// × row noise; exactly 0 outside daylight.
func pv(mid time.Time, kwp, cloud, noise float64) float64 {
	u := mid.UTC()
	h := float64(u.Hour()) + float64(u.Minute())/60 + float64(u.Second())/3600
	noon, half := pvDaylight(mid)
	x := (h - noon) / half
	if x <= -1 || x >= 1 {
		return 0
	}
	c := math.Cos(x * math.Pi / 2)
	height := 0.35 + 0.55*(0.5+0.5*seasonPhase(mid))
	v := kwp * 0.25 * height * c * c * cloud * noise
	return math.Min(v, ExportMaxPer15)
}

// heatingFactor is 1 in midwinter and 0 in midsummer.
func heatingFactor(mid time.Time) float64 { return 0.5 - 0.5*seasonPhase(mid) }

// gasShape is a heating day: a night setback, a morning peak and a long
// evening, plus hot water all year (kWh per quarter hour).
func gasShape(mid time.Time, scale, noise float64) float64 {
	h := localHour(mid)
	day := 1.0
	if h < 5 || h >= 22.5 {
		day = 0.3
	}
	shape := day + 0.6*gauss(h, 7, 1.2) + 0.4*gauss(h, 18.5, 2)
	return scale * (0.05 + 0.35*heatingFactor(mid)*shape) * noise
}

// heatShape is district heat: smoother than a gas boiler.
func heatShape(mid time.Time, scale, noise float64) float64 {
	h := localHour(mid)
	shape := 0.7 + 0.3*gauss(h, 7, 2) + 0.2*gauss(h, 19, 3)
	return scale * (0.08 + 0.5*heatingFactor(mid)*shape) * noise
}

// waterShape is m³ per quarter hour: almost nothing at night, showers in the
// morning, cooking and washing in the evening.
func waterShape(mid time.Time, scale, noise float64) float64 {
	h := localHour(mid)
	return scale * (0.0004 + 0.012*gauss(h, 7, 1) + 0.008*gauss(h, 19, 2) + 0.004*gauss(h, 12.5, 2)) * noise
}

// gasKWhPerM3 converts gas energy to volume (a typical Brennwert × Zustandszahl).
const gasKWhPerM3 = 10.5

// dec6 rounds to the six decimals decimal(18,6) holds exactly.
func dec6(v float64) decimal.Decimal { return decimal.NewFromFloat(v).Round(6) }
