// Package telemetry holds MeterStore's metric instruments. They record through
// the OpenTelemetry metric API and are a no-op until the process installs an
// SDK (the seeds' rule): an embedding Go job sets a global MeterProvider, msql's
// long-running processes call Use with the Prometheus exporter's provider.
//
// Every record is one call per statement, per write call or per maintenance
// run, never per row: the callers tally what they already iterate and hand the
// counts over. Names and units follow the OpenTelemetry semantic conventions'
// style (seconds for durations, {row} annotations, per-surface attributes);
// where a convention exists for the thing measured (http.server.* for the
// Iceberg REST façade) the façade uses it directly.
//
// Per-table state (watermark, lag, hot rows, invariant violations, cold files)
// is not recorded here but published as a sampled snapshot (PublishTables) and
// observed by gauges at collection time, so a scrape never costs a round trip
// to either tier by itself.
package telemetry

import (
	"context"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the instrumentation scope of every instrument here.
const ScopeName = "meterstore"

// Attribute keys.
const (
	KeyTable   = attribute.Key("meterstore.table")
	KeySurface = attribute.Key("meterstore.surface")
	KeyOutcome = attribute.Key("meterstore.outcome")
	KeyTiers   = attribute.Key("meterstore.tiers")
	KeyMode    = attribute.Key("meterstore.read_mode")
	KeyResolve = attribute.Key("meterstore.resolution")
	KeyTier    = attribute.Key("meterstore.tier")
	KeyEffect  = attribute.Key("meterstore.effect")
	KeyRule    = attribute.Key("meterstore.rule")
	KeyTask    = attribute.Key("meterstore.task")
	KeyLease   = attribute.Key("meterstore.lease.result")
	KeyChange  = attribute.Key("meterstore.change")
)

// Surfaces a statement arrives through.
const (
	PGWire    = "pgwire"
	FlightSQL = "flightsql"
	REST      = "rest"
	InProcess = "in-process"
)

// Outcomes of a statement, a write or a maintenance run.
const (
	OK        = "ok"
	Error     = "error"
	Cancelled = "cancelled"
	// Refused: the input broke a rule (not a query, a write through a read-only
	// surface, a restatement, a wrong check digit) — the caller's to fix.
	Refused = "refused"
	// Contended: another process held the table's archiver lease; normal.
	Contended = "contended"
)

// Maintenance tasks.
const (
	Archival      = "archival"
	Expiry        = "expiry"
	OrphanCleanup = "orphan_cleanup"
	Compaction    = "compaction"
)

// Bucket boundaries: the semantic conventions' advice for
// db.client.operation.duration and db.client.response.returned_rows, with a
// longer tail for maintenance runs, which take minutes.
var (
	durationBuckets    = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}
	rowBuckets         = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}
	maintenanceBuckets = []float64{0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 1800, 3600}
)

type instruments struct {
	provider metric.MeterProvider

	stmtDuration  metric.Float64Histogram
	stmtRows      metric.Int64Histogram
	stmtColdFiles metric.Int64Counter

	writeDuration metric.Float64Histogram
	writeRows     metric.Int64Counter
	writeRerouted metric.Int64Counter
	writeRefusals metric.Int64Counter

	runDuration     metric.Float64Histogram
	runLast         metric.Float64Gauge
	runLastDuration metric.Float64Gauge
	leaseAttempts   metric.Int64Counter
	archivedRows    metric.Int64Counter
	archivedBytes   metric.Int64Counter
	archivedWindows metric.Int64Counter
	expired         metric.Int64Counter
	orphans         metric.Int64Counter
	compactedFiles  metric.Int64Counter
	compactedRows   metric.Int64Counter

	registration metric.Registration
}

var current atomic.Pointer[instruments]

func init() { current.Store(newInstruments(otel.GetMeterProvider())) }

// Use records into mp from now on, until the returned restore puts back what
// was used before. msql's long-running processes call it with the Prometheus
// exporter's provider; an embedding Go job need not: the instruments follow
// the global MeterProvider (otel.SetMeterProvider) by default.
func Use(mp metric.MeterProvider) (restore func()) {
	next := newInstruments(mp)
	prev := current.Swap(next)
	return func() {
		if current.CompareAndSwap(next, prev) && next.registration != nil {
			_ = next.registration.Unregister()
		}
	}
}

// MeterProvider is the provider instruments record into now, for libraries
// that build their own instruments (the REST façade's HTTP middleware).
func MeterProvider() metric.MeterProvider { return current.Load().provider }

