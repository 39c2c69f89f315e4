package soak

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// finish ends the run as an operator would after an incident — maintenance
// stopped, one recovery run — and checks the deployment against the oracle.
// It returns one line per check passed; failures go to st.
func (d *deployment) finish(ctx context.Context, o Options, s *store.Store, tbl *store.Table, l *ledger, st *stats, w testkit.Workload, late *closedMonth, load *pgbenchLoad, bounded *boundedWork, start time.Time) []string {
	var checks []string
	pass := func(format string, args ...any) { checks = append(checks, fmt.Sprintf(format, args...)) }
	for _, p := range []*process{d.serve, d.maintenance} {
		if deaths := p.deaths(); len(deaths) > 0 {
			for _, x := range deaths {
				st.fail(x + ":\n" + p.logTail(20))
			}
		} else {
			pass("%s died only by the injected kills (%d starts)", p.name, p.starts)
		}
	}
	if err := d.maintenance.stop(); err != nil {
		st.fail(err.Error())
	}
	t0 := time.Now()
	out, err := d.recover(ctx)
	if err != nil {
		st.fail(fmt.Sprintf("recovery run msql maintenance --once: %v\n%s", err, out))
	} else {
		pass("one recovery run (msql maintenance --once) took %s", time.Since(t0).Round(time.Millisecond))
	}

	r, err := tbl.VerifyInvariant(ctx)
	switch {
	case err != nil:
		st.fail("verify the invariant: " + err.Error())
	case !r.Healthy:
		st.fail("after the recovery run: " + r.String())
	default:
		pass("invariant holds, no detached partition: %s", r)
	}
	load.check(st, start, pass)
	bounded.check(st, pass)
	late.check(ctx, tbl, start, d.maintenance.log(), st, pass)
	d.cleanOrphans(ctx, tbl, st, pass)
	st.checkedEnough(pass)
	d.exactlyOnce(ctx, s, l, st, pass)
	d.idleLatency(ctx, l, w, st)
	return checks
}

// cleanOrphans deletes the files no snapshot references — left by commits the
// faults interrupted, which a deployment's orphan cleanup deletes past its
// safety age of at least 1 h — with no safety age: nothing writes any more
// (writers and maintenance stopped, msql serve only reads). The checks after
// it read every answer again, so a file cleanup took that a snapshot still
// needs would fail them; and none may be left.
func (d *deployment) cleanOrphans(ctx context.Context, tbl *store.Table, st *stats, pass func(string, ...any)) {
	orphans, err := tbl.Cold().DeleteOrphanFiles(ctx, 0, false)
	if err != nil {
		st.fail("delete the files of interrupted commits: " + err.Error())
		return
	}
	left, err := tbl.Cold().DeleteOrphanFiles(ctx, 0, true)
	switch {
	case err != nil:
		st.fail("list files no snapshot references: " + err.Error())
	case len(left) > 0:
		st.fail(fmt.Sprintf("%d files no snapshot references are left after orphan cleanup: %s", len(left), strings.Join(left, ", ")))
	default:
		pass("%d files of interrupted commits (%s) deleted by orphan cleanup with the writers stopped; none left, and every answer below read after it", len(orphans), orphanKinds(orphans))
	}
}

