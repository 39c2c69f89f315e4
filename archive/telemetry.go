package archive

import (
	"context"
	"time"

	"github.com/meterstore/meterstore/internal/telemetry"
)

// runOutcome is a maintenance run's outcome for its metrics and log line.
func runOutcome(contended bool, err error) string {
	switch {
	case err != nil:
		return telemetry.Error
	case contended:
		return telemetry.Contended
	}
	return telemetry.OK
}

// recordArchival records one archival run: its outcome and duration, the
// lease attempt, and the windows, rows and bytes it committed (also those of a
// run that failed after committing some).
func (a *Archiver) recordArchival(ctx context.Context, out Outcome, err error) {
	r := telemetry.Run{Table: a.cfg.ResolvedName(), Task: telemetry.Archival, Outcome: runOutcome(out.LeaseContended, err),
		Ended: time.Now(), Duration: out.Duration, Windows: int64(len(out.Windows))}
	for _, w := range out.Windows {
		r.Rows += w.Rows
		r.Bytes += w.Bytes
	}
	telemetry.RecordRun(ctx, r)
}
