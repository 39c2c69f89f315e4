package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/meterstore/meterstore/internal/duckstream"
)

// minMemoryBudget is the least memory_limit the default gives DuckDB: below
// it every statement that reads both tiers would be refused.
const minMemoryBudget = 256 << 20

// serverMemoryBudget is msql serve's default DuckDB memory_limit: half of
// what the machine (or its container) has beside PostgreSQL's shared_buffers.
// PostgreSQL's share is subtracted even when it runs elsewhere; DuckDB's own
// default, 80 % of the machine per database, would leave it nothing. ok is
// false where the machine's memory cannot be read (not Linux): DuckDB's
// default then applies.
func serverMemoryBudget(ctx context.Context, pool *pgxpool.Pool) (limit string, machine, shared int64, ok bool) {
	machine, ok = machineMemory()
	if !ok {
		return "", 0, 0, false
	}
	// pg_size_bytes reads the setting with its unit, whatever the block size.
	if err := pool.QueryRow(ctx, "SELECT pg_size_bytes(current_setting('shared_buffers'))").Scan(&shared); err != nil {
		shared = 0
	}
	budget := max((machine-shared)/2, minMemoryBudget)
	return fmt.Sprintf("%dMB", budget/1_000_000), machine, shared, true
}

// machineMemory is the memory this process may use: the machine's, or its
// cgroup's limit where that is lower (a container).
func machineMemory() (int64, bool) {
	total, ok := memTotal()
	if !ok {
		return 0, false
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && v < total {
			total = v
		}
	}
	return total, true
}

// memTotal is /proc/meminfo's MemTotal in bytes.
func memTotal() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, found := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !found {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		return kb << 10, err == nil && kb > 0
	}
	return 0, false
}

// budgetMemory settles the deployment's DuckDB memory_limit: --memory-limit,
// else [engine] memory_limit, else (msql serve) serverMemoryBudget, logged.
// Once the engine is open, msql serve holds its Go heap to its share of the
// limit as DuckDB read it (limitServedHeap).
func (f *deployFlags) budgetMemory(ctx context.Context, d *deployment) {
	if f.memoryLimit != "" {
		d.memory = f.memoryLimit
	}
	if f.serverBudget && d.memory == "" {
		defaultBudget(ctx, d)
	}
}

// defaultBudget is msql serve's budget where none is configured, logged.
func defaultBudget(ctx context.Context, d *deployment) {
	limit, machine, shared, ok := serverMemoryBudget(ctx, d.pool)
	if !ok {
		return
	}
	d.memory = limit
	if d.log != nil {
		d.log.Info("memory budget", "memory_limit", limit, "machine_bytes", machine, "shared_buffers_bytes", shared,
			"rule", "half of the machine's memory beside PostgreSQL's shared_buffers; [engine] memory_limit or --memory-limit sets it")
	}
}

// goHeapShare is the part of the memory budget msql serve's Go heap is held
// to (its soft limit, debug.SetMemoryLimit): a quarter of DuckDB's
// memory_limit, at least minGoHeapLimit. The Go heap holds what crosses the
// wire (pgwire and Flight buffers, hot scan pages); without a limit its
// garbage grew until the collector's next doubling, whatever the budget.
const goHeapShare = 4

// minGoHeapLimit keeps a small budget from making the collector run
// continuously.
const minGoHeapLimit = 64 << 20

// limitGoHeap sets the Go heap's soft limit to goHeapShare of budget, DuckDB's
// memory_limit in bytes, at least minGoHeapLimit, and returns it; GOMEMLIMIT
// in the environment wins (the runtime read it at start). ok reports whether
// a limit was set.
func limitGoHeap(budget int64) (limit int64, ok bool) {
	if os.Getenv("GOMEMLIMIT") != "" || budget <= 0 {
		return 0, false
	}
	limit = max(budget/goHeapShare, minGoHeapLimit)
	debug.SetMemoryLimit(limit)
	return limit, true
}

// limitServedHeap holds msql serve's Go heap to its share of the engine's
// memory_limit as DuckDB read it (engine.MemoryLimit: whatever notation
// configured it, or DuckDB's default where none did), logged.
func limitServedHeap(ctx context.Context, d *deployment) error {
	budget, err := d.engine.MemoryLimit(ctx)
	if err != nil {
		return fmt.Errorf("go heap limit: %w", err)
	}
	limit, ok := limitGoHeap(budget)
	if ok && d.log != nil {
		d.log.Info("go heap limit", "bytes", limit, "memory_limit_bytes", budget,
			"rule", "a quarter of memory_limit, at least 64 MiB; GOMEMLIMIT in the environment overrides it")
	}
	return nil
}

// freedMemoryDecay is how long after DuckDB freed memory msql serve's DuckDB
// allocator gives it back to the system (duckstream.ReturnFreedMemory): with
// DuckDB's defaults what a burst of concurrent statements freed stays
// resident while the server idles.
const freedMemoryDecay = time.Second

// returnFreedMemory has DuckDB's allocator give freed memory back to the
// system freedMemoryDecay after (set: duckstream.ReturnFreedMemory), logged
// as the allocator reports it. An allocator that refuses is a warning, not a
// reason to stop serving: it only keeps more memory resident.
func returnFreedMemory(log *slog.Logger, set func(time.Duration) (duckstream.AllocatorSettings, error)) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	got, err := set(freedMemoryDecay)
	if err != nil {
		log.Warn("duckdb allocator", "err", err, "rule", "memory DuckDB frees is given back to the system only while DuckDB allocates; RSS stays higher after a burst of statements")
		return
	}
	log.Info("duckdb allocator", "jemalloc", got.Jemalloc, "dirty_decay", got.DirtyDecay, "muzzy_decay", got.MuzzyDecay,
		"background_threads", got.BackgroundThreads, "rule", "memory DuckDB freed goes back to the system a second later, idle or not")
}

// idleCheckEvery is how often msql serve looks whether it idles, and
// idleAllocBytes the Go allocation over such a period below which it does.
const (
	idleCheckEvery = 10 * time.Second
	idleAllocBytes = 4 << 20
)

// goHeapIdleRelease gives the Go heap's free memory back to the system once
// a server goes idle (debug.FreeOSMemory: a collection, then every free page
// returned). Go returns it on its own only after its periodic collection,
// two minutes or more later, and keeps the heap's last goal — twice the live
// heap at the busiest collection — until then.
type goHeapIdleRelease struct {
	lastAllocs uint64
	released   bool // since the server last allocated more than idleAllocBytes in a period
}

// idle reports whether, with allocs the Go heap's allocations so far, the
// period since the last call was idle and nothing has been released since
// the server was last busy — then it is marked released.
func (r *goHeapIdleRelease) idle(allocs uint64) bool {
	busy := allocs-r.lastAllocs >= idleAllocBytes
	r.lastAllocs = allocs
	if busy {
		r.released = false
		return false
	}
	if r.released {
		return false
	}
	r.released = true
	return true
}

// releaseGoHeapWhenIdle checks every idleCheckEvery until ctx ends.
func releaseGoHeapWhenIdle(ctx context.Context) {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	var r goHeapIdleRelease
	everyIdleCheck(ctx, func() {
		metrics.Read(sample)
		if r.idle(sample[0].Value.Uint64()) {
			debug.FreeOSMemory()
		}
	})
}

// everyIdleCheck calls check every idleCheckEvery until ctx ends.
func everyIdleCheck(ctx context.Context, check func()) {
	t := time.NewTicker(idleCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		check()
	}
}
