package sqltext_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// TestCut: semicolons end statements only in code — not in a literal (with a
// doubled quote, or \' in an E'…' string), a quoted identifier, a
// dollar-quoted string (its tag of any letters) or a comment; the text after the last one is the rest,
// open when a literal or comment is unterminated.
func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in    string
		stmts []string
		rest  string
		open  bool
	}{
		{"SELECT 1; SELECT 2;", []string{"SELECT 1", " SELECT 2"}, "", false},
		{"SELECT 'a;''b'; x", []string{"SELECT 'a;''b'"}, " x", false},
		{`SELECT E'it\'s;'; y`, []string{`SELECT E'it\'s;'`}, " y", false},
		{`SELECT 'no\'; z`, []string{`SELECT 'no\'`}, " z", false},
		{`SELECT "a;""b" FROM t;`, []string{`SELECT "a;""b" FROM t`}, "", false},
		{"SELECT $$;$$, $q$;$q$, $1;", []string{"SELECT $$;$$, $q$;$q$, $1"}, "", false},
		{"SELECT $é$;$é$; x", []string{"SELECT $é$;$é$"}, " x", false}, // a tag of any letters, as DuckDB reads one
		{"SELECT 1 -- not; here\n; SELECT /* ; */ 2", []string{"SELECT 1 -- not; here\n"}, " SELECT /* ; */ 2", false},
		{"SELECT 'open;", nil, "SELECT 'open;", true},
		{"SELECT 1; /* open;", []string{"SELECT 1"}, " /* open;", true},
		{"SELECT $t$ open;", nil, "SELECT $t$ open;", true},
		{"SELECT 1; -- trailing", []string{"SELECT 1"}, " -- trailing", true},
	} {
		stmts, rest, open := sqltext.Cut(tc.in)
		require.Equal(t, tc.stmts, stmts, tc.in)
		require.Equal(t, tc.rest, rest, tc.in)
		require.Equal(t, tc.open, open, tc.in)
	}
}

// TestLexKeepsEveryByte: the segments are the text, in order.
func TestLexKeepsEveryByte(t *testing.T) {
	q := "SELECT E'\\'', \"x\"\"y\", $a$b$a$ -- c\n/* d */ FROM t WHERE v = 'e'"
	var b strings.Builder
	var opaque []string
	for _, s := range sqltext.Lex(q) {
		b.WriteString(s.Text)
		if !s.Code {
			opaque = append(opaque, s.Text)
		}
	}
	require.Equal(t, q, b.String())
	require.Equal(t, []string{"'\\''", "\"x\"\"y\"", "$a$b$a$", "-- c", "/* d */", "'e'"}, opaque)
}

func TestComments(t *testing.T) {
	require.Equal(t, "SELECT    \n'--x' ", sqltext.StripComments("SELECT /* a */ -- b\n'--x' "))
	require.True(t, sqltext.OnlyComments(" -- a\n /* b */ "))
	require.False(t, sqltext.OnlyComments("-- a\nSELECT 1"))
}
