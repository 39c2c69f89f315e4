//go:build !(linux && cgo && (amd64 || arm64))

package duckstream

import "time"

// ReturnFreedMemory does nothing where DuckDB uses the system's allocator
// (not Linux): that allocator returns freed pages by its own rules.
func ReturnFreedMemory(time.Duration) (AllocatorSettings, error) { return AllocatorSettings{}, nil }
