//go:build linux && cgo && (amd64 || arm64)

package duckstream

/*
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

int duckdb_je_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

static int meterstore_je_set_ssize(const char *name, ssize_t v) {
	return duckdb_je_mallctl(name, NULL, NULL, &v, sizeof(v));
}

// meterstore_je_return_freed sets the decay of dirty pages (muzzy: none) of
// the arenas created from now on and of those that exist, and turns the
// background threads on: 0, or the step that failed (1 to 3).
static int meterstore_je_return_freed(ssize_t dirty_ms) {
	if (meterstore_je_set_ssize("arenas.dirty_decay_ms", dirty_ms) != 0) return 1;
	if (meterstore_je_set_ssize("arenas.muzzy_decay_ms", 0) != 0) return 2;
	unsigned n = 0;
	size_t len = sizeof(n);
	if (duckdb_je_mallctl("arenas.narenas", &n, &len, NULL, 0) == 0) {
		char name[64];
		for (unsigned i = 0; i < n; i++) {
			// an arena not in use yet refuses; it takes the arenas.* defaults
			snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", i);
			meterstore_je_set_ssize(name, dirty_ms);
			snprintf(name, sizeof(name), "arena.%u.muzzy_decay_ms", i);
			meterstore_je_set_ssize(name, 0);
		}
	}
	bool on = true;
	if (duckdb_je_mallctl("background_thread", NULL, NULL, &on, sizeof(on)) != 0) return 3;
	return 0;
}

// meterstore_je_read reads what arenas created from now on get and whether
// background threads run: 0, or the read that failed.
static int meterstore_je_read(ssize_t *dirty_ms, ssize_t *muzzy_ms, bool *background) {
	size_t len = sizeof(ssize_t);
	if (duckdb_je_mallctl("arenas.dirty_decay_ms", dirty_ms, &len, NULL, 0) != 0) return 1;
	len = sizeof(ssize_t);
	if (duckdb_je_mallctl("arenas.muzzy_decay_ms", muzzy_ms, &len, NULL, 0) != 0) return 2;
	len = sizeof(bool);
	if (duckdb_je_mallctl("background_thread", background, &len, NULL, 0) != 0) return 3;
	return 0;
}

// meterstore_je_stats refreshes jemalloc's statistics and reads the bytes
// allocated to DuckDB and those resident for it: 0, or the read that failed.
static int meterstore_je_stats(size_t *allocated, size_t *resident) {
	uint64_t epoch = 1;
	size_t len = sizeof(epoch);
	if (duckdb_je_mallctl("epoch", &epoch, &len, &epoch, len) != 0) return 1;
	len = sizeof(size_t);
	if (duckdb_je_mallctl("stats.allocated", allocated, &len, NULL, 0) != 0) return 2;
	len = sizeof(size_t);
	if (duckdb_je_mallctl("stats.resident", resident, &len, NULL, 0) != 0) return 3;
	return 0;
}

// meterstore_je_purge returns every arena's freed pages to the system now
// (MALLCTL_ARENAS_ALL is 4096).
static int meterstore_je_purge(void) {
	return duckdb_je_mallctl("arena.4096.purge", NULL, NULL, NULL, 0);
}
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"time"
)

// settingNames are the jemalloc settings meterstore_je_return_freed and
// meterstore_je_read name by their nonzero return codes.
var settingNames = [...]string{"", "arenas.dirty_decay_ms", "arenas.muzzy_decay_ms", "background_thread"}

// returnedAfter is the dirty decay ReturnFreedMemory last set, in
// milliseconds; -1 while it has not been called in this process.
var returnedAfter atomic.Int64

func init() { returnedAfter.Store(-1) }

// ReturnFreedMemory has DuckDB's allocator (jemalloc, linked into DuckDB on
// Linux) give the pages DuckDB frees back to the system dirtyDecay after
// they were freed, from background threads, skipping jemalloc's second,
// "muzzy" stage, and returns the settings as the allocator reads them back.
// With DuckDB's defaults jemalloc purges only while DuckDB allocates, so what
// a burst of statements freed stays resident while a server idles. It
// applies to the arenas in use and to those created later. A DuckDB database
// that opens or closes turns the background threads off for the whole
// process (DuckDB applies the new database's allocator_background_threads,
// and its destructor turns them off): KeepReturningFreedMemory after either.
func ReturnFreedMemory(dirtyDecay time.Duration) (AllocatorSettings, error) {
	if rc := C.meterstore_je_return_freed(C.ssize_t(dirtyDecay.Milliseconds())); rc != 0 {
		return AllocatorSettings{}, fmt.Errorf("DuckDB's allocator (jemalloc) refused %s", settingNames[rc])
	}
	returnedAfter.Store(dirtyDecay.Milliseconds())
	return Allocator()
}

// Allocator reads how DuckDB's allocator gives freed memory back as it
// reports it now.
func Allocator() (AllocatorSettings, error) {
	var dirty, muzzy C.ssize_t
	var background C.bool
	if rc := C.meterstore_je_read(&dirty, &muzzy, &background); rc != 0 {
		return AllocatorSettings{}, fmt.Errorf("DuckDB's allocator (jemalloc) did not report %s", settingNames[rc])
	}
	return AllocatorSettings{Jemalloc: true, DirtyDecay: time.Duration(dirty) * time.Millisecond,
		MuzzyDecay: time.Duration(muzzy) * time.Millisecond, BackgroundThreads: bool(background)}, nil
}

// KeepReturningFreedMemory turns the allocator's background threads on
// again if ReturnFreedMemory set them and a DuckDB database's open or close
// turned them off since (for the whole process, whichever database: a
// confined database opened at a server's first walled statement or closed to
// make room, the short-lived one that reads DuckDB's function list). Without
// them the pages DuckDB frees go back only while DuckDB allocates, so an
// idling server keeps them. It reports whether it turned them on; before ReturnFreedMemory it
// does nothing.
func KeepReturningFreedMemory() (bool, error) {
	if returnedAfter.Load() < 0 {
		return false, nil
	}
	got, err := Allocator()
	if err != nil || got.BackgroundThreads {
		return false, err
	}
	if _, err := ReturnFreedMemory(time.Duration(returnedAfter.Load()) * time.Millisecond); err != nil {
		return false, err
	}
	return true, nil
}

// AllocatorUse is how many bytes DuckDB's allocator has allocated to DuckDB
// (live objects: every DuckDB database of the process, buffer-managed or
// not) and how many it keeps resident for them (those plus its own
// metadata and freed pages not yet returned).
func AllocatorUse() (allocated, resident int64, err error) {
	steps := [...]string{"", "epoch", "stats.allocated", "stats.resident"}
	var a, r C.size_t
	if rc := C.meterstore_je_stats(&a, &r); rc != 0 {
		return 0, 0, fmt.Errorf("DuckDB's allocator (jemalloc) did not report %s", steps[rc])
	}
	return int64(a), int64(r), nil
}

// PurgeFreedMemory has DuckDB's allocator return the pages DuckDB freed to
// the system now, in every arena, rather than as its decay paces it: after
// a server closed what it kept for a burst it idles, and the decay runs
// only as far as the background threads get to it.
func PurgeFreedMemory() error {
	if C.meterstore_je_purge() != 0 {
		return fmt.Errorf("DuckDB's allocator (jemalloc) refused arena.all.purge")
	}
	return nil
}
