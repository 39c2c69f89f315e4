package plan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSplitFiles: every file lands in exactly one group, in its order, the
// groups balanced by records and none smaller than minFilesPerStream.
func TestSplitFiles(t *testing.T) {
	files := func(n int) []ColdFile {
		out := make([]ColdFile, n)
		for i := range out {
			out[i] = ColdFile{Path: fmt.Sprintf("f%03d", i), Records: int64(100 + 37*(i%5))}
		}
		return out
	}
	for _, c := range []struct{ files, streams, groups int }{
		{1, 4, 1}, {15, 2, 1}, {16, 2, 2}, {16, 4, 2}, {61, 2, 2}, {739, 2, 2}, {739, 8, 8}, {40, 1, 1}, {40, 0, 1},
	} {
		in := files(c.files)
		got := splitFiles(in, c.streams)
		require.Len(t, got, c.groups, "%d files, %d streams", c.files, c.streams)
		seen := map[string]int{}
		var lo, hi int64 = -1, 0
		for _, g := range got {
			var sum int64
			for i, f := range g {
				seen[f.Path]++
				sum += f.Records
				if i > 0 {
					require.Less(t, g[i-1].Path, f.Path, "a group keeps the files' order")
				}
			}
			if c.groups > 1 {
				require.GreaterOrEqual(t, len(g), minFilesPerStream)
			}
			if lo < 0 || sum < lo {
				lo = sum
			}
			hi = max(hi, sum)
		}
		require.Len(t, seen, c.files)
		for p, n := range seen {
			require.Equal(t, 1, n, p)
		}
		require.LessOrEqual(t, hi-lo, int64(100+37*4), "groups within one file's records of each other")
	}
}
