package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/meterstore/meterstore/embedded"
)

func init() {
	subcommands["status"] = subcommand{"print the deployment's PostgreSQL DSN and Iceberg warehouse", runStatus}
	subcommands["stop"] = subcommand{"stop the embedded default's PostgreSQL when no msql process uses it", runStop}
}

const statusUsage = `msql status — where the deployment lives: its PostgreSQL (the hot tier and
the SQL catalog) as a DSN, and its Iceberg warehouse. Without --config, --dsn
or --warehouse it looks at the embedded default under $MSQL_HOME and starts
nothing. Every msql process sharing a home uses one PostgreSQL: whichever
starts it, it runs until the last of them exits (a shell, msql serve, a job
through embedded.Open), or until msql stop after msql --keep-running.
With --env it prints MSQL_DSN=… and MSQL_WAREHOUSE=… for a job to read
(the DSN unredacted), and fails when there is no running PostgreSQL to name.`

func runStatus(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var env bool
	fs := newFlagSet("msql status", statusUsage, io)
	deploy.register(fs)
	fs.BoolVar(&env, "env", false, "print MSQL_DSN=… and MSQL_WAREHOUSE=… lines (shell syntax) instead")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	if deploy.config == "" && deploy.dsn == "" && deploy.warehouse == "" {
		return embeddedStatus(deploy.homeDir(), env, io)
	}
	d, err := deploy.connect(ctx, io)
	if err != nil {
		return err
	}
	defer d.Close()
	if env {
		printEnv(io, d.dsn, d.warehouse)
		return nil
	}
	fmt.Fprintf(io.out, "postgres:  %s (reachable)\nwarehouse: %s\n", redact(d.dsn), d.warehouse)
	return nil
}

// embeddedStatus reports the embedded default under home without starting it.
func embeddedStatus(home string, env bool, io stdio) error {
	d, err := embedded.Find(home)
	if env {
		if err != nil {
			return withHint(err, "msql --keep-running -c 'SELECT 1' starts it and leaves it running")
		}
		printEnv(io, d.DSN, d.Warehouse)
		return nil
	}
	fmt.Fprintf(io.out, "embedded default: %s\n", home)
	switch {
	case errors.Is(err, embedded.ErrNotRunning):
		fmt.Fprintf(io.out, "postgres:  not running (msql --keep-running leaves it running; a job starts it with embedded.Open)\nwarehouse: file://%s/warehouse\n", home)
		return nil
	case err != nil:
		return err
	}
	fmt.Fprintf(io.out, "postgres:  %s (running)\nwarehouse: %s\n", d.DSN, d.Warehouse)
	return nil
}

func printEnv(io stdio, dsn, warehouse string) {
	fmt.Fprintf(io.out, "MSQL_DSN=%s\nMSQL_WAREHOUSE=%s\n", shellQuote(dsn), shellQuote(warehouse))
}

// shellQuote makes s one word for a POSIX shell's eval.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

const stopUsage = `msql stop — stop the embedded default's PostgreSQL under $MSQL_HOME (or
--home), which msql --keep-running, or a process that was killed, left
running. It refuses while an msql process (a shell, msql serve, a job)
uses it, naming each by pid and command line: quit those first, the last
of them stops it anyway.`

func runStop(ctx context.Context, args []string, io stdio) error {
	var home string
	fs := newFlagSet("msql stop", stopUsage, io)
	fs.StringVar(&home, "home", "", "data directory of the embedded default (default $MSQL_HOME, else ~/.local/share/msql)")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	if home == "" {
		home = embedded.Home()
	}
	if _, err := embedded.Find(home); errors.Is(err, embedded.ErrNotRunning) {
		fmt.Fprintf(io.out, "postgres:  not running (%s)\n", home)
		return nil
	}
	if err := embedded.Stop(ctx, home); err != nil {
		if errors.Is(err, embedded.ErrInUse) {
			return withHint(err, "quit the shells and msql serve using it; the last one to exit stops it")
		}
		return err
	}
	fmt.Fprintf(io.out, "postgres:  stopped (%s)\n", home)
	return nil
}
