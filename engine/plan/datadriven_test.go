package plan

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// update rewrites the golden files with what the planner produces now:
//
//	go test ./engine/plan -run TestRewriteGoldens -update
//
// then review the diff: a change to what a statement becomes is a change of
// behaviour.
var update = flag.Bool("update", false, "rewrite engine/plan/testdata golden files with the current output")

// ddCase is one case of a golden file, in cockroach's datadriven layout:
//
//	command arg=value …
//	input lines
//	----
//	expected output lines
//
// Cases are separated by blank lines; lines starting with # between cases are
// comments. Output never holds a blank line.
type ddCase struct {
	line     int // where the command is, for messages
	cmd      string
	args     map[string][]string // repeated args keep their order
	input    string
	expected string
}

func (c ddCase) arg(key string) string {
	if v := c.args[key]; len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

// parseGolden reads a golden file's cases, and the text around them so an
// update keeps comments where they were.
func parseGolden(t *testing.T, path string) []ddCase {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	var out []ddCase
	for i := 0; i < len(lines); {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			i++
			continue
		}
		c := ddCase{line: i + 1, args: map[string][]string{}}
		fields := strings.Fields(l)
		c.cmd = fields[0]
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			c.args[k] = append(c.args[k], v)
		}
		i++
		var in []string
		for ; i < len(lines) && lines[i] != "----"; i++ {
			in = append(in, lines[i])
		}
		require.Less(t, i, len(lines), "%s:%d: %s without ----", path, c.line, c.cmd)
		i++
		var exp []string
		for ; i < len(lines) && lines[i] != ""; i++ {
			exp = append(exp, lines[i])
		}
		c.input, c.expected = strings.Join(in, "\n"), strings.Join(exp, "\n")
		out = append(out, c)
	}
	return out
}

// runGolden runs every case of path through do and compares, or with -update
// writes the file anew with do's output.
func runGolden(t *testing.T, path string, do func(t *testing.T, c ddCase) string) {
	cases := parseGolden(t, path)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	var rewritten []string
	next := 0 // lines[:next] are copied or replaced
	for _, c := range cases {
		got := strings.TrimRight(do(t, c), "\n")
		require.NotContains(t, got, "\n\n", "%s:%d: output has a blank line", path, c.line)
		if !*update {
			require.Equal(t, c.expected, got, "%s:%d: %s\n%s", path, c.line, c.cmd, c.input)
			continue
		}
		// Copy through the separator, then the new output.
		sep := c.line
		for lines[sep-1] != "----" {
			sep++
		}
		rewritten = append(rewritten, lines[next:sep]...)
		if got != "" {
			rewritten = append(rewritten, strings.Split(got, "\n")...)
		}
		next = sep
		for next < len(lines) && lines[next] != "" {
			next++
		}
	}
	if *update {
		rewritten = append(rewritten, lines[next:]...)
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(rewritten, "\n")), 0o644))
		fmt.Fprintf(os.Stderr, "rewrote %s\n", path)
	}
}
