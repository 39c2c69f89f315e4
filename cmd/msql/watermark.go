package main

import (
	"context"
	"fmt"
	"time"
)

func init() {
	subcommands["watermark"] = subcommand{"restore a table's lost tiering watermark (msql watermark restore --help)", runWatermark}
}

const watermarkUsage = `msql watermark restore [--table T] [--at TIMESTAMP] — commit the tiering
watermark again to a table that lost it: an out-of-band commit (Spark, PyIceberg)
carries no meterstore.tiering_watermark, and once the snapshots MeterStore
wrote are expired nothing says where the cold tier ends, so queries and
archival refuse the table. Without --at the value is derived: the end of the
partition holding the newest cold row. It is refused unless every cold row
lies below it and no row in PostgreSQL does. msql snapshots shows which
snapshots carry a watermark.`

func runWatermark(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var name, atFlag string
	fs := newFlagSet("msql watermark", watermarkUsage, io)
	deploy.register(fs)
	fs.StringVar(&name, "table", "", "the table (default: the first configured)")
	fs.StringVar(&atFlag, "at", "", "the watermark to commit, e.g. 2026-03-01T00:00:00Z (default: derived from the tiers)")
	if err := parseArgs(fs, args, 1); err != nil {
		return err
	}
	if fs.Arg(0) != "restore" {
		fs.Usage()
		return fmt.Errorf("%w: msql watermark knows one action, restore; got %q", errUsage, fs.Arg(0))
	}
	var at time.Time
	if atFlag != "" {
		t, err := parseInstant(atFlag)
		if err != nil {
			return fmt.Errorf("%w: --at: %v", errUsage, err)
		}
		at = t
	}
	d, tb, err := deploy.openTable(ctx, io, name)
	if err != nil {
		return err
	}
	defer d.Close()
	w, err := tb.RestoreWatermark(ctx, at)
	if err != nil {
		return err
	}
	fmt.Fprintf(io.out, "%s: watermark restored at %s\n", tb.Config().Name(), w.UTC().Format(time.RFC3339))
	return nil
}
