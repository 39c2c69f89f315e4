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
	b := builder{m: mp.Meter(ScopeName)}
	return &instruments{
		provider: mp,

		stmtDuration: b.histogram("meterstore.statement.duration", "s", durationBuckets,
			"Duration of statements, by surface and outcome, from arrival to the last row sent."),
		stmtRows: b.intHistogram("meterstore.statement.returned_rows", "{row}", rowBuckets,
			"Rows returned per statement."),
		stmtColdFiles: b.counter("meterstore.statement.cold_files", "{file}",
			"Cold files statements read, by whether statistics proved resolution unnecessary (elided) or it ran (applied)."),

		writeDuration: b.histogram("meterstore.write.duration", "s", durationBuckets,
			"Duration of write calls (Append, HotWriter.Append, AppendReadings, AppendAuthoritative), by outcome."),
		writeRows: b.counter("meterstore.write.rows", "{row}",
			"Rows written, by tier (cold = late corrections routed to Iceberg) and displacement effect."),
		writeRerouted: b.counter("meterstore.write.rerouted", "{row}",
			"Rows a write re-sent to Iceberg because an archival moved the boundary during the write."),
		writeRefusals: b.counter("meterstore.write.refusals", "{write}",
			"Write calls refused, by the rule the input broke."),

		runDuration: b.histogram("meterstore.maintenance.duration", "s", maintenanceBuckets,
			"Duration of maintenance runs per table, by task and outcome."),
		runLast: b.gauge("meterstore.maintenance.last_run", "s",
			"When the last maintenance run of a task on a table ended, by outcome (Unix time)."),
		runLastDuration: b.gauge("meterstore.maintenance.last_run.duration", "s",
			"Duration of the last maintenance run of a task on a table, by outcome."),
		leaseAttempts: b.counter("meterstore.archival.lease.attempts", "{attempt}",
			"Attempts to take a table's archiver lease, won or contended (another replica archives)."),
		archivedRows: b.counter("meterstore.archival.rows", "{row}",
			"Rows archival moved from PostgreSQL to Iceberg."),
		archivedBytes: b.counter("meterstore.archival.bytes", "By",
			"Bytes of Parquet archival committed to Iceberg."),
		archivedWindows: b.counter("meterstore.archival.windows", "{window}",
			"Windows archival committed (each moves the watermark one step)."),
		expired: b.counter("meterstore.expiry.snapshots", "{snapshot}",
			"Iceberg snapshots expired."),
		orphans: b.counter("meterstore.orphan_cleanup.files", "{file}",
			"Unreferenced files orphan cleanup deleted from the warehouse."),
		compactedFiles: b.counter("meterstore.compaction.files", "{file}",
			"Cold files compaction removed and added."),
		compactedRows: b.counter("meterstore.compaction.rows", "{row}",
			"Rows compaction rewrote."),

		registration: registerTableGauges(b),
	}
}

// builder creates instruments on one meter. An instrument the SDK refuses
// comes back as a working no-op alongside the error; metrics never stop a
// statement, so the errors are dropped.
type builder struct{ m metric.Meter }

func (b builder) counter(name, unit, desc string) metric.Int64Counter {
	c, _ := b.m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	return c
}

func (b builder) histogram(name, unit string, bounds []float64, desc string) metric.Float64Histogram {
	h, _ := b.m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(bounds...))
	return h
}

func (b builder) intHistogram(name, unit string, bounds []float64, desc string) metric.Int64Histogram {
	h, _ := b.m.Int64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(bounds...))
	return h
}

func (b builder) gauge(name, unit, desc string) metric.Float64Gauge {
	g, _ := b.m.Float64Gauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	return g
}

func (b builder) observed(name, unit, desc string) metric.Float64ObservableGauge {
	g, _ := b.m.Float64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	return g
}

func (b builder) observedInt(name, unit, desc string) metric.Int64ObservableGauge {
	g, _ := b.m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	return g
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
