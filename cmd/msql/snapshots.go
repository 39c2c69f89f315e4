package main

import (
	"context"
	"flag"
	"fmt"
)

func init() {
	subcommands["snapshots"] = subcommand{"list each table's Iceberg snapshots and their watermarks", runSnapshots}
}

const snapshotsUsage = `msql snapshots [--table T] — the Iceberg snapshots of each table, oldest first,
with the tiering watermark each one recorded (what .asof pins).`

func runSnapshots(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var name, format string
	fs := newFlagSet("msql snapshots", snapshotsUsage, io)
	deploy.register(fs)
	fs.StringVar(&name, "table", "", "only this table")
	fs.StringVar(&format, "format", "table", "output format: "+fmt.Sprint(formats))
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	d, err := deploy.open(ctx, io)
	if err != nil {
		return err
	}
	defer d.Close()
	t, err := snapshotsTable(ctx, d, name)
	if err != nil {
		return err
	}
	return render(io.out, t, renderOptions{format: format, nullText: "NULL", values: valueFormatter(ctx, d.engine.DB())})
}

// snapshotsTable lists the snapshots of one table ("" = every table).
func snapshotsTable(ctx context.Context, d *deployment, name string) (table, error) {
	t := table{columns: []string{"table", "snapshot", "committed_at", "operation", "watermark", "current"}}
	for _, tb := range d.store.Tables() {
		if name != "" && tb.Config().Name() != name && tb.Config().ResolvedName() != name {
			continue
		}
		if err := tb.Cold().Refresh(ctx); err != nil {
			return t, err
		}
		snaps, err := tb.Cold().Snapshots(ctx)
		if err != nil {
			return t, err
		}
		cur := tb.Cold().CurrentSnapshotID()
		for _, s := range snaps {
			var w any
			if s.Watermark != nil {
				w = s.Watermark.UTC()
			}
			t.rows = append(t.rows, []any{tb.Config().Name(), s.ID, s.CommittedAt.UTC(), s.Operation, w, s.ID == cur})
		}
	}
	if name != "" && len(t.rows) == 0 {
		if _, err := d.table(name); err != nil {
			return t, err
		}
	}
	return t, nil
}

// parseArgs parses a subcommand's flags and checks its positional arguments.
// Flags may come before, between or after the positional arguments.
func parseArgs(fs *flag.FlagSet, args []string, positional int) error {
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != positional {
		fs.Usage()
		return fmt.Errorf("%w: %s takes %d argument(s), got %d", errUsage, fs.Name(), positional, len(pos))
	}
	return fs.Parse(pos) // leaves the positional arguments in fs.Args()
}

// parseInterleaved parses flags that may come before, between or after the
// positional arguments, and returns those.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
