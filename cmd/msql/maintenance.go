package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"time"

	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/catalog"
)

func init() {
	subcommands["maintenance"] = subcommand{"run archival (and optional snapshot expiry) on an interval until stopped", runMaintenance}
}

const maintenanceUsage = `msql maintenance [--interval 15m] [--max-windows N] [--compact] [--expire-snapshots] [--once]
                 [--health ADDR] [--log-format text|json] [deployment flags]
A long-running scheduler: every interval it archives each table's settled
windows (under the table's lease, so every replica may run one). With
--compact it also compacts each closed month (msql compact) once its newest
file is --compact-quiet old — again after late corrections to it have gone
quiet —, the open month's archived days as they accumulate, and deletes orphan files (left by a crash before a commit) older than
--orphan-age. With --expire-snapshots it expires snapshots past the configured
retention. Each run first applies the --config file's table declarations if
the file changed (a column added with msql create-tables), so archival goes on
in the new layout. Stops on SIGINT/SIGTERM after the run in progress. One log line per
table and run (stderr); --health serves /healthz, /readyz and Prometheus
/metrics (docs/runbook.md).`

func runMaintenance(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var opsf opsFlags
	var interval time.Duration
	var maxWindows int
	var expire, once, compact bool
	var quiet, orphanAge time.Duration
	fs := newFlagSet("msql maintenance", maintenanceUsage, io)
	deploy.register(fs)
	opsf.register(fs)
	fs.DurationVar(&interval, "interval", 15*time.Minute, "pause between runs")
	fs.IntVar(&maxWindows, "max-windows", 32, "windows per table per run (0 = no limit)")
	fs.BoolVar(&expire, "expire-snapshots", false, "also expire snapshots past each table's retention")
	fs.BoolVar(&compact, "compact", false, "also compact closed months and delete orphan files")
	fs.DurationVar(&quiet, "compact-quiet", 0, "compact a month once its newest file is this old (0 = the table's settlement lag)")
	fs.DurationVar(&orphanAge, "orphan-age", catalog.DefaultOrphanSafetyAge, "with --compact, delete orphan files older than this (at least 1h)")
	fs.BoolVar(&once, "once", false, "run once and exit")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	if interval <= 0 {
		return fmt.Errorf("%w: --interval must be positive", errUsage)
	}
	if compact && orphanAge < archive.MinOrphanAge {
		return withHint(fmt.Errorf("%w: --orphan-age %s is under %s: a commit in flight could lose its files", errUsage, orphanAge, archive.MinOrphanAge), "--orphan-age 72h")
	}
	log, err := opsf.logger(io.err)
	if err != nil {
		return err
	}
	deploy.log = log
	d, err := deploy.open(ctx, io)
	if err != nil {
		return err
	}
	defer d.Close()
	o, err := newOps(ctx, d, log, "msql maintenance", opsf.stateEvery)
	if err != nil {
		return err
	}
	defer o.Close()
	o.betweenRuns = true
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	if opsf.health != "" {
		ln, err := net.Listen("tcp", opsf.health)
		if err != nil {
			return fmt.Errorf("health: %w", err)
		}
		log.Info("listening", "server", "health", "addr", ln.Addr().String())
		go func() {
			if err := o.serveHealth(ctx, ln); err != nil {
				log.Error("health server stopped", "err", err.Error())
			}
		}()
	}
	tables := func(ctx context.Context) []*archive.Archiver {
		applyConfiguration(ctx, d, false, log)
		var archivers []*archive.Archiver
		for _, t := range d.store.Tables() {
			archivers = append(archivers, t.Archiver())
		}
		return archivers
	}
	s := archive.Maintenance().Follow(tables).Interval(interval).MaxWindows(maxWindows).ExpireSnapshots(expire).Compact(compact, quiet).
		Report(func(out archive.Outcome, err error) {
			fmt.Fprintf(io.out, "%s ", time.Now().UTC().Format(time.RFC3339))
			printOutcome(io, out)
			printMaintenance(io, out)
			runLog(log, out, err)
			o.sample(ctx, true)
		})
	if compact {
		s.DeleteOrphans(orphanAge)
	}
	if once {
		return s.RunOnce(ctx)
	}
	log.Info("maintenance started", "interval", interval.String(), "tables", len(d.store.Tables()), "expire_snapshots", expire)
	<-s.Start(ctx)
	return nil
}

// runLog is the one log line per table and run, with the outcome's fields.
func runLog(log *slog.Logger, out archive.Outcome, err error) {
	var rows, bytes int64
	var files int
	for _, w := range out.Windows {
		rows, bytes, files = rows+w.Rows, bytes+w.Bytes, files+w.Files
	}
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "error"
	case out.LeaseContended:
		outcome = "contended"
	}
	attrs := []any{"table", out.Table, "task", "archival", "outcome", outcome, "lease_contended", out.LeaseContended,
		"windows", len(out.Windows), "rows", rows, "files", files, "bytes", bytes, "duration_ms", float64(out.Duration.Microseconds()) / 1000}
	if !out.Watermark.IsZero() {
		attrs = append(attrs, "watermark", out.Watermark.UTC().Format(time.RFC3339))
	}
	if len(out.Dropped) > 0 {
		attrs = append(attrs, "dropped", out.Dropped)
	}
	if len(out.Compacted) > 0 || out.CompactionContended {
		attrs = append(attrs, "compacted_partitions", len(out.Compacted), "compaction_contended", out.CompactionContended)
	}
	if len(out.OrphansDeleted) > 0 {
		attrs = append(attrs, "orphans_deleted", len(out.OrphansDeleted))
	}
	if err != nil {
		log.Error("maintenance run failed", append(attrs, "err", err.Error())...)
		return
	}
	log.Info("maintenance run", attrs...)
}

// printMaintenance writes what a scheduled run compacted and cleaned.
func printMaintenance(io stdio, out archive.Outcome) {
	if out.CompactionContended {
		fmt.Fprintf(io.out, "%s: compaction lease contended (another process is maintaining this table)\n", out.Table)
	}
	for _, p := range out.Compacted {
		fmt.Fprintf(io.out, "%s: compacted %s: %d files → %d, %d rows\n", out.Table, p.Partition, p.FilesRemoved, p.FilesAdded, p.Rows)
	}
	if n := len(out.OrphansDeleted); n > 0 {
		fmt.Fprintf(io.out, "%s: deleted %d orphan files\n", out.Table, n)
	}
}
