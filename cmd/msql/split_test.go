package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSplitKnowsEscapeStrings: in an E'…' string \' does not end the literal,
// so a semicolon after it is inside the string (DuckDB's rule, and pgwire's).
func TestSplitKnowsEscapeStrings(t *testing.T) {
	require.Equal(t, []string{`SELECT E'it\'s; x'`, `SELECT 2`}, splitAll(`SELECT E'it\'s; x'; SELECT 2`))
	var s splitter
	require.Empty(t, s.feed(`SELECT E'a\'; `))
	require.Equal(t, []string{`SELECT E'a\'; '`}, s.feed("';"), "the statement waits for the literal's end")
}
