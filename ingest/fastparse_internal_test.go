package ingest

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// parseInstant reads every spelling one of the offset layouts reads, as that
// layout reads it, whichever layout is tried first.
func TestParseInstantAgreesWithTimeParse(t *testing.T) {
	inputs := []string{
		"2026-03-01T00:00:00+01:00", "2026-03-01 00:00:00+01", "2025-01-01 00:00:00+00", "2026-10-25T02:15:00+02:00",
		"2026-03-01T00:00:00Z", "2026-03-01T00:00:00.5Z", "2026-03-01T00:00:00.123456789-05:30", "2026-03-01T00:00:00.1234567891Z",
		"2026-03-01T00:00:00+0130", "2024-02-29T23:59:59-11:00", "2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
		"2026-03-01T24:00:00Z", "2026-03-01T00:60:00Z", "2026-03-01T00:00:60Z", "2026-03-01T00:00:00", "2026-03-01T00:00Z",
		"2026-03-01T00:00:00+1", "2026-03-01T00:00:00 +01:00", "2026-03-01X00:00:00Z", "2026-3-01T00:00:00Z",
		"2026-03-01T00:00:00.Z", "2026-03-01T00:00:00+01:0", "+026-03-01T00:00:00Z", "2026-03-01T00:00:00+24:00",
	}
	for _, s := range inputs {
		for _, l := range offsetLayouts {
			want, err := time.Parse(l, s)
			if err != nil {
				continue
			}
			got, err := parseInstant(s, nil)
			require.NoError(t, err, s)
			require.True(t, want.Equal(got), "%s: %s, %s reads %s", s, got, l, want)
		}
	}
}

func TestIsPlainDecimalIsTheRegexp(t *testing.T) {
	plainDecimal := regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?$`)
	for _, s := range []string{"0", "1.5", "-0.000001", "+12", "123456789012.654321", "", "-", "+", ".5", "5.", "1e3", "1,5", "1.2.3", " 1", "1 ", "--1", "0x10", "١"} {
		require.Equal(t, plainDecimal.MatchString(s), isPlainDecimal(s), "%q", s)
	}
}