// exactlyOnce: every version the writers were told was stored is stored once
// across the tiers, and the resolved relation is the oracle's.
func (d *deployment) exactlyOnce(ctx context.Context, s *store.Store, l *ledger, st *stats, pass func(string, ...any)) {
	cfg := l.oracle.Config()
	all := time.Time{}
	for _, c := range []struct {
		rel        string
		count      int
		sum        decimal.Decimal
		what       string
		versionsOf bool
	}{
		{cfg.Name(), l.oracle.RawRowCount(all, all), l.oracle.NaiveSum(all, all), "stored versions", true},
		{cfg.ResolvedName(), l.oracle.RowCount(all, all), l.oracle.Sum(all, all), "resolved rows", false},
	} {
		res, err := s.Query(ctx, `SELECT count(*), CAST(coalesce(sum(value), 0) AS VARCHAR) FROM `+c.rel)
		if err != nil {
			st.fail(fmt.Sprintf("count %s: %v", c.rel, err))
			continue
		}
		n, sum := fmt.Sprint(res.Rows[0][0]), fmt.Sprint(res.Rows[0][1])
		if !sameAnswer([]string{n, sum}, []string{fmt.Sprint(c.count), c.sum.String()}) {
			st.fail(fmt.Sprintf("%s: the store has %s rows summing to %s, the oracle %d summing to %s", c.what, n, sum, c.count, c.sum))
			continue
		}
		pass("%s exactly once across the tiers: %d, sum %s", c.what, c.count, c.sum)
	}
	want := l.oracle.SumsByMaloChannelDay(all, all)
	res, err := s.Query(ctx, `SELECT malo_id, obis_code, balancing_day, CAST(sum(value) AS VARCHAR) FROM `+cfg.ResolvedName()+` GROUP BY ALL`)
	if err != nil {
		st.fail("sums per MaLo, channel and day: " + err.Error())
		return
	}
	bad := 0
	for _, row := range res.Rows {
		day, ok := row[2].(time.Time)
		if !ok {
			st.fail(fmt.Sprintf("balancing_day is a %T", row[2]))
			return
		}
		k := testkit.MaloChannelDay{MaloID: fmt.Sprint(row[0]), ObisCode: fmt.Sprint(row[1]), BalancingDay: metering.DateOf(day)}
		if !sameAnswer([]string{fmt.Sprint(row[3])}, []string{want[k].String()}) {
			bad++
			st.fail(fmt.Sprintf("sum of %+v: store %v, oracle %s", k, row[3], want[k]))
		}
	}
	if len(res.Rows) != len(want) {
		st.fail(fmt.Sprintf("%d groups per MaLo, channel and day in the store, %d in the oracle", len(res.Rows), len(want)))
	} else if bad == 0 {
		pass("all %d sums per MaLo, channel and balancing day equal the oracle's", len(want))
	}
}

// idleLatency asks each kind of question again with nothing else running.
func (d *deployment) idleLatency(ctx context.Context, l *ledger, w testkit.Workload, st *stats) {
	r := d.readers(l, w, st, newRand(1))[0]
	c, err := r.dial(ctx)
	if err != nil {
		st.fail("idle reader: " + err.Error())
		return
	}
	defer c.close()
	for range 30 {
		q := r.question()
		took, err := r.ask(ctx, c, q)
		if err != nil {
			st.fail("idle query: " + err.Error())
			return
		}
		st.idleRead(q.kind, took)
	}
}

// orphanKinds counts files by kind: Iceberg metadata or data files.
func orphanKinds(paths []string) string {
	n := map[string]int{}
	for _, p := range paths {
		kind := "data"
		if strings.Contains(p, string(filepath.Separator)+"metadata"+string(filepath.Separator)) {
			kind = "metadata"
		}
		n[kind]++
	}
	var parts []string
	for _, k := range sortedKeys(n) {
		parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
	}
	return strings.Join(parts, ", ")
}

// checkedEnough fails a run in which a kind of question was never answered
// and checked, or nothing was written: it would have proven nothing.
func (s *stats) checkedEnough(pass func(string, ...any)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kinds := []string{"resolved sum", "single meter", "completeness"}
	var got []string
	for _, k := range kinds {
		if len(s.reads[k]) == 0 {
			s.failures = append(s.failures, "no "+k+" answer was checked against the oracle under load")
		}
		got = append(got, fmt.Sprintf("%d %s", len(s.reads[k]), k))
	}
	writes := 0
	for k, n := range s.ops {
		if !strings.HasPrefix(k, "read: ") {
			writes += n
		}
	}
	if writes == 0 {
		s.failures = append(s.failures, "no delivery was written")
	}
	pass("answers checked against the oracle under load: %s; none disagreed unless listed under FAILURES", strings.Join(got, ", "))
}
