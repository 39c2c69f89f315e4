package duckstream

import (
	"math"
	"math/big"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestRecentStringsShareRepeats: a VARCHAR value is its own copy of the
// chunk's bytes, equal to them, for short and long values, the empty string
// and more distinct values than are kept; a repeat of a kept value is handed
// out again without an allocation.
func TestRecentStringsShareRepeats(t *testing.T) {
	var r recentStrings
	long := "a value longer than recentMaxLen, never kept"
	inputs := []string{"", "1-0:1.29.0", "1-0:2.29.0", "1-0:1.29.0", "", long, long}
	for i := range 3 * recentCount {
		inputs = append(inputs, string(rune('a'+i%(recentCount+2))))
	}
	for _, in := range inputs {
		chunk := []byte(in)
		borrowed := unsafe.String(unsafe.SliceData(chunk), len(chunk))
		got := r.value(borrowed)
		for i := range chunk {
			chunk[i] = '#' // DuckDB reuses the chunk
		}
		require.Equal(t, in, got)
	}
	r.value("1-0:1.29.0")
	require.Zero(t, testing.AllocsPerRun(100, func() { r.value("1-0:1.29.0") }), "a repeat is the kept value")
}

// TestDecimalWordsKeepTheirValues: the big.Ints a DECIMAL column hands out
// from its blocks keep their values however many follow, across blocks, for
// both signs, zero and the int64 extremes.
func TestDecimalWordsKeepTheirValues(t *testing.T) {
	var c column
	var want []int64
	var got []*big.Int
	for i := range int64(3 * maxWords) {
		v := (i*7919)%2000003 - 1000000
		switch i {
		case 1:
			v = math.MinInt64
		case 2:
			v = math.MaxInt64
		case 3:
			v = 0
		}
		want = append(want, v)
		got = append(got, c.oneWordInt(v))
	}
	for i, v := range want {
		require.Zero(t, big.NewInt(v).Cmp(got[i]), "value %d: %d, got %s", i, v, got[i])
	}
}
