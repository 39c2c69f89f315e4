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
// msql serve's Go heap is then held to its share of it (limitServedHeap).
func (f *deployFlags) budgetMemory(ctx context.Context, d *deployment) {
	if f.memoryLimit != "" {
		d.memory = f.memoryLimit
	}
	if !f.serverBudget {
		return
	}
	if d.memory == "" {
		defaultBudget(ctx, d)
	}
	limitServedHeap(d)
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

// limitGoHeap sets the Go heap's soft limit from the DuckDB memory budget
// (goHeapShare of it) and returns it; GOMEMLIMIT in the environment wins (the
// runtime read it at start), and a budget that is unset or not a size
// (sizeBytes) leaves the runtime's default. ok reports whether a limit was set.
func limitGoHeap(budget string) (limit int64, ok bool) {
	if os.Getenv("GOMEMLIMIT") != "" || budget == "" {
		return 0, false
	}
	n, err := sizeBytes(budget)
	if err != nil {
		return 0, false
	}
	limit = max(n/goHeapShare, minGoHeapLimit)
	debug.SetMemoryLimit(limit)
	return limit, true
}

// sizeUnits are the units DuckDB's memory_limit takes, in bytes (case does not matter).
var sizeUnits = map[string]float64{
	"b": 1, "byte": 1, "bytes": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	"kilobyte": 1e3, "kilobytes": 1e3, "megabyte": 1e6, "megabytes": 1e6,
	"gigabyte": 1e9, "gigabytes": 1e9, "terabyte": 1e12, "terabytes": 1e12,
}

// sizeBytes reads a memory_limit such as "4GB", "512 MiB" or "1.5GB" in bytes.
func sizeBytes(size string) (int64, error) {
	s := strings.TrimSpace(size)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, fmt.Errorf("memory size %q: a number and a unit, e.g. 4GB", size)
	}
	n, err := strconv.ParseFloat(s[:i], 64)
	unit, known := sizeUnits[strings.ToLower(strings.TrimSpace(s[i:]))]
	if err != nil || !known || n <= 0 {
		return 0, fmt.Errorf("memory size %q: a positive number and a unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. 4GB", size)
	}
	return int64(n * unit), nil
}

// limitServedHeap holds msql serve's Go heap to its share of the settled
// budget (limitGoHeap), logged.
func limitServedHeap(d *deployment) {
	limit, ok := limitGoHeap(d.memory)
	if ok && d.log != nil {
		d.log.Info("go heap limit", "bytes", limit, "memory_limit", d.memory,
			"rule", "a quarter of memory_limit, at least 64 MiB; GOMEMLIMIT in the environment overrides it")
	}
}
