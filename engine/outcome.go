package engine

import (
	"context"
	"errors"
	"time"

	"github.com/meterstore/meterstore/internal/telemetry"
)

// Outcome classifies how a statement ended, for its metrics and log line:
// refused (not a query, a scope it may not leave — the caller's to fix),
// cancelled (its context ended), error, or ok.
func Outcome(err error) string {
	switch {
	case err == nil:
		return telemetry.OK
	case errors.Is(err, ErrNotAQuery), errors.Is(err, ErrScope):
		return telemetry.Refused
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return telemetry.Cancelled
	}
	return telemetry.Error
}

// StatementRecord is a statement's metrics record, read off its provenance
// (nil when it failed before it was planned).
func StatementRecord(surface string, prov *Provenance, rows int64, d time.Duration, err error) telemetry.Statement {
	s := telemetry.Statement{Surface: surface, Outcome: Outcome(err), Duration: d, Rows: rows}
	if prov != nil {
		s.Tiers, s.Mode = prov.Tiers.String(), prov.Mode.String()
		s.ColdFiles, s.ResolvedFiles = prov.ColdFiles, prov.ResolvedFiles
	}
	return s
}
