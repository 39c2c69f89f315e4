package metering

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSparteParsers(t *testing.T) {
	for _, s := range Sparten() {
		got, err := ParseSparte(s.String())
		require.NoError(t, err)
		require.Equal(t, s, got)
	}
	lenient := []struct {
		in   string
		want Sparte
	}{
		{"strom", SparteStrom}, {" Strom ", SparteStrom}, {"ELECTRICITY", SparteStrom},
		{"Gas", SparteGas}, {"erdgas", SparteGas},
		{"WÄRME", SparteWaerme}, {"Wärme", SparteWaerme}, {"waerme", SparteWaerme}, {"heat", SparteWaerme},
		{"wasser", SparteWasser}, {"Water", SparteWasser},
	}
	for _, tc := range lenient {
		got, err := ParseSparteLenient(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
		// The strict parser refuses the same spelling, naming the canonical one.
		if tc.in != tc.want.String() {
			_, err := ParseSparte(tc.in)
			var ce *CodeError
			require.ErrorAs(t, err, &ce, tc.in)
			require.Equal(t, tc.want.String(), ce.Canonical)
			require.ErrorIs(t, err, ErrInvalid)
		}
	}
	for _, in := range []string{"", "OIL", "STROMM", "1"} {
		_, err := ParseSparteLenient(in)
		var ce *CodeError
		require.ErrorAs(t, err, &ce, in)
		require.Empty(t, ce.Canonical)
		require.Equal(t, []string{"STROM", "GAS", "WAERME", "WASSER"}, ce.Allowed)
	}
	require.True(t, Sparte(0).IsZero())
	require.Empty(t, Sparte(0).String())
}

func TestSparteUnits(t *testing.T) {
	cases := []struct {
		s                 Sparte
		measured, billing Unit
		kwh, m3           bool
	}{
		{SparteStrom, UnitKWh, UnitKWh, true, false},
		{SparteGas, UnitM3, UnitKWh, true, true},
		{SparteWaerme, UnitKWh, UnitKWh, true, false},
		{SparteWasser, UnitM3, UnitM3, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.s.String(), func(t *testing.T) {
			require.Equal(t, tc.measured, tc.s.MeasuredUnit())
			require.Equal(t, tc.billing, tc.s.BillingUnit())
			for u, ok := range map[Unit]bool{UnitKWh: tc.kwh, UnitM3: tc.m3} {
				err := tc.s.AllowsUnit(u)
				if ok {
					require.NoError(t, err)
				} else {
					require.ErrorIs(t, err, ErrUnitNotAllowed)
					require.ErrorIs(t, err, ErrInvalid)
				}
			}
		})
	}
	// Water in kWh is refused naming M3.
	err := SparteWasser.AllowsUnit(UnitKWh)
	require.ErrorIs(t, err, ErrUnitNotAllowed)
	require.Contains(t, err.Error(), "M3") // the fix is named; the kind is checked above
	require.ErrorIs(t, SparteStrom.AllowsUnit(0), ErrInvalid)
}

// An OBIS code of electricity (A = 1) or gas (A = 7) belongs to its own
// Sparte only; other media are not checked.
func TestSparteAllowsObis(t *testing.T) {
	allowed := map[string][]Sparte{
		"1-0:1.29.0":  {SparteStrom},
		"7-0:33.29.0": {SparteGas},
		"7-20:3.0.0":  {SparteGas},
		"6-0:1.0.0":   Sparten(),
		"8-0:1.0.0":   Sparten(),
		"0-0:96.1.0":  Sparten(),
	}
	for code, ok := range allowed {
		o, err := ParseObis(code)
		require.NoError(t, err)
		for _, s := range Sparten() {
			err := s.AllowsObis(o)
			if slices.Contains(ok, s) {
				require.NoError(t, err, "%s %s", s, code)
				continue
			}
			require.ErrorIs(t, err, ErrInvalid, "%s %s", s, code)
			require.Contains(t, err.Error(), "write sparte "+ok[0].String())
		}
	}
}

func TestUnitParsers(t *testing.T) {
	for _, u := range Units() {
		got, err := ParseUnit(u.String())
		require.NoError(t, err)
		require.Equal(t, u, got)
	}
	for in, want := range map[string]Unit{"kWh": UnitKWh, "kwh": UnitKWh, " KWH ": UnitKWh, "m³": UnitM3, "m3": UnitM3, "MTQ": UnitM3} {
		got, err := ParseUnitLenient(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := ParseUnit("kWh")
	var ce *CodeError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "KWH", ce.Canonical)
	_, err = ParseUnitLenient("MWh")
	require.ErrorAs(t, err, &ce)
	require.Empty(t, ce.Canonical)
}

func TestQuality(t *testing.T) {
	cases := []struct {
		q           Quality
		name        string
		billable    bool
		provisional bool
		code        string
	}{
		{QualityMeasured, "MEASURED", true, false, "220"},
		{QualitySubstituted, "SUBSTITUTED", true, false, "67"},
		{QualityEstimated, "ESTIMATED", false, true, "187"},
		{QualityPreliminary, "PRELIMINARY", true, true, "Z18"},
		{QualityFaulty, "FAULTY", false, false, "20"},
		{QualityCalculated, "CALCULATED", false, false, ""},
		{QualityCorrected, "CORRECTED", true, false, ""},
		{QualityUnknown, "UNKNOWN", false, false, ""},
	}
	require.Len(t, Qualities(), len(cases))
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.q, Qualities()[i])
			require.Equal(t, tc.name, tc.q.String())
			got, err := ParseQuality(tc.name)
			require.NoError(t, err)
			require.Equal(t, tc.q, got)
			require.Equal(t, tc.billable, tc.q.IsBillable())
			require.Equal(t, tc.provisional, tc.q.IsProvisional())
			code, ok := tc.q.MarketCode()
			require.Equal(t, tc.code != "", ok)
			require.Equal(t, tc.code, code)
			if ok {
				// Ingest takes the MSCONS code; storage refuses it naming the word.
				fromCode, err := ParseQualityLenient(code)
				require.NoError(t, err)
				require.Equal(t, tc.q, fromCode)
				_, err = ParseQuality(code)
				var ce *CodeError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, tc.name, ce.Canonical)
			}
		})
	}
	got, err := ParseQualityLenient(" substituted ")
	require.NoError(t, err)
	require.Equal(t, QualitySubstituted, got)
	_, err = ParseQuality("201") // Vorschlagswert: not in our list
	require.ErrorIs(t, err, ErrInvalid)
	require.False(t, Quality(0).IsBillable())
	_, ok := Quality(0).MarketCode()
	require.False(t, ok)
}

