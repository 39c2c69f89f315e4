package testkit

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/meterstore/meterstore/metering"
)

// DefaultOperators are real network-operator Marktpartner-IDs from public
// sources that pass the BDEW check digit (domain-rules.md §4). 9900357000004,
// common in public fixtures, fails both procedures and is deliberately absent.
var DefaultOperators = []string{"9910125000002", "9904768000008", "9907813000006"}

// completeMaloID appends the check digit to ten digits. It does not
// re-implement the Lok/Waggon rule: it asks metering.ParseMaloID which of the
// ten candidates it accepts, so the generator can never disagree with the
// parser the store uses.
func completeMaloID(prefix string) (metering.MaloID, error) {
	for d := byte('0'); d <= '9'; d++ {
		if m, err := metering.ParseMaloID(prefix + string(d)); err == nil {
			return m, nil
		}
	}
	return metering.MaloID{}, fmt.Errorf("testkit: no check digit makes %s… a valid MaLo-ID", prefix)
}

// newMaloID draws a MaLo-ID. The first digit follows the issuing convention
// (1–3 DVGW/gas, 4–9 BDEW/electricity); the ID itself does not encode the Sparte.
func newMaloID(r *rand.Rand, s metering.Sparte) (metering.MaloID, error) {
	var b strings.Builder
	if s == metering.SparteGas {
		b.WriteByte(byte('1' + r.IntN(3)))
	} else {
		b.WriteByte(byte('4' + r.IntN(6)))
	}
	for i := 0; i < 9; i++ {
		b.WriteByte(byte('0' + r.IntN(10)))
	}
	return completeMaloID(b.String())
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// newMeloID draws a Zählpunktbezeichnung: DE, a six-digit Netzbetreibernummer,
// a five-digit Postleitzahl and a 20-character Zählpunktnummer.
func newMeloID(r *rand.Rand, netz int) (metering.MeloID, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "DE%06d%05d", netz, 1000+r.IntN(99000))
	for i := 0; i < 20; i++ {
		b.WriteByte(alnum[r.IntN(len(alnum))])
	}
	return metering.ParseMeloID(b.String())
}

func mustObis(s string) metering.ObisCode {
	o, err := metering.ParseObis(s)
	if err != nil {
		panic("testkit: " + err.Error())
	}
	return o
}

// Channels. The electricity codes are the fixture's. For the other media
// metering.ParseObis accepts any well-formed code; D = 29 (Lastgang) makes
// IsLastgang true and A ≠ 1 gives no direction, which is what these are. The
// exact gas/heat/water C values are unverified against the EDI@Energy
// Codeliste (domain-rules.md §5), so they are chosen as plausible, not cited.
var (
	ObisImport     = mustObis("1-0:1.29.0")  // Wirkarbeit Bezug, Lastgang
	ObisExport     = mustObis("1-0:2.29.0")  // Wirkarbeit Lieferung, Lastgang
	ObisGasEnergy  = mustObis("7-0:33.29.0") // gas energy Lastgang (kWh); C unverified
	ObisGasVolume  = mustObis("7-0:3.29.0")  // gas Betriebsvolumen Lastgang (m³); C unverified
	ObisHeatEnergy = mustObis("6-0:1.29.0")  // heat energy Lastgang; C unverified
	ObisWaterVol   = mustObis("8-0:1.29.0")  // cold water volume Lastgang; C unverified

	ObisRegisterStrom  = mustObis("1-0:1.8.0")  // Zählerstand Bezug
	ObisRegisterGas    = mustObis("7-20:3.0.0") // Gaszählerstand Betriebsvolumen (de.wikipedia)
	ObisRegisterHeat   = mustObis("6-0:1.8.0")  // heat register; unverified
	ObisRegisterWasser = mustObis("8-0:1.8.0")  // water register; unverified
)
