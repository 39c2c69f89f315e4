package main

import (
	"context"
	"fmt"
	"sort"
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
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return nil, nil, err
		}
		defer stop()
	}
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
	// same checks both sides answer alike: the same rows, compared sorted
	// (a statement's ORDER BY may leave ties in any order).
	same := func(sq, uq string, args ...any) error {
		a, err := eng.Query(b.ctx, uq, args...)
		if err != nil {
			return err
		}
		s, err := scoped.Query(b.ctx, sq, args...)
		if err != nil {
			return err
		}
		as, ss := sortedRows(a.Rows), sortedRows(s.Rows)
		for i := range min(len(as), len(ss)) {
			if as[i] != ss[i] {
				return fmt.Errorf("confinement: %s answers differently scoped and unscoped, first at sorted row %d: %s against %s", sq, i, ss[i], as[i])
			}
		}
		if len(as) != len(ss) {
			return fmt.Errorf("confinement: %s answers differently scoped (%d rows) and unscoped (%d rows)", sq, len(ss), len(as))
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
	month := lo.AddDate(0, 1, 0)
	// Each case's %s is where the unscoped side names the tenant.
	cases := []struct {
		measure, q string
		reps       int
		args       []any
	}{
		{"confinement: single meter, a month's rows, scoped session", `SELECT "from", value FROM %[1]s WHERE malo_id = $1 AND "from" >= $2 AND "from" < $3%[2]s ORDER BY "from"`, 3 * b.o.reps, []any{b.fx.malos[0], lo, month}},
		{"confinement: single meter, a year, scoped session", `SELECT "from", value FROM %[1]s WHERE malo_id = $1 AND "from" >= $2 AND "from" < $3%[2]s ORDER BY "from"`, 3 * b.o.reps, []any{b.fx.malos[0], lo, hi}},
		{"confinement: the tenant's portfolio monthly aggregate, scoped session", `SELECT date_trunc('month', "from") AS m, sum(value), count(*) FROM %[1]s WHERE "from" >= $1 AND "from" < $2%[2]s GROUP BY m ORDER BY m`, b.o.reps, []any{b.fx.first, b.fx.last}},
		{"confinement: the tenant's portfolio aggregate, scoped session", `SELECT sum(value), count(*) FROM %[1]s WHERE "from" >= $1 AND "from" < $2%[2]s`, b.o.reps, []any{b.fx.first, b.fx.last}},
		{"confinement: count(*) of the tenant's readings, scoped session", `SELECT count(*) FROM %[1]s WHERE true%[2]s`, b.o.reps, nil},
	}
	var out []result
	for _, c := range cases {
		sq := fmt.Sprintf(c.q, rel, "")
		uq := fmt.Sprintf(c.q, rel, fmt.Sprintf(` AND tenant = '%s'`, tenant))
		if err := same(sq, uq, c.args...); err != nil {
			return nil, err
		}
		logf("%s, scoped against unscoped", c.measure)
		s, u, err := b.timePair(c.reps, run(scoped, sq, c.args...), run(eng, uq, c.args...))
		if err != nil {
			return nil, err
		}
		r := ratioResult(c.measure, "the same statement unscoped (tenant in its WHERE)", "≤ 1.3×", s, u, 1.3, "")
		r.note = loadedNote + note(sq, c.args...)
		out = append(out, r)
	}
	return out, nil
}

// sortedRows is each row's text, sorted.
func sortedRows(rows [][]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprint(r)
	}
	sort.Strings(out)
	return out
}

// loadedNote opens each confinement figure's note: the ratio is of two sides
// timed alternately in one run, and the machine may have been shared.
const loadedNote = "alternating A/B medians in one run (a shared machine weighs on both sides alike); "