func TestResolution(t *testing.T) {
	canonical := []struct {
		in    string
		fixed time.Duration
	}{
		{"PT1M", time.Minute}, {"PT2M", 2 * time.Minute}, {"PT3M", 3 * time.Minute}, {"PT4M", 4 * time.Minute},
		{"PT5M", 5 * time.Minute}, {"PT6M", 6 * time.Minute}, {"PT10M", 10 * time.Minute}, {"PT12M", 12 * time.Minute},
		{"PT15M", 15 * time.Minute}, {"PT20M", 20 * time.Minute}, {"PT30M", 30 * time.Minute}, {"PT1H", time.Hour},
		{"P1D", 0}, {"P1M", 0}, {"P1Y", 0},
	}
	for _, tc := range canonical {
		r, err := ParseResolution(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.in, r.String())
		d, ok := r.Fixed()
		require.Equal(t, tc.fixed != 0, ok, tc.in)
		require.Equal(t, tc.fixed, d, tc.in)
	}
	require.Equal(t, ResolutionPT15M, mustRes(t, "PT15M"))
	lenient := map[string]string{
		"PT900S": "PT15M", "PT60S": "PT1M", "pt15m": "PT15M", " PT15M ": "PT15M",
		"PT60M": "PT1H", "PT3600S": "PT1H", "PT0015M": "PT15M", "p1d": "P1D", "p1m": "P1M",
	}
	for in, want := range lenient {
		r, err := ParseResolutionLenient(in)
		require.NoError(t, err, in)
		require.Equal(t, want, r.String(), in)
		_, err = ParseResolution(in)
		var ce *CodeError
		require.ErrorAs(t, err, &ce, in)
		require.Equal(t, want, ce.Canonical, in)
	}
	for _, in := range []string{"", "PT7M", "PT90S", "PT0M", "PT24H", "PT2H", "P2D", "P1W", "PT45M", "15", "PT15", "PT-15M", "PT1.5M", "P1DT1H"} {
		_, err := ParseResolutionLenient(in)
		var ce *CodeError
		require.ErrorAs(t, err, &ce, in)
		require.Empty(t, ce.Canonical, in)
	}
	require.True(t, Resolution{}.IsZero())
}

func mustRes(t *testing.T, s string) Resolution {
	t.Helper()
	r, err := ParseResolution(s)
	require.NoError(t, err)
	return r
}

func TestCodesTextMarshalling(t *testing.T) {
	var s Sparte
	require.NoError(t, s.UnmarshalText([]byte("GAS")))
	require.Equal(t, SparteGas, s)
	require.ErrorIs(t, s.UnmarshalText([]byte("Gas")), ErrInvalid)
	_, err := Sparte(0).MarshalText()
	require.ErrorIs(t, err, ErrInvalid)
	var r Resolution
	require.ErrorIs(t, r.UnmarshalText([]byte("PT900S")), ErrInvalid)
	require.NoError(t, r.UnmarshalText([]byte("PT15M")))
	var q Quality
	require.NoError(t, q.UnmarshalText([]byte("CORRECTED")))
	var u Unit
	require.NoError(t, u.UnmarshalText([]byte("M3")))
}
