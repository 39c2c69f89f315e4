package catalog

import (
	"context"
	"time"

	"github.com/meterstore/meterstore/internal/telemetry"
)

// recordRun records one maintenance run of the table (expiry, orphan cleanup,
// compaction) when it ends: its outcome, duration and what fill adds from the
// result. Deferred at the entry point, so every caller's run is counted.
func (t *Table) recordRun(ctx context.Context, start time.Time, task string, fill func(*telemetry.Run), err *error) {
	r := telemetry.Run{Table: t.cfg.ResolvedName(), Task: task, Outcome: telemetry.OK, Ended: time.Now()}
	r.Duration = r.Ended.Sub(start)
	if *err != nil {
		r.Outcome = telemetry.Error
	}
	fill(&r)
	telemetry.RecordRun(ctx, r)
}
