package main

import (
	"context"
	"fmt"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// confinementTenants is how many tenants the confinement fixture spreads its
// MaLos over; the scoped side reads one of them.
const confinementTenants = 4

// confinement measures a tenant-scoped session against the same statement
// unscoped, alternating, on a fixture of its own with a tenant column: a
// single meter's year and the tenant's portfolio aggregate. The unscoped side
// names the tenant in its WHERE, so both read the same rows and must agree;
// the scoped side runs in its confined database (no extension, external
// access off, configuration locked, files only below the tenant's partition
// directory).
func confinement(ctx context.Context, o options, e *env) ([]result, *fixture, error) {
	w := testkit.Fixture(o.seed)
	w.MaLos, w.Days, w.CorrectionRate, w.Tenants = o.malos, o.days, o.corrections, confinementTenants
	w.Start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := w.IntervalTable("confined_versions").MustBuild()
	logf("confinement: %d MaLo over %d tenants × %d days × 2 channels of 15-minute values", o.malos, confinementTenants, o.days)
	fx, err := loadFixture(ctx, e, w, cfg, o.cleanDays, false)
	if err != nil {
		return nil, nil, err
	}
	st, err := store.Open(ctx, store.Config{Pool: e.pool, Catalog: e.cat, Tables: []meterstore.TableConfig{cfg},
		Now: func() time.Time { return fx.now }, MemoryLimit: o.memoryLimit})
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	b := &bench{ctx: ctx, o: o, e: e, st: st, cfg: cfg, w: w, fx: fx}
	rs, err := b.confinementPairs()
	return rs, fx, err
}

func (b *bench) confinementPairs() ([]result, error) {
	eng := b.st.Engine()
	rel := b.cfg.ResolvedName()
	var tenant string
	res, err := eng.Query(b.ctx, fmt.Sprintf(`SELECT tenant FROM %s WHERE malo_id = $1 LIMIT 1`, rel), b.fx.malos[0])
	if err != nil {
		return nil, err
	}
	tenant = fmt.Sprint(res.Rows[0][0])
	scoped, err := eng.Scoped("tenant", tenant)
	if err != nil {
		return nil, err
	}
	lo, hi := b.fx.first, b.fx.first.AddDate(1, 0, 0)
	if hi.After(b.fx.last) {
		hi = b.fx.last
	}
	run := func(h *engine.Engine, q string, args ...any) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			start := time.Now()
			if _, err := h.Query(b.ctx, q, args...); err != nil {
				return 0, fmt.Errorf("%s: %w", q, err)
			}
			return time.Since(start), nil
		}
	}
	// same checks both sides answer alike (order: the rows sorted by every
	// column).
	same := func(q string, args ...any) error {
		a, err := eng.Query(b.ctx, q+fmt.Sprintf(` AND tenant = '%s' ORDER BY ALL`, tenant), args...)
		if err != nil {
			return err
		}
		s, err := scoped.Query(b.ctx, q+` ORDER BY ALL`, args...)
		if err != nil {
			return err
		}
		if fmt.Sprint(a.Rows) != fmt.Sprint(s.Rows) {
			return fmt.Errorf("confinement: %s answers differently scoped (%d rows) and unscoped (%d rows)", q, len(s.Rows), len(a.Rows))
		}
		return nil
	}
	note := func(q string, args ...any) string {
		x, err := scoped.Explain(b.ctx, q, args...)
		if err != nil {
			return err.Error()
		}
		return firstLine(x, "session:") + "; " + firstLine(x, "cold:")
	}
	var out []result
	meter := fmt.Sprintf(`SELECT "from", value FROM %s WHERE malo_id = $1 AND "from" >= $2 AND "from" < $3`, rel)
	if err := same(meter, b.fx.malos[0], lo, hi); err != nil {
		return nil, err
	}
	logf("confinement: single meter, %s – %s, scoped against unscoped", lo.Format(time.DateOnly), hi.Format(time.DateOnly))
	s, u, err := b.timePair(3*b.o.reps, run(scoped, meter+` ORDER BY "from"`, b.fx.malos[0], lo, hi),
		run(eng, meter+fmt.Sprintf(` AND tenant = '%s' ORDER BY "from"`, tenant), b.fx.malos[0], lo, hi))
	if err != nil {
		return nil, err
	}
	r := ratioResult("confinement: single meter, a year, scoped session", "the same statement unscoped (tenant in its WHERE)", "≤ 1.3×", s, u, 1.3, "")
	r.note = loadedNote + note(meter, b.fx.malos[0], lo, hi)
	out = append(out, r)

	agg := fmt.Sprintf(`SELECT sum(value), count(*) FROM %s WHERE "from" >= $1 AND "from" < $2`, rel)
	if err := same(agg, b.fx.first, b.fx.last); err != nil {
		return nil, err
	}
	logf("confinement: portfolio aggregate, scoped against unscoped")
	s, u, err = b.timePair(b.o.reps, run(scoped, agg, b.fx.first, b.fx.last),
		run(eng, agg+fmt.Sprintf(` AND tenant = '%s'`, tenant), b.fx.first, b.fx.last))
	if err != nil {
		return nil, err
	}
	r = ratioResult("confinement: the tenant's portfolio aggregate, scoped session", "the same statement unscoped (tenant in its WHERE)", "≤ 1.3×", s, u, 1.3, "")
	r.note = loadedNote + note(agg, b.fx.first, b.fx.last)
	return append(out, r), nil
}

// loadedNote opens each confinement figure's note: the ratio is of two sides
// timed alternately in one run, and the machine may have been shared.
const loadedNote = "alternating A/B medians in one run (a shared machine weighs on both sides alike); "
