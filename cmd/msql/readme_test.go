package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// scratchExample is a README line running a statement on the bare engine.
var scratchExample = regexp.MustCompile(`(?m)^msql --scratch -c "([^"]+)"`)

// TestREADMEScratchExamplesRun: every `msql --scratch -c "…"` the README shows
// runs as written — an example that fails teaches the wrong literal.
func TestREADMEScratchExamplesRun(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	examples := scratchExample.FindAllStringSubmatch(string(readme), -1)
	require.NotEmpty(t, examples, "the README shows the bare engine")
	for _, m := range examples {
		r := msql(t, "", "--scratch", "--format", "csv", "-c", m[1])
		require.Equal(t, 0, r.code, "%s: %s", m[1], r.stderr)
	}
}
