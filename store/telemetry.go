package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/internal/telemetry"
	"github.com/meterstore/meterstore/metering"
)

// writeMetrics accumulates one write call's record: the rows each tier took by
// effect (AppendOutcome tallies them where it builds the displacement reports).
type writeMetrics struct {
	start time.Time
	rec   telemetry.Write
}

func (t *Table) writeMetrics() *writeMetrics {
	return &writeMetrics{start: time.Now(), rec: telemetry.Write{Table: t.cfg.ResolvedName()}}
}

func (m *writeMetrics) add(out AppendOutcome) {
	m.rec.Rows.Add(out.effects)
	m.rec.Rerouted += int64(out.Rerouted)
}

func (m *writeMetrics) done(ctx context.Context, err error) {
	m.rec.Duration = time.Since(m.start)
	m.rec.Outcome = telemetry.OK
	if err != nil {
		if rule, ok := RefusalRule(err); ok {
			m.rec.Outcome, m.rec.Rule = telemetry.Refused, rule
		} else if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			m.rec.Outcome = telemetry.Cancelled
		} else {
			m.rec.Outcome = telemetry.Error
		}
	}
	telemetry.RecordWrite(ctx, m.rec)
}

// RefusalRule names the rule a refused write broke, for metrics and logs; false
// when err is not a refusal (a lost connection, a lease timeout).
func RefusalRule(err error) (string, bool) {
	var idErr *metering.IdentifierError
	var codeErr *metering.CodeError
	switch {
	case errors.As(err, &idErr):
		return "identifier", true
	case errors.As(err, &codeErr):
		return "code", true
	case errors.Is(err, meterstore.ErrRestatement):
		return "restatement", true
	case errors.Is(err, meterstore.ErrOverlap), errors.Is(err, metering.ErrOverlap):
		return "overlap", true
	case errors.Is(err, meterstore.ErrSecondOperator):
		return "one_operator", true
	case errors.Is(err, ErrBelowBoundary):
		return "below_boundary", true
	case errors.Is(err, ErrUnknownSubject):
		return "unknown_subject", true
	case errors.Is(err, ErrWrongTimeModel):
		return "time_model", true
	case errors.Is(err, ErrAuthoritativeConflict):
		return "authoritative_conflict", true
	case errors.Is(err, ErrPurged):
		return "purged", true
	case errors.Is(err, metering.ErrInvalid), errors.Is(err, hot.ErrInvalidRow):
		return "invalid", true
	}
	if _, ok := hot.IsCheckViolation(err); ok {
		return "check", true
	}
	return "", false
}

// query runs an in-process statement through the view and records it.
func (v *View) query(ctx context.Context, q string, args ...any) (*engine.Result, error) {
	start := time.Now()
	res, err := v.eng.Query(ctx, q, args...)
	var prov *engine.Provenance
	var rows int64
	if res != nil {
		prov, rows = res.Provenance, int64(len(res.Rows))
	}
	telemetry.RecordStatement(ctx, engine.StatementRecord(telemetry.InProcess, prov, rows, time.Since(start), err))
	return res, err
}

// SampleState reads every table's state from both tiers — the watermark, rows
// below it still in PostgreSQL (with a lost watermark, the rule of
// system.tables.healthy), attached
// and detached partitions, hot rows, whether the schema quarantines the table,
// the cold snapshot's totals — and publishes it to the metrics' gauges. It
// costs a count of the hot rows per table; callers sample on an interval, not
// per scrape of a busy Prometheus.
func (s *Store) SampleState(ctx context.Context, now time.Time) ([]telemetry.TableState, error) {
	var out []telemetry.TableState
	for _, t := range s.tableList() {
		st, err := t.sampleState(ctx, now)
		if err != nil {
			return out, err
		}
		out = append(out, st)
	}
	telemetry.PublishTables(out...)
	return out, nil
}

func (t *Table) sampleState(ctx context.Context, now time.Time) (telemetry.TableState, error) {
	cfg := t.cfg
	st := telemetry.TableState{Table: cfg.ResolvedName(), SettlementLag: cfg.SettlementLag(), ArchivalStep: cfg.ArchivalStep(), SampledAt: now}
	w, err := t.Watermark(ctx)
	// A lost watermark is unhealthy, as system.tables lists it.
	lost := errors.Is(err, catalog.ErrWatermarkMissing)
	if err != nil && !lost {
		return st, fmt.Errorf("sample %s: %w", cfg.Name(), err)
	}
	st.Watermark = w
	if !w.IsZero() {
		if st.InvariantViolations, err = t.hot.RowsBelow(ctx, w); err != nil {
			return st, fmt.Errorf("sample %s: %w", cfg.Name(), err)
		}
	}
	st.Healthy = st.InvariantViolations == 0 && !lost
	parts, err := t.hot.Partitions(ctx)
	if err != nil {
		return st, fmt.Errorf("sample %s: %w", cfg.Name(), err)
	}
	det, err := t.hot.DetachedPartitions(ctx)
	if err != nil {
		return st, fmt.Errorf("sample %s: %w", cfg.Name(), err)
	}
	st.HotPartitions, st.DetachedPartitions = len(parts), len(det)
	if st.HotRows, err = t.hot.CountRows(ctx, cfg.Name()); err != nil {
		return st, fmt.Errorf("sample %s: %w", cfg.Name(), err)
	}
	st.Quarantined = len(t.archiver.Quarantine()) > 0
	var ok bool
	if st.ColdFiles, st.ColdBytes, st.ColdRows, ok = t.cold.Totals(); !ok {
		st.ColdFiles, st.ColdBytes, st.ColdRows = -1, -1, -1
	}
	return st, nil
}
