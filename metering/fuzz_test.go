package metering

import (
	"encoding/json"
	"errors"
	"testing"
)

// Every fuzz target checks two things: the parser never panics, and every
// accepted value round-trips through its canonical spelling
// (parse(v.String()) == v). Rejections must satisfy ErrInvalid.

func requireInvalid(t *testing.T, in string, err error) {
	t.Helper()
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("%q: error %v does not satisfy ErrInvalid", in, err)
	}
}

func roundTrip[T comparable](t *testing.T, in string, parse func(string) (T, error), str func(T) string) {
	t.Helper()
	v, err := parse(in)
	if err != nil {
		requireInvalid(t, in, err)
		return
	}
	s := str(v)
	again, err := parse(s)
	if err != nil {
		t.Fatalf("%q accepted as %q, which is refused: %v", in, s, err)
	}
	if again != v {
		t.Fatalf("%q: round trip through %q changed the value", in, s)
	}
	if s != str(again) {
		t.Fatalf("%q: canonical spelling not stable: %q vs %q", in, s, str(again))
	}
}

func addSeeds(f *testing.F, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
}

func FuzzParseMaloID(f *testing.F) {
	addSeeds(f, append(realMaloIDs, "12345678910", "41373559214", " 41373559241 ", "01373559241", "")...)
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseMaloID, MaloID.String)
	})
}

func FuzzParseMeloID(f *testing.F) {
	addSeeds(f, "DE00056266802AO6G56M11SN51G21M24S", "de00056266802ao6g56m11sn51g21m24s", "DE 000562 66802 AO6G56M11SN51G21M24S", "")
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseMeloID, MeloID.String)
	})
}

func FuzzParseBdewCode(f *testing.F) {
	addSeeds(f, append(append(realBdewCodes, realGLNs...), "9900357000004", "0000000000000", "")...)
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseBdewCode, BdewCode.String)
		if c, err := ParseBdewCode(s); err == nil && !c.PassesBDEW() && !c.PassesGS1() {
			t.Fatalf("%q accepted without passing either check", s)
		}
	})
}

func FuzzParseEIC(f *testing.F) {
	addSeeds(f, append(realEICs, "11XUENBSOLS----X", "23X--130302DLGW-", " 10yde-rwenet---i ", "")...)
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseEIC, EIC.String)
		if e, err := ParseEIC(s); err == nil {
			_, _ = e.ObjectType()
			_, _ = e.Regelzone()
		}
	})
}

func FuzzParseEICObjectType(f *testing.F) {
	addSeeds(f, "X", "Y", "Q", "x", "", "XY")
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseEICObjectType, EICObjectType.String)
	})
}

func FuzzParseObis(f *testing.F) {
	addSeeds(f, "1-0:1.8.0", "1-0:1.8.0*255", "01-00:01.08.00", "1-0:1.8.0*01", "1.8.0", "7-20:3.0.0", "1-0:1.8.256", "")
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseObis, ObisCode.String)
		if o, err := ParseObis(s); err == nil {
			_ = o.Direction()
			_, _ = o.TariffRegister()
			if o.IsImport() && o.IsExport() {
				t.Fatalf("%q both import and export", s)
			}
		}
	})
}

func FuzzParseResolution(f *testing.F) {
	addSeeds(f, "PT15M", "PT900S", "PT1H", "P1D", "P1M", "P1Y", "pt15m", "")
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseResolution, Resolution.String)
		if r, err := ParseResolution(s); err == nil && r.String() != s {
			t.Fatalf("strict parser accepted non-canonical %q", s)
		}
	})
}

func FuzzParseResolutionLenient(f *testing.F) {
	addSeeds(f, "PT15M", "PT900S", "PT60S", " pt15m ", "PT60M", "PT3600S", "PT24H", "")
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseResolutionLenient, Resolution.String)
		if r, err := ParseResolutionLenient(s); err == nil {
			if _, err := ParseResolution(r.String()); err != nil {
				t.Fatalf("%q: canonical %q refused by the strict parser", s, r)
			}
		}
	})
}

func FuzzParseSparte(f *testing.F) {
	addSeeds(f, "STROM", "GAS", "WAERME", "WASSER", "Strom", "")
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseSparte, Sparte.String)
	})
}

