package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"time"

	"meterstore/archive"
)

func init() {
	subcommands["maintenance"] = subcommand{"run archival (and optional snapshot expiry) on an interval until stopped", runMaintenance}
}

const maintenanceUsage = `msql maintenance [--interval 15m] [--max-windows N] [--expire-snapshots] [--once]
                 [--health ADDR] [--log-format text|json] [deployment flags]
A long-running scheduler: every interval it archives each table's settled
windows (under the table's lease, so every replica may run one) and, with
--expire-snapshots, expires snapshots past the configured retention. Stops on
SIGINT/SIGTERM after the run in progress. One log line per table and run
(stderr); --health serves /healthz, /readyz and Prometheus /metrics
(docs/runbook.md).`

func runMaintenance(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var opsf opsFlags
	var interval time.Duration
	var maxWindows int
	var expire, once bool
	fs := newFlagSet("msql maintenance", maintenanceUsage, io)
	deploy.register(fs)
	opsf.register(fs)
	fs.DurationVar(&interval, "interval", 15*time.Minute, "pause between runs")
	fs.IntVar(&maxWindows, "max-windows", 32, "windows per table per run (0 = no limit)")
	fs.BoolVar(&expire, "expire-snapshots", false, "also expire snapshots past each table's retention")
	fs.BoolVar(&once, "once", false, "run once and exit")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	if interval <= 0 {
		return fmt.Errorf("%w: --interval must be positive", errUsage)
	}
	log, err := opsf.logger(io.err)
	if err != nil {
		return err
	}
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
	var archivers []*archive.Archiver
	for _, t := range d.store.Tables() {
		archivers = append(archivers, t.Archiver())
	}
	s := archive.Maintenance(archivers...).Interval(interval).MaxWindows(maxWindows).ExpireSnapshots(expire).
		Report(func(out archive.Outcome, err error) {
			fmt.Fprintf(io.out, "%s ", time.Now().UTC().Format(time.RFC3339))
			printOutcome(io, out)
			runLog(log, out, err)
			o.sample(ctx, true)
		})
	if once {
		return s.RunOnce(ctx)
	}
	log.Info("maintenance started", "interval", interval.String(), "tables", len(archivers), "expire_snapshots", expire)
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
	if err != nil {
		log.Error("maintenance run failed", append(attrs, "err", err.Error())...)
		return
	}
	log.Info("maintenance run", attrs...)
}
