package hot

import (
	"context"
	"time"

	"meterstore"
)

// WritePhases names Write's steps in order, as TimedWrite times them.
var WritePhases = []string{"validate", "partitions", "begin", "lock+prior", "classify", "copy", "straddle", "commit"}

// TimedWrite is Write with each step's wall time added to d under its
// WritePhases name: the benchmark's account of where a write's time goes. It
// mirrors Write step for step; keep the two in step.
func (s *Store) TimedWrite(ctx context.Context, rows []meterstore.Row, d map[string]time.Duration) ([]Displacement, error) {
	t := time.Now()
	lap := func(phase string) {
		now := time.Now()
		d[phase] += now.Sub(t)
		t = now
	}
	ds := make([]Displacement, len(rows))
	memo := validated{extra: s.cfg.ExtraColumns()}
	for i := range rows {
		ds[i].Row = rows[i]
		if err := s.validate(&ds[i].Row, &memo); err != nil {
			return nil, err
		}
	}
	b := s.group(len(ds), func(i int) *meterstore.Row { return &ds[i].Row })
	lap("validate")
	if err := s.EnsurePartitions(ctx, b.lo, b.hi.Add(time.Microsecond)); err != nil {
		return nil, err
	}
	lap("partitions")
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	lap("begin")
	prior, err := s.readPrior(ctx, tx, b)
	if err != nil {
		return nil, err
	}
	lap("lock+prior")
	fresh, err := s.classify(b.ident, ds, prior.rows)
	if err != nil {
		return nil, err
	}
	lap("classify")
	if len(fresh) > 0 {
		if err := s.copyFresh(ctx, tx, ds, fresh); err != nil {
			return nil, err
		}
		lap("copy")
		if err := s.checkAcrossPartitions(ctx, tx, prior.partitionOIDs, ds, fresh); err != nil {
			return nil, err
		}
		lap("straddle")
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	lap("commit")
	return ds, nil
}
