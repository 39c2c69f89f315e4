package catalog

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// heapInUse is the heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// A handle that commits window after window holds the table's current
// metadata, not every version of it: the heap does not grow with the commits.
func TestCommitsDoNotAccumulateMetadata(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	const warm, commits = 40, 240
	var base uint64
	for i := range commits {
		d := day0.Add(time.Duration(i) * 24 * time.Hour)
		_, err := tb.CommitWindow(ctx, &SliceSource{Rows: genRows(d, 96, opA, uint64(i+1))}, d.Add(24*time.Hour))
		require.NoError(t, err)
		if i == warm {
			base = heapInUse()
		}
	}
	grown := int64(heapInUse()) - int64(base)
	runtime.KeepAlive(tb)
	require.Less(t, grown, int64(16<<20), "the heap grew by %d MiB over %d commits", grown>>20, commits-warm)
}
