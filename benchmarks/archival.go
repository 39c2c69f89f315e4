package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
)

// archivalWindows is how many windows of the hot week the archival measure
// archives: one archival of a day is a fraction of a second, so a single one
// is at the mercy of whatever else the machine does at that moment.
const archivalWindows = 3

// archival: the first windows of the hot week archived one at a time, each
// against pgx reading the same rows into Go values just before (the read limit
// archival cannot beat, the median of -reps reads); the median window reported.
func (b *bench) archival() ([]result, error) {
	t := b.table()
	parts, err := t.Hot().Partitions(b.ctx)
	if err != nil {
		return nil, err
	}
	type window struct {
		rows       int
		read, took time.Duration
	}
	var ws []window
	for _, p := range parts {
		if p.From.Before(b.fx.watermark) {
			continue
		}
		if len(ws) == archivalWindows {
			break
		}
		var w window
		var reads []time.Duration
		for i := 0; i < max(b.o.reps, 1); i++ {
			w.rows = 0
			start := time.Now()
			if err := t.Hot().Scan(b.ctx, hot.ScanRequest{Table: p.Name}, func(rows []meterstore.Row) error { w.rows += len(rows); return nil }); err != nil {
				return nil, err
			}
			reads = append(reads, time.Since(start))
		}
		w.read = median(reads)
		start := time.Now()
		out, err := t.Archive(b.ctx, p.To.Add(b.cfg.SettlementLag()), 1)
		if err != nil {
			return nil, err
		}
		w.took = time.Since(start)
		if len(out.Windows) != 1 || out.Windows[0].Rows != int64(w.rows) {
			return nil, fmt.Errorf("archival moved %v windows, expected one of %d rows from %s", out.Windows, w.rows, p.Name)
		}
		ws = append(ws, w)
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("archival: no hot partition at or after the watermark %s", b.fx.watermark.Format(time.RFC3339))
	}
	slices.SortFunc(ws, func(a, b window) int {
		return cmp.Compare(float64(a.read)/float64(a.took), float64(b.read)/float64(b.took))
	})
	w := ws[len(ws)/2]
	r := float64(w.read) / float64(w.took)
	return []result{{measure: "archival throughput", against: "pgx reading the same rows into Go values", target: "≥ 0.7×",
		figure: fmt.Sprintf("%.2f× (%.0f vs %.0f rows/s, median of %d windows, this one of %d rows)", r,
			float64(w.rows)/w.took.Seconds(), float64(w.rows)/w.read.Seconds(), len(ws), w.rows), met: r >= 0.7}}, nil
}

// childReport is what an archival child prints.
type childReport struct {
	Rows        int64
	Seconds     float64
	ReadSeconds float64 // pgx reading the same rows into Go values, before archiving them
	PeakRSSkB   int64
	ReadCPU     cpuUse
	ArchiveCPU  cpuUse
}

// archivalRSS archives one window of each size in a fresh process and compares
// peak resident memory: streaming must keep it flat.
func (b *bench) archivalRSS() ([]result, error) {
	var reps []childReport
	for i, n := range b.o.rssRows {
		name := fmt.Sprintf("rss%d_versions", i)
		cfg := meterstore.TableSpec{Name: name, DisableIntegrityConstraints: true}.MustBuild()
		day := time.Date(2024, 6, 3, 0, 0, 0, 0, time.UTC)
		h := hot.New(b.e.pool, cfg)
		if err := h.CreateTables(b.ctx, day); err != nil {
			return nil, err
		}
		if err := h.EnsurePartitions(b.ctx, day, day.Add(24*time.Hour)); err != nil {
			return nil, err
		}
		logf("archival RSS: loading %d rows into one window", n)
		if err := fillWindow(b.ctx, b.e, cfg, h.PartitionName(day), day, n, b.fx.hot); err != nil {
			return nil, err
		}
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		pm, err := postmasterPID(b.e.server.DataDir)
		if err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(b.ctx, self, "-child", strings.Join([]string{"archive", b.e.dsn, b.e.warehouse, name, strconv.Itoa(pm)}, "|"))
		cmd.Stderr = os.Stderr
		outb, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("archival child for %d rows: %w", n, err)
		}
		var rep childReport
		if err := json.Unmarshal(outb, &rep); err != nil {
			return nil, fmt.Errorf("archival child output %q: %w", outb, err)
		}
		logf("archival RSS: %d rows in %.1fs (read in %.1fs), peak RSS %d MiB, CPU %.1fs Go + %.1fs PostgreSQL (read %.1fs + %.1fs)", rep.Rows, rep.Seconds, rep.ReadSeconds, rep.PeakRSSkB/1024,
			rep.ArchiveCPU.Go, rep.ArchiveCPU.PG, rep.ReadCPU.Go, rep.ReadCPU.PG)
		reps = append(reps, rep)
	}
	var out []result
	for _, rep := range reps {
		r := rep.ReadSeconds / rep.Seconds
		out = append(out, result{measure: fmt.Sprintf("archival throughput, one window of %d rows", rep.Rows),
			against: "pgx reading the same rows into Go values", target: "≥ 0.7× and ≥ 500000 rows/s",
			figure: fmt.Sprintf("%.2f× (%.0f vs %.0f rows/s)", r, float64(rep.Rows)/rep.Seconds, float64(rep.Rows)/rep.ReadSeconds),
			met:    r >= 0.7 && float64(rep.Rows)/rep.Seconds >= 500_000,
			note:   cpuNote(rep.Rows, rep.ReadCPU, rep.ArchiveCPU, runtime.NumCPU())})
	}
	small, large := reps[0], reps[len(reps)-1]
	growth := float64(large.PeakRSSkB)/float64(small.PeakRSSkB) - 1
	return append(out, result{measure: fmt.Sprintf("archival peak RSS, %d vs %d rows", small.Rows, large.Rows), against: "the smaller window", target: "flat (≤ +10 %)",
		figure: fmt.Sprintf("%+.0f %% (%d vs %d MiB; %.0f and %.0f rows/s)", 100*growth, small.PeakRSSkB/1024, large.PeakRSSkB/1024,
			float64(small.Rows)/small.Seconds, float64(large.Rows)/large.Seconds), met: growth <= 0.10}), nil
}

