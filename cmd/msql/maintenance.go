package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"meterstore/archive"
)

func init() {
	subcommands["maintenance"] = subcommand{"run archival (and optional snapshot expiry) on an interval until stopped", runMaintenance}
}

const maintenanceUsage = `msql maintenance [--interval 15m] [--max-windows N] [--expire-snapshots] [--once]
A long-running scheduler: every interval it archives each table's settled
windows (under the table's lease, so every replica may run one) and, with
--expire-snapshots, expires snapshots past the configured retention. Stops on
SIGINT/SIGTERM after the run in progress.`

func runMaintenance(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var interval time.Duration
	var maxWindows int
	var expire, once bool
	fs := newFlagSet("msql maintenance", maintenanceUsage, io)
	deploy.register(fs)
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
	d, err := deploy.open(ctx, io)
	if err != nil {
		return err
	}
	defer d.Close()
	var archivers []*archive.Archiver
	for _, t := range d.store.Tables() {
		archivers = append(archivers, t.Archiver())
	}
	s := archive.Maintenance(archivers...).Interval(interval).MaxWindows(maxWindows).ExpireSnapshots(expire).
		Report(func(out archive.Outcome, err error) {
			fmt.Fprintf(io.out, "%s ", time.Now().UTC().Format(time.RFC3339))
			printOutcome(io, out)
			if err != nil {
				fmt.Fprintf(io.err, "msql maintenance: %s: %v\n", out.Table, err)
			}
		})
	if once {
		return s.RunOnce(ctx)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	fmt.Fprintf(io.err, "msql maintenance: every %s over %d table(s); Ctrl-C stops\n", interval, len(archivers))
	<-s.Start(ctx)
	return nil
}
