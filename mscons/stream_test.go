package mscons_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/mscons"
)

// repeated streams head, body n times, then tail, without holding the
// stream: the test's input is never in memory as a whole.
type repeated struct {
	head, body, tail []byte
	n                int
	cur              *bytes.Reader
	stage, done      int
	read             int64
}

func (r *repeated) Read(p []byte) (int, error) {
	for {
		if r.cur != nil && r.cur.Len() > 0 {
			n, err := r.cur.Read(p)
			r.read += int64(n)
			return n, err
		}
		switch {
		case r.stage == 0:
			r.cur, r.stage = bytes.NewReader(r.head), 1
		case r.stage == 1 && r.done < r.n:
			r.cur = bytes.NewReader(r.body)
			r.done++
		case r.stage == 1:
			r.cur, r.stage = bytes.NewReader(r.tail), 2
		default:
			return 0, io.EOF
		}
	}
}

func heapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// The reader holds one message, not the stream: reading thousands of
// one-day messages (tens of MB), the live heap after the first hundred
// messages and after the last differ by far less than the input.
func TestStreamingMemoryIsBoundedByOneMessage(t *testing.T) {
	from, _ := localDay(2025, time.March, 3, 0)
	text := interchange{nl: true, msgs: []gmsg{{values: series(from, 15*time.Minute, 96, "KWH", false)}}}.render()
	unh, unz := strings.Index(text, "UNH+"), strings.Index(text, "UNZ+")
	const n = 3000
	src := &repeated{head: []byte(text[:unh]), body: []byte(text[unh:unz]), tail: []byte(fmt.Sprintf("UNZ+%d+IC1'\n", n)), n: n}

	r := mscons.NewReader(src, opts())
	var base uint64
	values := 0
	for i := 0; ; i++ {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		values += len(m.Deliveries[0].Intervals)
		if i == 100 {
			base = heapAfterGC()
		}
	}
	end := heapAfterGC()
	require.Equal(t, n*96, values)
	require.Greater(t, src.read, int64(20<<20), "the input must be large against the bound")
	growth := int64(end) - int64(base)
	t.Logf("input %d MiB, heap after 100 messages %d KiB, at the end %d KiB", src.read>>20, base>>10, end>>10)
	require.Less(t, growth, int64(2<<20), "heap grew by %d bytes over %d MiB of input", growth, src.read>>20)
}
