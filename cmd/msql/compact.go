package main

import (
	"context"
	"fmt"
	"time"

	"github.com/meterstore/meterstore/catalog"
)

func init() {
	subcommands["compact"] = subcommand{"merge each month's Iceberg files into a few sorted ones", runCompact}
}

const compactUsage = `msql compact [--table T] [--month YYYY-MM] [--dry-run] [--force] [--target-size BYTES]
Merges every file of each closed month (a month entirely below the tiering
watermark), whatever its versions, into files sorted like the table: the
current version of every reading in files the engine reads without
resolution, the versions they supersede in one more file. Every version is
kept (readings_versions, .asof and .known-at answer as before). One commit per
month and partition; the watermark does not change. A month already compacted
is left alone unless --force, or until a late correction lands in it. The open
month (holding the watermark) is compacted as its days are archived: the month
so far, once it holds --open-month-files files no compaction wrote. Files a
crash leaves behind are removed by msql maintenance --compact past their
safety age.`

func runCompact(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var name, month string
	var dryRun, force bool
	var target int64
	var openFiles int
	fs := newFlagSet("msql compact", compactUsage, io)
	deploy.register(fs)
	fs.StringVar(&name, "table", "", "only this table (default: every table)")
	fs.StringVar(&month, "month", "", "only this month, e.g. 2025-09 (default: every month due)")
	fs.BoolVar(&dryRun, "dry-run", false, "only list the partitions that would be compacted")
	fs.BoolVar(&force, "force", false, "also rewrite months that are compacted already")
	fs.Int64Var(&target, "target-size", catalog.DefaultCompactTargetBytes, "close a compacted file at the next MaLo once it holds this many bytes")
	fs.IntVar(&openFiles, "open-month-files", catalog.DefaultOpenMonthFiles, "compact the open month once it holds this many new files (0: never)")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	opt := catalog.CompactOptions{DryRun: dryRun, Force: force, TargetFileBytes: target, OpenMonthFiles: openFiles}
	switch {
	case openFiles < 0:
		return withHint(fmt.Errorf("%w: --open-month-files %d is negative", errUsage, openFiles), "--open-month-files 0 leaves the open month alone")
	case openFiles == 0:
		opt.OpenMonthFiles = -1
	}
	if month != "" {
		m, err := time.Parse("2006-01", month)
		if err != nil {
			return withHint(fmt.Errorf("%w: --month %q is not a month", errUsage, month), "--month 2025-09")
		}
		opt.Month = m
	}
	if target <= 0 {
		return fmt.Errorf("%w: --target-size must be positive", errUsage)
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
	for _, t := range tables {
		table := t.Config().Name()
		opt.Progress = func(p catalog.CompactProgress) {
			if !p.Done {
				fmt.Fprintf(io.err, "  %s %s (%d of %d): %d of %d rows merged\n", table, p.Partition, p.Index, p.Of, p.Rows, p.Total)
			}
		}
		res, err := t.Cold().Compact(ctx, opt)
		for _, p := range res.Partitions {
			if dryRun {
				fmt.Fprintf(io.out, "%s: would compact %s: %d files, %d rows, %s\n", table, p.Partition, p.FilesRemoved, p.Rows, byteSize(p.BytesBefore))
				continue
			}
			fmt.Fprintf(io.out, "%s: compacted %s: %d files (%s) → %d files (%s), %d rows, %d of them superseded versions\n", table, p.Partition,
				p.FilesRemoved, byteSize(p.BytesBefore), p.FilesAdded, byteSize(p.BytesAfter), p.Rows, p.Superseded)
		}
		if err != nil {
			return err
		}
		switch {
		case len(res.Partitions) == 0:
			fmt.Fprintf(io.out, "%s: nothing to compact (%d partitions compacted already, open with fewer new files than --open-month-files, or not in --month)\n", table, res.Skipped)
		case res.Skipped > 0:
			fmt.Fprintf(io.out, "%s: %d partitions left alone (compacted already, open with fewer new files than --open-month-files, or not in --month)\n", table, res.Skipped)
		}
	}
	return nil
}

// byteSize renders n bytes for people.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
