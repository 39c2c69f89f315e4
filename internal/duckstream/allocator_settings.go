package duckstream

import "time"

// AllocatorSettings is how DuckDB's allocator gives freed memory back to the
// system, as it reports it (ReturnFreedMemory).
type AllocatorSettings struct {
	Jemalloc          bool          // false: the system's allocator, with its own rules; the rest is zero
	DirtyDecay        time.Duration // freed pages are returned this long after
	MuzzyDecay        time.Duration // pages returned lazily (MADV_FREE) stay this long; 0: none are
	BackgroundThreads bool          // returned by the allocator's threads, not only while DuckDB allocates
}
