package main

import (
	"context"
	"errors"
	"fmt"
)

func init() {
	subcommands["audit"] = subcommand{"identity-vs-attribute check of a column (not available yet)", runAudit}
}

const auditUsage = `msql audit COLUMN — check whether COLUMN behaves as the table declares it:
an identity column must separate readings (two values under one merge key are
two readings), an attribute must not (a changed value is a new version of the
same reading). NOT AVAILABLE YET: the store has no audit API.`

// errNotAvailable marks a command whose backing API does not exist yet.
var errNotAvailable = errors.New("not available yet")

func runAudit(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var name string
	fs := newFlagSet("msql audit", auditUsage, io)
	deploy.register(fs)
	fs.StringVar(&name, "table", "", "the table (default: the first configured)")
	if err := parseArgs(fs, args, 1); err != nil {
		return err
	}
	return fmt.Errorf("audit %s: %w: no identity-vs-attribute check exists in store/ or engine/ (needed: store.Table.AuditColumn(ctx, column) reporting, per value pattern, readings whose versions disagree on the column and merge keys it splits)", fs.Arg(0), errNotAvailable)
}
