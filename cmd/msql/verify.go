package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/meterstore/meterstore/store"
)

func init() {
	subcommands["verify"] = subcommand{"check the tiering invariant (exit 3 when violated)", runVerify}
}

const verifyUsage = `msql verify [--table T] — check invariant 1 for every table: no row below the
watermark is still in PostgreSQL; and that no stored row carries a unit its sparte
cannot have (electricity in m³: a writer around the store, a foreign file in the
cold tier), each pair named with its rows and tier; that no stored row carries a
balancing_day other than the day its "from" and sparte give (a foreign file
again: meter_balancing_day answers from the stored column); and that no cold interval
reaching above the watermark overlaps a row PostgreSQL holds at its version or of
another operator (a foreign file again), the first such pair named. Exit status 0
when all hold, 3 when rows sit below the watermark in PostgreSQL, carry such a
unit pair or balancing day or contradict across the tiers, 4 when they
hold but a table is quarantined (its
configuration narrows the stored schema, each change named: archival and writes
halt, queries answer from the stored layout), 1 when it could not be checked.
Partitions left detached by an interrupted archival run are reported as a warning
(exit 0): msql archive recovers them.`

// verifyFailed is returned when the tiering invariant does not hold; msql
// exits with status 3 so a monitoring job can tell it from a failure to check.
type verifyFailed struct{ report string }

func (v *verifyFailed) Error() string { return v.report }

func runVerify(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var name string
	fs := newFlagSet("msql verify", verifyUsage, io)
	deploy.register(fs)
	fs.StringVar(&name, "table", "", "only this table")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	d, err := deploy.open(ctx, io)
	if err != nil {
		return err
	}
	defer d.Close()
	var bad, mixed, misdated, contradicted, quarantined []string
	for _, tb := range d.store.Tables() {
		if name != "" && tb.Config().Name() != name && tb.Config().ResolvedName() != name {
			continue
		}
		r, err := tb.VerifyInvariant(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(io.out, r.String())
		if len(r.Detached) > 0 {
			// Not a violation: the rows of a detached partition are out of every
			// query, and the next archival run recovers them.
			fmt.Fprintf(io.out, "%s: warning: partitions detached and not dropped (left by an interrupted archival run; msql archive recovers them): %s\n",
				r.Table, strings.Join(r.Detached, ", "))
		}
		if !r.Healthy {
			bad = append(bad, r.String())
		}
		pairs, err := tb.UnitPairViolations(ctx)
		if err != nil {
			return err
		}
		for _, v := range pairs {
			fmt.Fprintf(io.out, "%s: %s\n", r.Table, v)
			mixed = append(mixed, r.Table+": "+v.String())
		}
		days, err := tb.BalancingDayMismatches(ctx)
		if err != nil {
			return err
		}
		if days.Rows > 0 {
			fmt.Fprintf(io.out, "%s: %s\n", r.Table, days)
			misdated = append(misdated, r.Table+": "+days.String())
		}
		conflict, err := tb.ContradictionAcrossTiers(ctx)
		if err != nil {
			return err
		}
		if conflict != nil {
			fmt.Fprintf(io.out, "%s: an interval of the cold tier contradicts the hot tier's rows: %v\n", r.Table, conflict)
			contradicted = append(contradicted, r.Table+": "+conflict.Error())
		}
		if len(r.Quarantine) > 0 {
			quarantined = append(quarantined, r.Table)
		}
	}
	if len(bad) > 0 {
		return withHint(&verifyFailed{report: "tiering invariant violated: " + strings.Join(append(bad, mixed...), "; ")}, "rows below the watermark are outside every query; find how they got there (a write that bypassed the store's routing?) before moving them")
	}
	if len(mixed) > 0 {
		return withHint(&verifyFailed{report: "rows in a unit their sparte cannot have: " + strings.Join(mixed, "; ")},
			"every SQL sum over the sparte adds them to values in its own unit; find the writer that bypassed the store and undo its writes (a correction in the sparte's unit supersedes them in the resolved relation, not in the versions)")
	}
	if len(misdated) > 0 {
		return withHint(&verifyFailed{report: "rows whose balancing_day is not their day: " + strings.Join(misdated, "; ")},
			"the store derives the column from \"from\" and sparte, so a writer around it wrote them: find the file committed to Iceberg out of band (system.snapshots) and rewrite or remove it with the tool that added it")
	}
	if len(contradicted) > 0 {
		return withHint(&verifyFailed{report: "an interval of the cold tier contradicts the hot tier's rows: " + strings.Join(contradicted, "; ")},
			"no write of the store leaves such a pair: find the file committed to Iceberg out of band (system.snapshots) and remove it with the tool that added it; deliver its values through the store if they are needed")
	}
	if len(quarantined) > 0 {
		return withHint(fmt.Errorf("%w: %s", store.ErrQuarantined, strings.Join(quarantined, ", ")), quarantineHint)
	}
	return nil
}
