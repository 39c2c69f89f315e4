package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/store"
)

func init() {
	subcommands["archive"] = subcommand{"move settled windows from PostgreSQL to Iceberg", runArchive}
}

const archiveUsage = `msql archive [--table T] [--max-windows N] [--now TIMESTAMP] — archive every
settled window (end ≤ now − settlement lag) of each table, oldest first, under
the table's lease. Prints each window archived and the new watermark, or
"lease contended" when another process is archiving the table.`

func runArchive(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var name, nowFlag string
	var maxWindows int
	fs := newFlagSet("msql archive", archiveUsage, io)
	deploy.register(fs)
	fs.StringVar(&name, "table", "", "only this table (default: every table)")
	fs.IntVar(&maxWindows, "max-windows", 0, "archive at most N windows per table (0 = every settled window)")
	fs.StringVar(&nowFlag, "now", "", "pretend the clock reads this instant (default: now)")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	now := time.Now()
	if nowFlag != "" {
		t, err := parseInstant(nowFlag)
		if err != nil {
			return fmt.Errorf("%w: --now: %v", errUsage, err)
		}
		now = t
	}
	d, err := deploy.connect(ctx, io)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.openStore(ctx, func(p archive.Progress) {
		if !p.Done && p.Rows > 0 && p.Rows%500_000 == 0 {
			fmt.Fprintf(io.err, "  %s: %d rows streamed\n", p.Window.UTC().Format(time.RFC3339), p.Rows)
		}
	}); err != nil {
		return err
	}
	tables, err := d.tablesNamed(name)
	if err != nil {
		return err
	}
	var quarantined []string
	for _, t := range tables {
		out, err := t.Archive(ctx, now, maxWindows)
		printOutcome(io, out)
		if errors.Is(err, store.ErrQuarantined) {
			quarantined = append(quarantined, t.Config().Name())
			continue // the other tables archive on
		}
		if err != nil {
			return fmt.Errorf("archive %s: %w", t.Config().Name(), err)
		}
	}
	if len(quarantined) > 0 {
		return withHint(fmt.Errorf("archive: %w: %s", store.ErrQuarantined, strings.Join(quarantined, ", ")), quarantineHint)
	}
	return nil
}

// quarantineHint is what an operator of a quarantined table can do.
const quarantineHint = "undo the configuration change (the archival resumes where it stopped), or migrate the table to the new layout; queries keep answering from the stored one"

// printOutcome writes one table's archival outcome, one line per window.
func printOutcome(io stdio, out archive.Outcome) {
	if out.LeaseContended {
		fmt.Fprintf(io.out, "%s: lease contended (another process is archiving this table)\n", out.Table)
		return
	}
	if len(out.Quarantine) > 0 {
		fmt.Fprintf(io.out, "%s: quarantined, archival halted at watermark %s: %s\n", out.Table, watermarkOf(out.Watermark), strings.Join(out.Quarantine, "; "))
		return
	}
	for _, p := range out.Dropped {
		fmt.Fprintf(io.out, "%s: dropped partition %s left by an interrupted run\n", out.Table, p)
	}
	for _, w := range out.Windows {
		rec := ""
		if w.Recovered {
			rec = " (finished an interrupted run)"
		}
		fmt.Fprintf(io.out, "%s: archived %s: %d rows, %d files, %d bytes in %s%s\n", out.Table,
			w.From.UTC().Format("2006-01-02T15:04Z"), w.Rows, w.Files, w.Bytes, w.Duration.Round(time.Millisecond), rec)
	}
	if out.Watermark.IsZero() {
		fmt.Fprintf(io.out, "%s: nothing archived yet; no settled window\n", out.Table)
		return
	}
	if len(out.Windows) == 0 {
		fmt.Fprintf(io.out, "%s: nothing to archive; watermark %s\n", out.Table, out.Watermark.UTC().Format(time.RFC3339))
		return
	}
	fmt.Fprintf(io.out, "%s: watermark %s\n", out.Table, out.Watermark.UTC().Format(time.RFC3339))
}

func watermarkText(ctx context.Context, tb interface {
	Watermark(context.Context) (time.Time, error)
}) string {
	w, err := tb.Watermark(ctx)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return watermarkOf(w)
}

// watermarkOf is a watermark as the outcome lines print it.
func watermarkOf(w time.Time) string {
	if w.IsZero() {
		return "none (nothing archived)"
	}
	return w.UTC().Format(time.RFC3339)
}
