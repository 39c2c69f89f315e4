package main

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/duckstream"
	"github.com/meterstore/meterstore/internal/telemetry"
)

// keptIdleFor is how long a statement kept prepared, or a hot scan's
// buffers kept for the next scan, may go untaken before msql serve closes or
// drops it (engine.CloseIdleStatements), checked every idleCheckEvery. A
// burst of concurrent clients leaves one statement per client and plan kept,
// each on a DuckDB connection of its own, and up to four scans' page buffers
// sized for the largest page read (tens of MB of the Go heap after
// whole-tier reads); within a minute the clients of a steady load take them
// again.
const keptIdleFor = time.Minute

// closeIdleStatements closes the statements and drops the scan buffers kept
// idle for keptIdleFor, every idleCheckEvery until ctx ends, logging how
// many at debug level, and gives back what they held: DuckDB's freed pages (purged now) and the Go heap's
// (debug.FreeOSMemory — the idle release of the Go heap ran before them, a
// minute earlier, and would not run again until the server was busy). Each
// check also turns DuckDB's allocator's background threads on again if a
// database's open or close turned them off (keepReturningFreedMemory).
func closeIdleStatements(ctx context.Context, eng *engine.Engine, log *slog.Logger) {
	everyIdleCheck(ctx, func() {
		keepReturningFreedMemory(log, duckstream.KeepReturningFreedMemory)
		if n := eng.CloseIdleStatements(keptIdleFor); n > 0 {
			log.Debug("kept statements and scan buffers released", "released", n, "idle_for", keptIdleFor.String())
			if err := duckstream.PurgeFreedMemory(); err != nil {
				log.Debug("duckdb allocator not purged", "err", err.Error())
			}
			debug.FreeOSMemory()
		}
	})
}

// keepReturningFreedMemory turns DuckDB's allocator's background threads on
// again where a DuckDB database's open or close turned them off for the
// whole process (restore: duckstream.KeepReturningFreedMemory), logged when it had
// to. The engine does so after the closes it makes; this catches any other.
func keepReturningFreedMemory(log *slog.Logger, restore func() (bool, error)) {
	on, err := restore()
	switch {
	case err != nil:
		log.Warn("duckdb allocator", "err", err.Error(), "rule", "a database's open or close turned the background threads off; memory DuckDB frees goes back only while DuckDB allocates")
	case on:
		log.Info("duckdb allocator", "background_threads", true, "rule", "turned on again after a DuckDB database's open or close turned them off")
	}
}

// keyDatabase names the DuckDB database a gauge describes: "engine" or
// "confined scope=…" (engine.DatabaseMemory).
const keyDatabase = attribute.Key("meterstore.duckdb.database")

// observeDuckDBMemory has /metrics show, at each scrape, DuckDB's own
// account of each database it serves (duckdb_memory() by tag, spilled
// bytes, statements kept prepared) and what DuckDB's allocator holds for
// the whole process — the part of msql serve's resident memory the Go
// runtime's metrics do not show. The returned function unregisters them.
func observeDuckDBMemory(eng *engine.Engine, log *slog.Logger) (unregister func()) {
	m := telemetry.MeterProvider().Meter(telemetry.ScopeName)
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, _ := m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		return g
	}
	var (
		used = gauge("meterstore.duckdb.memory", "By",
			"Bytes DuckDB's buffer manager holds in a database, by duckdb_memory() tag (kept statements' plans and connections are not in it).")
		temp = gauge("meterstore.duckdb.temporary_storage", "By",
			"Bytes a DuckDB database spilled to its temporary directory.")
		kept = gauge("meterstore.duckdb.kept_statements", "{statement}",
			"Statements a DuckDB database keeps prepared between runs, each on a connection of its own; closed after a minute untaken.")
		allocated = gauge("meterstore.duckdb.allocator.allocated", "By",
			"Bytes DuckDB's allocator (jemalloc) has allocated to DuckDB, every database of the process, buffer-managed or not.")
		resident = gauge("meterstore.duckdb.allocator.resident", "By",
			"Bytes DuckDB's allocator keeps resident: its allocations, its metadata and freed pages not yet returned to the system.")
	)
	reg, err := m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		held, err := eng.HeldMemory(ctx)
		if err != nil {
			log.Debug("duckdb memory not read", "err", err.Error())
		}
		for _, db := range held {
			attrs := metric.WithAttributes(keyDatabase.String(db.Database))
			o.ObserveInt64(kept, int64(db.KeptStatements), attrs)
			o.ObserveInt64(temp, db.TemporaryBytes, attrs)
			for tag, bytes := range db.Tags {
				o.ObserveInt64(used, bytes, metric.WithAttributes(keyDatabase.String(db.Database), attribute.String("tag", tag)))
			}
		}
		if a, r, err := duckstream.AllocatorUse(); err == nil {
			o.ObserveInt64(allocated, a)
			o.ObserveInt64(resident, r)
		}
		return nil
	}, used, temp, kept, allocated, resident)
	if err != nil {
		log.Warn("duckdb memory gauges not registered", "err", err.Error())
		return func() {}
	}
	return func() { _ = reg.Unregister() }
}