func FuzzParseSparteLenient(f *testing.F) {
	addSeeds(f, "STROM", "gas", "WÄRME", "Wärme", "waerme", " wasser ", "heat", "")
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseSparteLenient, Sparte.String)
		if v, err := ParseSparteLenient(s); err == nil {
			if _, err := ParseSparte(v.String()); err != nil {
				t.Fatalf("%q: canonical refused", s)
			}
		}
	})
}

func FuzzParseUnit(f *testing.F) {
	addSeeds(f, "KWH", "M3", "kWh", "m³", "MTQ", "")
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseUnit, Unit.String)
		roundTrip(t, s, ParseUnitLenient, Unit.String)
	})
}

func FuzzParseQuality(f *testing.F) {
	addSeeds(f, "MEASURED", "SUBSTITUTED", "CORRECTED", "measured", "220", "Z18", "")
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseQuality, Quality.String)
	})
}

func FuzzParseQualityLenient(f *testing.F) {
	addSeeds(f, "MEASURED", " substituted ", "220", "67", "187", "z18", "20", "201", "")
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseQualityLenient, Quality.String)
	})
}

func FuzzParseVersion(f *testing.F) {
	addSeeds(f, "1", "20210601060030", "1740787200000", "18446744073709551615", "18446744073709551616", "007", "0", "")
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseVersion, Version.String)
	})
}

func FuzzParseVersionScope(f *testing.F) {
	addSeeds(f, "9910125000002:2026-02", "4260304620007:2026-12", "9900357000004:2026-02", "9910125000002:2026-13", "")
	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s, ParseVersionScope, VersionScope.String)
		if v, err := ParseVersionScope(s); err == nil && len(v.String()) != 21 {
			t.Fatalf("%q: scope is not 21 characters", s)
		}
	})
}

func FuzzSourceJSON(f *testing.F) {
	addSeeds(f,
		`{"MSCONS":{"sender":"9910125000002","message_ref":"M1"}}`,
		`{"SMGW":{"gateway_id":"EDNT0012345678"}}`,
		`{"MANUAL":{"author":"j.doe"}}`,
		`{"AUTO_SUBSTITUTE":{"method":"INTERPOLATION","reason":"gap \u003c4h"}}`,
		`{"VIRTUAL_METER":{"kind":"PV_SELF_CONSUMPTION"}}`,
		`{"IMPORT":{"system":"legacy-mdm"}}`,
		`{"MSCONS":{"sender":"9900357000004","message_ref":"M1"}}`,
		`{"FTP":{}}`, `null`, ``,
	)
	f.Fuzz(func(t *testing.T, s string) {
		var src Source
		if err := json.Unmarshal([]byte(s), &src); err != nil {
			if !errors.Is(err, ErrInvalid) {
				var se *json.SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("%q: error %v is neither ErrInvalid nor a JSON syntax error", s, err)
				}
			}
			return
		}
		b, err := json.Marshal(src)
		if err != nil {
			t.Fatalf("%q accepted but does not marshal: %v", s, err)
		}
		var again Source
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("%q re-encoded as %s, which is refused: %v", s, b, err)
		}
		if again != src {
			t.Fatalf("%q: round trip changed the source", s)
		}
		b2, _ := json.Marshal(again)
		if string(b) != string(b2) {
			t.Fatalf("%q: encoding not stable: %s vs %s", s, b, b2)
		}
		if src.Kind() == "" {
			t.Fatalf("%q: accepted source has no kind", s)
		}
	})
}

func FuzzProvenanceJSON(f *testing.F) {
	addSeeds(f,
		`[{"occurred_at":"2026-03-01T00:00:00Z","event_type":"INGESTED","actor":"MSCONS","note":null}]`,
		`[{"occurred_at":"2026-03-02T08:30:15.123456+01:00","event_type":"CORRECTED","actor":"ops","note":"x"}]`,
		`[]`, `null`,
	)
	f.Fuzz(func(t *testing.T, s string) {
		var p Provenance
		if err := json.Unmarshal([]byte(s), &p); err != nil {
			return
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("%q accepted but does not marshal: %v", s, err)
		}
		var again Provenance
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("%q re-encoded as %s, which is refused: %v", s, b, err)
		}
		b2, _ := json.Marshal(again)
		if string(b) != string(b2) {
			t.Fatalf("%q: encoding not stable: %s vs %s", s, b, b2)
		}
	})
}
