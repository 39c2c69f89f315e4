package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
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