// fillWindow loads n rows into one partition with COPY, shaped like the fixture's rows.
func fillWindow(ctx context.Context, e *env, cfg meterstore.TableConfig, partition string, day time.Time, n int, templates []meterstore.Row) error {
	perSeries := 96
	series := (n + perSeries - 1) / perSeries
	malos := make([]string, 0, series)
	for base := int64(5000000000); len(malos) < series; base++ {
		for d := 0; d < 10; d++ {
			if m, err := metering.ParseMaloID(strconv.FormatInt(base, 10) + strconv.Itoa(d)); err == nil {
				malos = append(malos, m.String())
				break
			}
		}
	}
	rows := make([]meterstore.Row, 0, min(n, copyBatchRows))
	for i := 0; i < n; i++ {
		t := templates[i%len(templates)]
		t.MaloID = malos[i/perSeries]
		t.ObisCode = "1-0:1.29.0"
		t.From = day.Add(time.Duration(i%perSeries) * 15 * time.Minute)
		to := t.From.Add(15 * time.Minute)
		t.To = &to
		t.BalancingDay = metering.BalancingDay(t.From, metering.SparteStrom).Time()
		t.VersionScope = t.VersionScope[:14] + t.From.In(metering.Berlin()).Format("2006-01")
		t.Extra = nil
		rows = append(rows, t)
		if len(rows) == copyBatchRows || i == n-1 {
			if _, err := copyRows(ctx, e, cfg, partition, rows); err != nil {
				return err
			}
			rows = rows[:0]
		}
	}
	// Hint bits and statistics now, not during the measured reads: otherwise
	// the first read (the read limit) pays for writing them, and autovacuum
	// may start on the fresh rows while the archival runs.
	_, err := e.pool.Exec(ctx, "VACUUM (ANALYZE) "+meterstore.QuoteIdent(partition))
	return err
}

// copyBatchRows is how many rows fillWindow holds and copies at a time.
const copyBatchRows = 500_000

// runChild runs one measurement in this process and prints JSON.
func runChild(ctx context.Context, spec string) error {
	parts := strings.Split(spec, "|")
	if len(parts) == 5 && parts[0] == "import" {
		return runImportChild(ctx, parts[1], parts[2], parts[3], parts[4])
	}
	if len(parts) != 5 || parts[0] != "archive" {
		return fmt.Errorf("unknown child spec %q", spec)
	}
	dsn, warehouse, name := parts[1], parts[2], parts[3]
	postmaster, err := strconv.Atoi(parts[4])
	if err != nil {
		return fmt.Errorf("child spec %q: postmaster PID: %w", spec, err)
	}
	cfg := meterstore.TableSpec{Name: name, DisableIntegrityConstraints: true}.MustBuild()
	day := time.Date(2024, 6, 3, 0, 0, 0, 0, time.UTC)
	st, closeStore, err := openChildStore(ctx, dsn, warehouse, cfg, day)
	if err != nil {
		return err
	}
	defer closeStore()
	t := st.Tables()[0]
	cpu0, err := cpuNow(postmaster)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := t.Hot().Scan(ctx, hot.ScanRequest{Table: t.Hot().PartitionName(day)}, func([]meterstore.Row) error { return nil }); err != nil {
		return err
	}
	read := time.Since(start)
	cpu1, err := cpuNow(postmaster)
	if err != nil {
		return err
	}
	start = time.Now()
	out, err := t.Archive(ctx, day.Add(24*time.Hour+cfg.SettlementLag()), 1)
	if err != nil {
		return err
	}
	took := time.Since(start)
	cpu2, err := cpuNow(postmaster)
	if err != nil {
		return err
	}
	var rows int64
	for _, w := range out.Windows {
		rows += w.Rows
	}
	return json.NewEncoder(os.Stdout).Encode(childReport{Rows: rows, Seconds: took.Seconds(), ReadSeconds: read.Seconds(), PeakRSSkB: peakRSS(),
		ReadCPU: cpu1.minus(cpu0), ArchiveCPU: cpu2.minus(cpu1)})
}

// peakRSS reads VmHWM, the process's peak resident set, in kB.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}

// openChildStore opens a store of one table for a child process's
// measurement, its clock stopped at now; closeStore closes the store, the
// catalog and the pool.
func openChildStore(ctx context.Context, dsn, warehouse string, cfg meterstore.TableConfig, now time.Time) (st *store.Store, closeStore func(), err error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, nil, err
	}
	cat, err := catalog.Open(ctx, catalog.Options{DSN: dsn, Warehouse: warehouse, Pool: pool})
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	st, err = store.Open(ctx, store.Config{Pool: pool, Catalog: cat, Tables: []meterstore.TableConfig{cfg}, Now: func() time.Time { return now }})
	if err != nil {
		cat.Close()
		pool.Close()
		return nil, nil, err
	}
	return st, func() { st.Close(); cat.Close(); pool.Close() }, nil
}
