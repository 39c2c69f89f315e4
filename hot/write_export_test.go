package hot

import (
	"context"
	"time"

	"github.com/meterstore/meterstore"
)

// WritePhases names Write's steps in order, as TimedWrite times them.
var WritePhases = []string{"validate", "partitions", "begin", "lock+prior", "classify", "copy", "straddle", "tiers", "commit"}

// TimedWrite is Write with each step's wall time added to d under its
// WritePhases name: the benchmark's account of where a write's time goes.
func (s *Store) TimedWrite(ctx context.Context, rows []meterstore.Row, d map[string]time.Duration) ([]meterstore.Displacement, error) {
	t := time.Now()
	return s.write(ctx, rows, func(phase string) {
		now := time.Now()
		d[phase] += now.Sub(t)
		t = now
	})
}
