package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// historyEnd is where every history of the series ends: the watermark, with
// the hot week after it. The last year below it is what each history's
// queries read, so the lengths differ only in the history they do not read.
var historyEnd = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// historyTable is one history length of the series.
type historyTable struct {
	years int
	cfg   meterstore.TableConfig
	fx    *fixture
	rssKB int64 // the process's peak RSS after it was archived
}

func (h historyTable) relation() string { return h.cfg.ResolvedName() }

// history measures what the length of a table's history costs: tables holding
// 1, 3 and 10 years (-history-years) of daily archival of the same small
// portfolio, each ending at historyEnd, are planned and queried over their
// last year — planning (Describe), the catalog's plan on a fresh handle, one
// meter's year and the portfolio's monthly sums — alternately, before and
// after compacting the closed months. Each window's rows are generated and
// archived one window at a time (loadFixture streams), so memory holds a few
// windows, not the history.
func history(ctx context.Context, o options, e *env) ([]result, error) {
	var tables []*historyTable
	for _, y := range o.historyYears {
		h, err := loadHistory(ctx, o, e, y)
		if err != nil {
			return nil, err
		}
		tables = append(tables, h)
	}
	cfgs := make([]meterstore.TableConfig, len(tables))
	for i, h := range tables {
		cfgs[i] = h.cfg
	}
	now := tables[0].fx.now
	st, err := store.Open(ctx, store.Config{Pool: e.pool, Catalog: e.cat, Tables: cfgs, Now: func() time.Time { return now }})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	hb := &historyBench{bench: bench{ctx: ctx, o: o, e: e, st: st}, tables: tables}
	out, err := hb.stage("daily files")
	if err != nil {
		return nil, err
	}
	comp, err := hb.compact()
	if err != nil {
		return nil, err
	}
	out = append(out, comp...)
	after, err := hb.stage("compacted")
	if err != nil {
		return nil, err
	}
	return append(out, after...), nil
}

// loadHistory archives years of daily windows into a table of their own.
func loadHistory(ctx context.Context, o options, e *env, years int) (*historyTable, error) {
	w := testkit.Fixture(o.seed)
	w.MaLos, w.CorrectionRate = o.malos, o.corrections
	w.Start = historyEnd.AddDate(-years, 0, 0)
	w.Days = int(historyEnd.Sub(w.Start).Hours()/24) + hotDays
	cfg := w.IntervalTable(fmt.Sprintf("history_%dy_versions", years)).MustBuild()
	logf("history: %d years, %d MaLo × 2 channels × %d days of 15-minute values, %.1f %% corrections", years, o.malos, w.Days, 100*o.corrections)
	start := time.Now()
	fx, err := loadFixture(ctx, e, w, cfg, o.cleanDays, false)
	if err != nil {
		return nil, err
	}
	h := &historyTable{years: years, cfg: cfg, fx: fx, rssKB: peakRSS()}
	logf("history: %d years: %d rows in %d daily commits in %s, peak RSS %d MiB", years, fx.coldRows, fx.windows, time.Since(start).Round(time.Second), h.rssKB>>10)
	return h, nil
}

type historyBench struct {
	bench
	tables []*historyTable
}

func (hb *historyBench) cold(h *historyTable) *catalog.Table {
	t, _ := hb.st.Table(h.cfg.Name())
	return t.Cold()
}

// lastYear is the range every query of the series reads.
func lastYear() (time.Time, time.Time) { return historyEnd.AddDate(-1, 0, 0), historyEnd }

// stage measures every history length as its files now lie.
func (hb *historyBench) stage(label string) ([]result, error) {
	lo, hi := lastYear()
	meterQ := `SELECT "from", value FROM %s WHERE malo_id = $1 AND "from" >= $2 AND "from" < $3 ORDER BY "from"`
	monthlyQ := `SELECT meter_balancing_month("from", sparte) AS m, sum(value) FROM %s WHERE "from" >= $1 AND "from" < $2 GROUP BY 1 ORDER BY 1`
	layout, err := hb.layout(label)
	if err != nil {
		return nil, err
	}
	out := []result{layout}
	meter := hb.tables[0].fx.malos[0]
	describe, err := hb.rounds(func(h *historyTable) (time.Duration, error) {
		start := time.Now()
		_, err := hb.st.Engine().Describe(hb.ctx, fmt.Sprintf(meterQ, h.relation()), meter, lo, hi)
		return time.Since(start), err
	})
	if err != nil {
		return nil, err
	}
	out = append(out, hb.versusOneYear(label+": planning (Describe of one meter's year)", describe, "10 years ≤ 1.5× 1 year", 1.5))
	fresh, err := hb.rounds(func(h *historyTable) (time.Duration, error) {
		start := time.Now()
		t, err := hb.e.cat.Table(hb.ctx, h.cfg)
		if err != nil {
			return 0, err
		}
		_, _, err = t.PlanFiles(hb.ctx, catalog.PlanRequest{From: lo, To: hi})
		return time.Since(start), err
	})
	if err != nil {
		return nil, err
	}
	out = append(out, hb.versusOneYear(label+": catalog plan of the year on a fresh handle (metadata and every manifest read)", fresh, "reported", 0))
	var meters []time.Duration
	for _, m := range hb.tables[0].fx.malos[:min(compactionMeters, len(hb.tables[0].fx.malos))] {
		ds, err := hb.rounds(func(h *historyTable) (time.Duration, error) {
			return hb.runEngine(fmt.Sprintf(meterQ, h.relation()), m, lo, hi)
		})
		if err != nil {
			return nil, err
		}
		meters = append(meters, ds...)
	}
	out = append(out, hb.versusOneYear(label+": single meter, one year (p50 over meters)", hb.p50PerTable(meters), "reported", 0))
	monthly, err := hb.rounds(func(h *historyTable) (time.Duration, error) {
		return hb.runEngine(fmt.Sprintf(monthlyQ, h.relation()), lo, hi)
	})
	if err != nil {
		return nil, err
	}
	out = append(out, hb.versusOneYear(label+": portfolio monthly sum, one year", monthly, "reported", 0))
	return out, nil
}

