package settings_test

import (
	"testing"

	"github.com/meterstore/meterstore/settings"
)

// FuzzParseSettings: any text either parses into validated tables or is refused
// with an error; it never panics, and a parsed table builds again from its spec.
func FuzzParseSettings(f *testing.F) {
	f.Add(`[[tables]]
name = "readings_versions"
extra_columns = [{ name = "tenant", identity = true }, { name = "bk", check = "EIC:X" }]
[tables.hot]
partition_step = "1d"`)
	f.Add(`[hot]
url = "${DATABASE_URL}"`)
	f.Add(`[[tables]]
name = "x"
time_model = "point"`)
	lookup := func(k string) (string, bool) { return "v", k == "DATABASE_URL" }
	f.Fuzz(func(t *testing.T, src string) {
		s, err := settings.ParseSettings(src, lookup)
		if err != nil {
			return
		}
		for _, cfg := range s.Tables {
			again, err := cfg.Spec().Build()
			if err != nil {
				t.Fatalf("a built table does not rebuild: %v", err)
			}
			if again.ResolutionSQL() != cfg.ResolutionSQL() {
				t.Fatalf("rebuild changed the resolution SQL")
			}
		}
	})
}

// FuzzParseDuration never panics and never returns a negative duration for a
// d/y spelling it accepted.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"1d", "14d", "10y", "15m", "1h30m", "-1d", "d", "9999999999999y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = settings.ParseDuration(s)
	})
}
