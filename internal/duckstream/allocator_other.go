//go:build !(linux && cgo && (amd64 || arm64))

package duckstream

import (
	"errors"
	"time"
)

// ReturnFreedMemory does nothing where DuckDB uses the system's allocator
// (not Linux): that allocator returns freed pages by its own rules.
func ReturnFreedMemory(time.Duration) (AllocatorSettings, error) { return AllocatorSettings{}, nil }

// AllocatorUse reports nothing where DuckDB uses the system's allocator.
func AllocatorUse() (allocated, resident int64, err error) {
	return 0, 0, errors.New("DuckDB's allocator reports no statistics on this platform")
}

// PurgeFreedMemory does nothing where DuckDB uses the system's allocator.
func PurgeFreedMemory() error { return nil }

// Allocator reports nothing where DuckDB uses the system's allocator.
func Allocator() (AllocatorSettings, error) { return AllocatorSettings{}, nil }

// KeepReturningFreedMemory does nothing where DuckDB uses the system's
// allocator.
func KeepReturningFreedMemory() (bool, error) { return false, nil }