func newInstruments(mp metric.MeterProvider) *instruments {
	m := mp.Meter(ScopeName)
	in := &instruments{provider: mp}
	// An instrument the SDK refuses comes back as a working no-op alongside
	// the error; metrics never stop a statement, so the errors are dropped.
	in.stmtDuration, _ = m.Float64Histogram("meterstore.statement.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of statements, by surface and outcome, from arrival to the last row sent."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.stmtRows, _ = m.Int64Histogram("meterstore.statement.returned_rows", metric.WithUnit("{row}"),
		metric.WithDescription("Rows returned per statement."), metric.WithExplicitBucketBoundaries(rowBuckets...))
	in.stmtColdFiles, _ = m.Int64Counter("meterstore.statement.cold_files", metric.WithUnit("{file}"),
		metric.WithDescription("Cold files statements read, by whether statistics proved resolution unnecessary (elided) or it ran (applied)."))

	in.writeDuration, _ = m.Float64Histogram("meterstore.write.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of write calls (Append, HotWriter.Append, AppendReadings, AppendAuthoritative), by outcome."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.writeRows, _ = m.Int64Counter("meterstore.write.rows", metric.WithUnit("{row}"),
		metric.WithDescription("Rows written, by tier (cold = late corrections routed to Iceberg) and displacement effect."))
	in.writeRerouted, _ = m.Int64Counter("meterstore.write.rerouted", metric.WithUnit("{row}"),
		metric.WithDescription("Rows a write re-sent to Iceberg because an archival moved the boundary during the write."))
	in.writeRefusals, _ = m.Int64Counter("meterstore.write.refusals", metric.WithUnit("{write}"),
		metric.WithDescription("Write calls refused, by the rule the input broke."))

	in.runDuration, _ = m.Float64Histogram("meterstore.maintenance.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of maintenance runs per table, by task and outcome."),
		metric.WithExplicitBucketBoundaries(maintenanceBuckets...))
	in.runLast, _ = m.Float64Gauge("meterstore.maintenance.last_run", metric.WithUnit("s"),
		metric.WithDescription("When the last maintenance run of a task on a table ended, by outcome (Unix time)."))
	in.runLastDuration, _ = m.Float64Gauge("meterstore.maintenance.last_run.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of the last maintenance run of a task on a table, by outcome."))
	in.leaseAttempts, _ = m.Int64Counter("meterstore.archival.lease.attempts", metric.WithUnit("{attempt}"),
		metric.WithDescription("Attempts to take a table's archiver lease, won or contended (another replica archives)."))
	in.archivedRows, _ = m.Int64Counter("meterstore.archival.rows", metric.WithUnit("{row}"),
		metric.WithDescription("Rows archival moved from PostgreSQL to Iceberg."))
	in.archivedBytes, _ = m.Int64Counter("meterstore.archival.bytes", metric.WithUnit("By"),
		metric.WithDescription("Bytes of Parquet archival committed to Iceberg."))
	in.archivedWindows, _ = m.Int64Counter("meterstore.archival.windows", metric.WithUnit("{window}"),
		metric.WithDescription("Windows archival committed (each moves the watermark one step)."))
	in.expired, _ = m.Int64Counter("meterstore.expiry.snapshots", metric.WithUnit("{snapshot}"),
		metric.WithDescription("Iceberg snapshots expired."))
	in.orphans, _ = m.Int64Counter("meterstore.orphan_cleanup.files", metric.WithUnit("{file}"),
		metric.WithDescription("Unreferenced files orphan cleanup deleted from the warehouse."))
	in.compactedFiles, _ = m.Int64Counter("meterstore.compaction.files", metric.WithUnit("{file}"),
		metric.WithDescription("Cold files compaction removed and added."))
	in.compactedRows, _ = m.Int64Counter("meterstore.compaction.rows", metric.WithUnit("{row}"),
		metric.WithDescription("Rows compaction rewrote."))
	in.registration = registerTableGauges(m)
	return in
}

// Statement is one statement's record.
type Statement struct {
	Surface  string
	Outcome  string
	Duration time.Duration
	Rows     int64
	// Tiers and Mode as provenance names them; empty when the statement
	// failed before it was planned.
	Tiers, Mode string
	// ColdFiles were read; ResolvedFiles of them through resolution.
	ColdFiles, ResolvedFiles int
}

