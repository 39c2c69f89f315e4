package main

import (
	"context"
	"fmt"
)

func init() {
	subcommands["audit"] = subcommand{"identity-vs-attribute check of a column", runAudit}
}

const auditUsage = `msql audit [--table T] COLUMN — check whether an attribute column behaves
like one. An attribute may change under corrections (a new version of the same
reading carries the new value); an identity column separates readings (two
values under one merge key are two readings). The check counts the merge keys
for which COLUMN takes more than one value across the stored versions of both
tiers (NULL counts as a value). 0 means the column never changed under a
correction: it could be declared an identity column without splitting a
reading's history. A non-zero count is legitimate for an attribute, and the
evidence to look at before declaring it an identity column. Merge-key columns
(identity columns included) are refused: they have one value per reading by
definition.`

func runAudit(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var name string
	fs := newFlagSet("msql audit", auditUsage, io)
	deploy.register(fs)
	fs.StringVar(&name, "table", "", "the table (default: the first configured)")
	if err := parseArgs(fs, args, 1); err != nil {
		return err
	}
	column := fs.Arg(0)
	d, tb, err := deploy.openTable(ctx, io, name)
	if err != nil {
		return err
	}
	defer d.Close()
	n, err := tb.AuditAttributeColumn(ctx, column)
	if err != nil {
		return err
	}
	tname := tb.Config().Name()
	if n == 0 {
		fmt.Fprintf(io.out, "%s.%s: 0 merge keys with more than one value — the column never changed under a correction; declaring it an identity column would not split any reading\n", tname, column)
		return nil
	}
	fmt.Fprintf(io.out, "%s.%s: %d merge keys with more than one value — the column changes under corrections: an attribute, not an identity\n", tname, column, n)
	return nil
}
