//go:build linux && cgo && (amd64 || arm64)

package duckstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// DuckDB's allocator takes the decay and the background threads, and reports
// them back as set: memory freed by DuckDB goes back to the system a decay
// later whether or not DuckDB allocates again.
func TestReturnFreedMemorySetsDuckDBsAllocator(t *testing.T) {
	for _, decay := range []time.Duration{2 * time.Second, time.Second} {
		got, err := ReturnFreedMemory(decay)
		require.NoError(t, err)
		require.Equal(t, AllocatorSettings{Jemalloc: true, DirtyDecay: decay, MuzzyDecay: 0, BackgroundThreads: true}, got)
	}
}
