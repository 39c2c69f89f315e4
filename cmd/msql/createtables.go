package main

import (
	"context"
	"fmt"
	"strings"
)

func init() {
	subcommands["create-tables"] = subcommand{"create the configured tables in PostgreSQL and Iceberg", runCreateTables}
}

const createTablesUsage = `msql create-tables — create every configured table if missing: the
PostgreSQL parent with its partitions, constraints and exclusions, and the
Iceberg table with its partition spec (an existing table is checked, not
changed). Without --config the table is readings_versions with identity column tenant.`

func runCreateTables(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	fs := newFlagSet("msql create-tables", createTablesUsage, io)
	deploy.register(fs)
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	d, err := deploy.connect(ctx, io)
	if err != nil {
		return err
	}
	defer d.Close()
	before, err := d.existingTables(ctx)
	if err != nil {
		return err
	}
	if err := d.openStore(ctx, nil); err != nil {
		return err
	}
	existed := map[string]bool{}
	for _, n := range before {
		existed[n] = true
	}
	for _, tb := range d.store.Tables() {
		c := tb.Config()
		state := "created"
		if existed[c.Name()] {
			state = "exists"
		}
		fmt.Fprintf(io.out, "%s (resolved as %s): %s; merge key %s; watermark %s\n", c.Name(), c.ResolvedName(), state,
			strings.Join(c.MergeKey(), ", "), watermarkText(ctx, tb))
	}
	return nil
}
