package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/meterstore/meterstore/store"
)

func init() {
	subcommands["create-tables"] = subcommand{"create the configured tables in PostgreSQL and Iceberg", runCreateTables}
}

const createTablesUsage = `msql create-tables — create every configured table if missing: the
PostgreSQL parent with its partitions, constraints and exclusions, and the
Iceberg table with its partition spec. An existing table is checked against the
configuration: a nullable attribute column declared after the existing ones is
added to both tiers (Iceberg first); a change that narrows the stored schema
(a dropped column, a new identity column, NOT NULL, a retype) changes nothing and
quarantines the table (exit status 4, each change named). Without --config the
table is readings_versions with identity column tenant.`

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
	var quarantined []string
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
		schema := tb.SchemaState()
		if len(schema.Added) > 0 {
			fmt.Fprintf(io.out, "%s: added columns %s (Iceberg and PostgreSQL)\n", c.Name(), strings.Join(schema.Added, ", "))
		}
		for _, u := range schema.Unenforced {
			fmt.Fprintf(io.out, "%s: warning: %s\n", c.Name(), u)
		}
		if len(schema.Quarantine) > 0 {
			fmt.Fprintf(io.out, "%s: quarantined, nothing changed: %s\n", c.Name(), strings.Join(schema.Quarantine, "; "))
			quarantined = append(quarantined, c.Name())
		}
	}
	if len(quarantined) > 0 {
		return withHint(fmt.Errorf("%w: %s", store.ErrQuarantined, strings.Join(quarantined, ", ")), quarantineHint)
	}
	return nil
}
