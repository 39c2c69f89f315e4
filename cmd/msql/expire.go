package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/meterstore/meterstore/catalog"
)

func init() {
	subcommands["expire-snapshots"] = subcommand{"remove Iceberg snapshots older than the retention", runExpire}
}

const expireUsage = `msql expire-snapshots [--table T] [--retention DURATION] [--min-keep N] [--dry-run]
Removes each table's snapshots older than the retention (default: the table's
configured snapshot_retention, 10 years), keeping at least --min-keep. A
retention below the 10-year compliance floor is refused unless
--allow-short-retention: an expired snapshot can no longer be read with .asof.`

func runExpire(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var name string
	var retention time.Duration
	var minKeep int
	var allowShort, dryRun bool
	fs := newFlagSet("msql expire-snapshots", expireUsage, io)
	deploy.register(fs)
	fs.StringVar(&name, "table", "", "only this table")
	fs.DurationVar(&retention, "retention", 0, "remove snapshots older than this, e.g. 87600h (0 = the table's configured retention)")
	fs.IntVar(&minKeep, "min-keep", 0, "keep at least this many snapshots (0 = the table's configured minimum)")
	fs.BoolVar(&allowShort, "allow-short-retention", false, "permit a retention below the 10-year compliance floor")
	fs.BoolVar(&dryRun, "dry-run", false, "only report what would be removed")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	d, err := deploy.open(ctx, io)
	if err != nil {
		return err
	}
	defer d.Close()
	tables, err := d.tablesNamed(name)
	if err != nil {
		return err
	}
	for _, tb := range tables {
		cfg := tb.Config()
		ret, keep := retention, minKeep
		if ret == 0 {
			ret = cfg.SnapshotRetention()
		}
		if keep == 0 {
			keep = cfg.MinSnapshotsToKeep()
		}
		if dryRun {
			if ret < catalog.MinRetention && !allowShort {
				return withHint(fmt.Errorf("%s: retention %s is below the compliance floor %s: %w", cfg.Name(), ret, catalog.MinRetention, catalog.ErrRetentionTooShort), "--allow-short-retention, if compliance permits")
			}
			snaps, err := tb.Cold().Snapshots(ctx)
			if err != nil {
				return err
			}
			old := 0
			for _, s := range snaps {
				if time.Since(s.CommittedAt) > ret {
					old++
				}
			}
			would := min(old, max(0, len(snaps)-keep))
			fmt.Fprintf(io.out, "%s: %d snapshots, %d older than %s; would remove %d (keeping at least %d)\n", cfg.Name(), len(snaps), old, ret, would, keep)
			continue
		}
		n, err := tb.Cold().ExpireSnapshots(ctx, ret, keep, allowShort)
		if errors.Is(err, catalog.ErrRetentionTooShort) {
			return withHint(err, "--allow-short-retention, if compliance permits")
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(io.out, "%s: removed %d snapshots older than %s (kept at least %d)\n", cfg.Name(), n, ret, keep)
	}
	return nil
}
