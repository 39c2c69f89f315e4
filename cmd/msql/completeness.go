package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

func init() {
	subcommands["completeness"] = subcommand{"expected vs actual intervals per series over balancing days FROM..TO", runCompleteness}
}

const completenessUsage = `msql completeness [--table T] [--all] FROM TO — per series (malo_id, obis_code,
identity columns, sparte, resolution): the intervals expected on the balancing
days FROM ≤ day < TO (DST-aware, each Sparte on its own day: gas 06:00–06:00)
against the resolved readings there, with missing and surplus summed per day
(never netted), the first gap, substituted and non-billable counts. Only series
with a reading in range are listed (a meter that sent nothing is unknown to the
store); --all lists complete series too. It is the engine's
meter_completeness(FROM, TO), the same query you can run in the shell, so both
tiers count.`

func runCompleteness(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var name, format string
	var all bool
	fs := newFlagSet("msql completeness", completenessUsage, io)
	deploy.register(fs)
	fs.StringVar(&name, "table", "", "the table (default: the first configured)")
	fs.StringVar(&format, "format", "table", "output format: "+strings.Join(formats, ", "))
	fs.BoolVar(&all, "all", false, "list complete series too")
	if err := parseArgs(fs, args, 2); err != nil {
		return err
	}
	from, err1 := time.Parse("2006-01-02", fs.Arg(0))
	to, err2 := time.Parse("2006-01-02", fs.Arg(1))
	if err1 != nil || err2 != nil || !from.Before(to) {
		return withHint(fmt.Errorf("%w: FROM and TO are balancing days (YYYY-MM-DD) with FROM < TO", errUsage), "msql completeness 2025-10-01 2025-11-01")
	}
	if err := validFormat(format); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	d, tb, err := deploy.openTable(ctx, io, name)
	if err != nil {
		return err
	}
	defer d.Close()
	// The engine's meter_completeness: the same plan as any query of readings
	// (both tiers, split at the watermark), the DST-aware expectation per day.
	q := "SELECT * EXCLUDE (complete) FROM meter_completeness(?, ?, ?)"
	if !all {
		q += " WHERE NOT complete"
	}
	q += " ORDER BY ALL"
	res, err := d.engine.Query(ctx, q, from.Format("2006-01-02"), to.Format("2006-01-02"), tb.Config().ResolvedName())
	if err != nil {
		return fmt.Errorf("completeness: %w", err)
	}
	if err := render(io.out, table{columns: res.Columns, types: res.Types, rows: res.Rows}, renderOptions{format: format, nullText: "NULL", values: valueFormatter(ctx, d.engine.DB())}); err != nil {
		return err
	}
	if format == "table" {
		fmt.Fprintf(io.out, "-- %s\n", res.Provenance)
	}
	return nil
}
