package metering

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseObisCanonical(t *testing.T) {
	cases := []struct{ in, want string }{
		{"1-0:1.8.0", "1-0:1.8.0"},
		{"1-0:1.8.0*255", "1-0:1.8.0"}, // F = 255 is "not used": same channel
		{"  1-0:1.8.0*255 ", "1-0:1.8.0"},
		{"01-00:01.08.00", "1-0:1.8.0"}, // leading zeros dropped
		{"001-000:001.008.000*255", "1-0:1.8.0"},
		{"1-0:1.8.0*01", "1-0:1.8.0*1"}, // a Vorwert is a different register
		{"1-0:1.8.0*0", "1-0:1.8.0*0"},
		{"1-1:1.8.0", "1-1:1.8.0"}, // channel 1 is not channel 0
		{"1-1:1.29.0", "1-1:1.29.0"},
		{"1-65:1.8.0", "1-65:1.8.0"},
		{"7-20:3.0.0", "7-20:3.0.0"},
		{"7-0:54.0.0", "7-0:54.0.0"},
		{"255-255:255.255.255*254", "255-255:255.255.255*254"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			o, err := ParseObis(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, o.String())
			again, err := ParseObis(o.String())
			require.NoError(t, err)
			require.Equal(t, o, again)
		})
	}
	a, _ := ParseObis("1-0:1.8.0*255")
	b, _ := ParseObis("1-0:1.8.0")
	require.Equal(t, a, b)
	c, _ := ParseObis("1-1:1.8.0")
	require.NotEqual(t, b, c)
	d, _ := ParseObis("1-0:1.8.0*1")
	require.NotEqual(t, b, d)
	f, ok := d.StorageGroup()
	require.True(t, ok)
	require.Equal(t, 1, f)
	_, ok = b.StorageGroup()
	require.False(t, ok)
}

func TestParseObisRefusals(t *testing.T) {
	for _, in := range []string{
		"1.8.0",          // reduced code: no medium/channel
		"1:1.8.0",        // B missing
		"1-0:1.8",        // E missing
		"1-0:1.8.0.0",    // extra group
		"1-0:1.8.0*",     // empty F
		"1-0:1.8.256",    // > 255
		"1-0:1.8.0001",   // four digits
		"1-0:1.8.a",      // not a digit
		"1-0:+1.8.0",     // sign
		"1 -0:1.8.0",     // inner space
		"1-0:1.8.0*1*2",  // two F
		"1-0:1..0",       // empty D
		"",               // empty
		"A-B:C.D.E*F",    // letters
		"1-0:1.8.0 *255", // inner space
	} {
		_, err := ParseObis(in)
		var ie *IdentifierError
		require.ErrorAs(t, err, &ie, in)
		require.ErrorIs(t, err, ErrInvalid)
	}
	require.True(t, ObisCode{}.IsZero())
	require.Empty(t, ObisCode{}.String())
	require.Equal(t, DirectionNone, ObisCode{}.Direction())
}

func mustObis(t *testing.T, s string) ObisCode {
	t.Helper()
	o, err := ParseObis(s)
	require.NoError(t, err)
	return o
}

func TestObisDirection(t *testing.T) {
	cases := []struct {
		in   string
		want Direction
	}{
		{"1-0:1.8.0", DirectionImport},
		{"1-0:21.8.0", DirectionImport},
		{"1-0:41.8.0", DirectionImport},
		{"1-0:61.8.0", DirectionImport},
		{"1-0:3.8.0", DirectionImport},
		{"1-0:5.8.0", DirectionImport},
		{"1-0:8.8.0", DirectionImport},
		{"1-0:2.8.0", DirectionExport},
		{"1-0:22.8.0", DirectionExport},
		{"1-0:42.8.0", DirectionExport},
		{"1-0:62.8.0", DirectionExport},
		{"1-0:4.8.0", DirectionExport},
		{"1-0:6.8.0", DirectionExport},
		{"1-0:7.8.0", DirectionExport},
		{"1-1:2.29.0", DirectionExport},
		{"1-0:9.8.0", DirectionNone},  // apparent energy
		{"1-0:15.8.0", DirectionNone}, // absolute active
		{"1-0:32.7.0", DirectionNone}, // voltage
		{"7-0:1.8.0", DirectionNone},  // gas: C is a measurand, not a direction
		{"7-20:3.0.0", DirectionNone},
		{"6-0:1.8.0", DirectionNone}, // heat
		{"8-0:2.8.0", DirectionNone}, // cold water
	}
	for _, tc := range cases {
		o := mustObis(t, tc.in)
		require.Equal(t, tc.want, o.Direction(), tc.in)
		require.Equal(t, tc.want == DirectionImport, o.IsImport(), tc.in)
		require.Equal(t, tc.want == DirectionExport, o.IsExport(), tc.in)
	}
	require.Equal(t, "IMPORT", DirectionImport.String())
	require.Equal(t, "EXPORT", DirectionExport.String())
	require.Empty(t, DirectionNone.String())
}

func TestObisPredicates(t *testing.T) {
	type preds struct {
		reactive, lastgang, zaehlerstand, vorschub, maximum, fehler, total bool
		tariff                                                             int
		tariffOK                                                           bool
	}
	cases := []struct {
		in   string
		want preds
	}{
		{"1-0:1.8.0", preds{zaehlerstand: true, total: true}},
		{"1-0:1.8.1", preds{zaehlerstand: true, tariff: 1, tariffOK: true}},
		{"1-0:1.8.2", preds{zaehlerstand: true, tariff: 2, tariffOK: true}},
		{"1-0:1.8.62", preds{zaehlerstand: true, tariff: 62, tariffOK: true}},
		{"1-0:1.8.63", preds{zaehlerstand: true, fehler: true}},
		{"1-1:1.29.0", preds{lastgang: true, total: true}},
		{"1-0:1.9.0", preds{vorschub: true, total: true}},
		{"1-0:1.6.0", preds{maximum: true, total: true}},
		{"1-0:3.8.0", preds{reactive: true, zaehlerstand: true, total: true}},
		{"1-0:8.29.0", preds{reactive: true, lastgang: true, total: true}},
		{"1-0:9.8.0", preds{zaehlerstand: true, total: true}}, // apparent, not reactive
		{"1-0:2.8.0", preds{zaehlerstand: true, total: true}},
		{"7-0:3.8.0", preds{zaehlerstand: true, total: true}}, // gas C=3 is not reactive
		{"7-0:13.29.0", preds{lastgang: true, total: true}},
	}
	for _, tc := range cases {
		o := mustObis(t, tc.in)
		tariff, ok := o.TariffRegister()
		got := preds{o.IsReactive(), o.IsLastgang(), o.IsZaehlerstand(), o.IsVorschub(), o.IsMaximum(), o.IsFehlerregister(), o.IsTotal(), tariff, ok}
		require.Equal(t, tc.want, got, tc.in)
	}
	o := mustObis(t, "7-20:3.0.0")
	require.Equal(t, 7, o.Medium())
	require.Equal(t, 20, o.Channel())
	require.Equal(t, 3, o.C())
	require.Equal(t, 0, o.D())
	require.Equal(t, 0, o.E())
}