// rounds times f on every table in turn, o.reps rounds after a warm-up
// round, and returns each table's median: load that drifts during the run
// weighs on every length alike.
func (hb *historyBench) rounds(f func(h *historyTable) (time.Duration, error)) ([]time.Duration, error) {
	times := make([][]time.Duration, len(hb.tables))
	for r := -1; r < hb.o.reps; r++ {
		for i, h := range hb.tables {
			d, err := f(h)
			if err != nil {
				return nil, fmt.Errorf("history, %d years: %w", h.years, err)
			}
			if r >= 0 {
				times[i] = append(times[i], d)
			}
		}
	}
	out := make([]time.Duration, len(times))
	for i, ts := range times {
		out[i] = median(ts)
	}
	return out, nil
}

// p50PerTable takes per-meter medians laid out meter by meter (a table's
// figure at i%len(tables)) and returns each table's p50 over the meters.
func (hb *historyBench) p50PerTable(ds []time.Duration) []time.Duration {
	n := len(hb.tables)
	out := make([]time.Duration, n)
	for i := range n {
		var mine []time.Duration
		for j := i; j < len(ds); j += n {
			mine = append(mine, ds[j])
		}
		out[i] = percentile(mine, 0.5)
	}
	return out
}

// versusOneYear renders each length's figure against the first (shortest)
// history's; max > 0 makes the longest's ratio the target.
func (hb *historyBench) versusOneYear(measure string, ds []time.Duration, target string, max float64) result {
	base := ds[0]
	var parts []string
	for i, h := range hb.tables {
		if i == 0 {
			parts = append(parts, fmt.Sprintf("%d y %s", h.years, base.Round(100*time.Microsecond)))
			continue
		}
		parts = append(parts, fmt.Sprintf("%d y %s (%.2f×)", h.years, ds[i].Round(100*time.Microsecond), float64(ds[i])/float64(base)))
	}
	last := float64(ds[len(ds)-1]) / float64(base)
	return result{measure: measure, against: fmt.Sprintf("the %d-year history", hb.tables[0].years), target: target,
		figure: strings.Join(parts, "; "), met: max <= 0 || last <= max}
}

// layout reports each history's files per year, the manifests its current
// snapshot lists and the snapshots its metadata names.
func (hb *historyBench) layout(label string) (result, error) {
	var parts []string
	for _, h := range hb.tables {
		t := hb.cold(h)
		if err := t.Refresh(hb.ctx); err != nil {
			return result{}, err
		}
		files, _, err := t.PlanFiles(hb.ctx, catalog.PlanRequest{})
		if err != nil {
			return result{}, err
		}
		tbl := t.Iceberg()
		fsys, err := tbl.FS(hb.ctx)
		if err != nil {
			return result{}, err
		}
		ms, err := tbl.CurrentSnapshot().Manifests(fsys)
		if err != nil {
			return result{}, err
		}
		parts = append(parts, fmt.Sprintf("%d y: %d files (%.0f per year), %d manifests, %d snapshots (peak RSS %d MiB after archiving it)",
			h.years, len(files), float64(len(files))/float64(h.years), len(ms), len(tbl.Metadata().Snapshots()), h.rssKB>>10))
	}
	return result{measure: label + ": files per tenant-year, manifests, snapshots", against: "reported", target: "reported",
		figure: strings.Join(parts, "; "), met: true}, nil
}

// compact compacts every history's closed months.
func (hb *historyBench) compact() ([]result, error) {
	var parts []string
	for _, h := range hb.tables {
		start := time.Now()
		res, err := hb.cold(h).Compact(hb.ctx, catalog.CompactOptions{})
		if err != nil {
			return nil, fmt.Errorf("history, %d years: compact: %w", h.years, err)
		}
		took := time.Since(start)
		var rows int64
		for _, p := range res.Partitions {
			rows += p.Rows
		}
		logf("history: %d years compacted: %d partitions, %d → %d files in %s", h.years, len(res.Partitions), res.FilesRemoved(), res.FilesAdded(), took.Round(time.Second))
		parts = append(parts, fmt.Sprintf("%d y: %d months, %d → %d files, %d rows in %s (%.0f rows/s)",
			h.years, len(res.Partitions), res.FilesRemoved(), res.FilesAdded(), rows, took.Round(time.Millisecond), float64(rows)/took.Seconds()))
	}
	return []result{{measure: "compaction of the closed months", against: "reported", target: "reported", figure: strings.Join(parts, "; "), met: true}}, nil
}