// RecordStatement records one statement.
func RecordStatement(ctx context.Context, s Statement) {
	in := current.Load()
	attrs := []attribute.KeyValue{KeySurface.String(s.Surface), KeyOutcome.String(s.Outcome)}
	if s.Tiers != "" {
		attrs = append(attrs, KeyTiers.String(s.Tiers), KeyMode.String(s.Mode))
	}
	set := metric.WithAttributeSet(attribute.NewSet(attrs...))
	in.stmtDuration.Record(ctx, s.Duration.Seconds(), set)
	in.stmtRows.Record(ctx, s.Rows, set)
	surface := KeySurface.String(s.Surface)
	if n := s.ColdFiles - s.ResolvedFiles; n > 0 {
		in.stmtColdFiles.Add(ctx, int64(n), metric.WithAttributes(surface, KeyResolve.String("elided")))
	}
	if s.ResolvedFiles > 0 {
		in.stmtColdFiles.Add(ctx, int64(s.ResolvedFiles), metric.WithAttributes(surface, KeyResolve.String("applied")))
	}
}

// Effects tallies written rows by tier and effect; the index is the effect's
// value (meterstore.Effect: 1 Inserted … 4 Duplicate).
type Effects struct{ Hot, Cold [5]int64 }

var effectNames = [5]string{"", "inserted", "superseded", "shadowed", "duplicate"}

// Add adds o's counts.
func (e *Effects) Add(o Effects) {
	for i := range e.Hot {
		e.Hot[i] += o.Hot[i]
		e.Cold[i] += o.Cold[i]
	}
}

// Write is one write call's record.
type Write struct {
	Table    string
	Outcome  string
	Rule     string // the rule a refused write broke
	Duration time.Duration
	Rows     Effects
	Rerouted int64
}

// RecordWrite records one write call.
func RecordWrite(ctx context.Context, w Write) {
	in := current.Load()
	table := KeyTable.String(w.Table)
	in.writeDuration.Record(ctx, w.Duration.Seconds(), metric.WithAttributes(table, KeyOutcome.String(w.Outcome)))
	for _, tier := range [2]struct {
		name   string
		counts *[5]int64
	}{{"hot", &w.Rows.Hot}, {"cold", &w.Rows.Cold}} {
		for e, n := range tier.counts {
			if n > 0 {
				in.writeRows.Add(ctx, n, metric.WithAttributes(table, KeyTier.String(tier.name), KeyEffect.String(effectNames[e])))
			}
		}
	}
	if w.Rerouted > 0 {
		in.writeRerouted.Add(ctx, w.Rerouted, metric.WithAttributes(table))
	}
	if w.Outcome == Refused {
		in.writeRefusals.Add(ctx, 1, metric.WithAttributes(table, KeyRule.String(w.Rule)))
	}
}

// Run is one maintenance run of one task on one table.
type Run struct {
	Table    string
	Task     string
	Outcome  string
	Ended    time.Time
	Duration time.Duration
	// Archival: windows committed, their rows and bytes.
	Windows, Rows, Bytes int64
	// Expiry: snapshots removed; orphan cleanup: files deleted; compaction:
	// files removed and added, rows rewritten.
	Snapshots, Orphans, FilesRemoved, FilesAdded int64
}

// RecordRun records one maintenance run. An archival run also counts its
// lease attempt: won unless the outcome is Contended.
func RecordRun(ctx context.Context, r Run) {
	in := current.Load()
	table := KeyTable.String(r.Table)
	set := metric.WithAttributes(table, KeyTask.String(r.Task), KeyOutcome.String(r.Outcome))
	in.runDuration.Record(ctx, r.Duration.Seconds(), set)
	in.runLast.Record(ctx, float64(r.Ended.UnixNano())/1e9, set)
	in.runLastDuration.Record(ctx, r.Duration.Seconds(), set)
	if r.Task == Archival && r.Outcome != Error {
		result := "won"
		if r.Outcome == Contended {
			result = "contended"
		}
		in.leaseAttempts.Add(ctx, 1, metric.WithAttributes(table, KeyLease.String(result)))
	}
	add := func(c metric.Int64Counter, n int64, extra ...attribute.KeyValue) {
		if n > 0 {
			c.Add(ctx, n, metric.WithAttributes(append(extra, table)...))
		}
	}
	switch r.Task {
	case Archival:
		add(in.archivedWindows, r.Windows)
		add(in.archivedRows, r.Rows)
		add(in.archivedBytes, r.Bytes)
	case Expiry:
		add(in.expired, r.Snapshots)
	case OrphanCleanup:
		add(in.orphans, r.Orphans)
	case Compaction:
		add(in.compactedFiles, r.FilesRemoved, KeyChange.String("removed"))
		add(in.compactedFiles, r.FilesAdded, KeyChange.String("added"))
		add(in.compactedRows, r.Rows)
	}
}
