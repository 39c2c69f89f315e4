package sqltext_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// TestString: a quote is doubled and nothing else changes — a backslash, a
// newline and a multi-byte character stay as they are.
func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"":              "''",
		"Europe/Berlin": "'Europe/Berlin'",
		"it's":          "'it''s'",
		"''":            "''''''",
		`a\'b`:          `'a\''b'`,
		"ä\nö":          "'ä\nö'",
	} {
		require.Equal(t, want, sqltext.String(in), in)
	}
}

// TestIdent: a double quote is doubled, case and other characters stay.
func TestIdent(t *testing.T) {
	for in, want := range map[string]string{
		"":            `""`,
		"readings":    `"readings"`,
		"Zählerstand": `"Zählerstand"`,
		`a"b`:         `"a""b"`,
		"it's a.b":    `"it's a.b"`,
	} {
		require.Equal(t, want, sqltext.Ident(in), in)
	}
}

// TestIdentBytes: letters, _ and bytes ≥ 0x80 begin and continue an
// identifier, digits only continue one, and $ . " ' space and operators do
// neither.
func TestIdentBytes(t *testing.T) {
	for _, tc := range []struct {
		c            byte
		start, inner bool
	}{
		{'a', true, true}, {'z', true, true}, {'A', true, true}, {'Z', true, true},
		{'_', true, true}, {0x80, true, true}, {0xc3, true, true}, {0xff, true, true},
		{'0', false, true}, {'9', false, true},
		{'$', false, false}, {'.', false, false}, {'"', false, false}, {'\'', false, false},
		{' ', false, false}, {'(', false, false}, {'-', false, false}, {'@', false, false},
		{'[', false, false}, {'`', false, false}, {'{', false, false}, {'/', false, false},
		{':', false, false}, {0x7f, false, false}, {0, false, false},
	} {
		require.Equal(t, tc.start, sqltext.IdentStart(tc.c), "IdentStart(%q)", tc.c)
		require.Equal(t, tc.inner, sqltext.IdentByte(tc.c), "IdentByte(%q)", tc.c)
	}
}
