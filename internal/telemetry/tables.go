package telemetry

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// TableState is one table's sampled state: what system.tables shows, plus the
// sizes of both tiers. Healthy is the same rule as system.tables.healthy: no
// row below the watermark is still in PostgreSQL.
type TableState struct {
	Table string // the resolved name, as system.tables names it
	// Watermark is zero when nothing is archived yet.
	Watermark time.Time
	// SettlementLag and ArchivalStep turn the watermark into a backlog.
	SettlementLag, ArchivalStep time.Duration
	HotRows                     int64
	HotPartitions               int
	DetachedPartitions          int
	InvariantViolations         int64
	Healthy                     bool
	Quarantined                 bool
	// ColdFiles, ColdBytes and ColdRows are the current snapshot's totals; -1
	// when the snapshot does not carry them.
	ColdFiles, ColdBytes, ColdRows int64
	SampledAt                      time.Time
}

// Lag is how far the watermark trails now (zero when nothing is archived).
func (s TableState) Lag(now time.Time) time.Duration {
	if s.Watermark.IsZero() {
		return 0
	}
	return now.Sub(s.Watermark)
}

// Backlog is the number of settled windows not yet archived at now: windows
// [W, W+step) whose end is at or before now − settlement lag. A table nobody
// archives grows one a step.
func (s TableState) Backlog(now time.Time) int64 {
	if s.Watermark.IsZero() || s.ArchivalStep <= 0 {
		return 0
	}
	settled := now.Add(-s.SettlementLag).Sub(s.Watermark)
	if settled < s.ArchivalStep {
		return 0
	}
	return int64(settled / s.ArchivalStep)
}

var published struct {
	sync.Mutex
	tables map[string]TableState
}

// PublishTables replaces the published state of the given tables; the gauges
// report it at the next collection.
func PublishTables(states ...TableState) {
	published.Lock()
	defer published.Unlock()
	if published.tables == nil {
		published.tables = map[string]TableState{}
	}
	for _, s := range states {
		published.tables[s.Table] = s
	}
}

// Published returns the published state of every table.
func Published() []TableState {
	published.Lock()
	defer published.Unlock()
	out := make([]TableState, 0, len(published.tables))
	for _, s := range published.tables {
		out = append(out, s)
	}
	return out
}

func bool01(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// registerTableGauges creates the per-table gauges with b and observes the
// published state at each collection.
func registerTableGauges(b builder) metric.Registration {
	f, i := b.observed, b.observedInt
	var (
		watermark = f("meterstore.watermark", "s", "The table's tiering watermark (Unix time): rows before it are in Iceberg, rows from it on in PostgreSQL.")
		lag       = f("meterstore.watermark.lag", "s", "How far the watermark trails now; settlement lag plus up to one archival step and interval is normal.")
		age       = f("meterstore.table.state.age", "s", "Seconds since the per-table state was sampled; grows when sampling fails.")
		backlog   = i("meterstore.archival.backlog", "{window}", "Settled windows not yet archived (now − settlement lag past the watermark, in archival steps).")
		hotRows   = i("meterstore.hot.rows", "{row}", "Rows in the attached PostgreSQL partitions.")
		hotParts  = i("meterstore.hot.partitions", "{partition}", "Attached PostgreSQL partitions.")
		detached  = i("meterstore.hot.detached_partitions", "{partition}", "Partitions detached for archival and not dropped (left by an interrupted run until the next one).")
		violation = i("meterstore.invariant.violations", "{row}", "Rows below the watermark still in PostgreSQL, where no query reads them.")
		healthy   = i("meterstore.table.healthy", "", "1 when no row below the watermark is in PostgreSQL (system.tables.healthy), else 0.")
		quarant   = i("meterstore.table.quarantined", "", "1 when the configured schema narrows the cold table's and archival is stopped, else 0.")
		coldFiles = i("meterstore.cold.files", "{file}", "Data files in the table's current Iceberg snapshot.")
		coldBytes = i("meterstore.cold.bytes", "By", "Bytes of data files in the table's current Iceberg snapshot.")
		coldRows  = i("meterstore.cold.rows", "{row}", "Rows in the table's current Iceberg snapshot (every version).")
	)
	reg, _ := b.m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		now := time.Now()
		for _, s := range Published() {
			attrs := metric.WithAttributes(KeyTable.String(s.Table))
			if !s.Watermark.IsZero() {
				o.ObserveFloat64(watermark, float64(s.Watermark.Unix()), attrs)
				o.ObserveFloat64(lag, s.Lag(now).Seconds(), attrs)
			}
			o.ObserveFloat64(age, now.Sub(s.SampledAt).Seconds(), attrs)
			o.ObserveInt64(backlog, s.Backlog(now), attrs)
			o.ObserveInt64(hotRows, s.HotRows, attrs)
			o.ObserveInt64(hotParts, int64(s.HotPartitions), attrs)
			o.ObserveInt64(detached, int64(s.DetachedPartitions), attrs)
			o.ObserveInt64(violation, s.InvariantViolations, attrs)
			o.ObserveInt64(healthy, bool01(s.Healthy), attrs)
			o.ObserveInt64(quarant, bool01(s.Quarantined), attrs)
			if s.ColdFiles >= 0 {
				o.ObserveInt64(coldFiles, s.ColdFiles, attrs)
				o.ObserveInt64(coldBytes, s.ColdBytes, attrs)
				o.ObserveInt64(coldRows, s.ColdRows, attrs)
			}
		}
		return nil
	}, watermark, lag, age, backlog, hotRows, hotParts, detached, violation, healthy, quarant, coldFiles, coldBytes, coldRows)
	return reg
}
