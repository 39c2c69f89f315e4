package meterstore_test

import (
	"testing"

	"github.com/meterstore/meterstore"
)

// FuzzParseValueCheck: accepted spellings round-trip through String.
func FuzzParseValueCheck(f *testing.F) {
	for _, s := range []string{"EIC", "EIC:X", "EIC:Q", "MALO", "MELO", "BDEW", "eic", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := meterstore.ParseValueCheck(s)
		if err != nil {
			return
		}
		back, err := meterstore.ParseValueCheck(c.String())
		if err != nil || back != c {
			t.Fatalf("%q → %q does not round-trip: %v", s, c.String(), err)
		}
	})
}
