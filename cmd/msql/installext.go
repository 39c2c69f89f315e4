package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/settings"
)

func init() {
	subcommands["install-extensions"] = subcommand{"install DuckDB's postgres, iceberg, avro and httpfs extensions for this msql's DuckDB", runInstallExtensions}
}

const installExtensionsUsage = `msql install-extensions [--dir DIR] [--repository URL|DIR] [--config FILE]
Runs DuckDB's INSTALL for the extensions msql loads when present (postgres_scanner,
avro, iceberg, httpfs) in msql's own DuckDB — so the builds fetched are the ones
this release loads — into DIR, and loads each back. DIR defaults to the
configuration's [engine] extension_directory, else $MSQL_DUCKDB_EXTENSIONS.
--repository is DuckDB's core repository (extensions.duckdb.org) unless given: a
mirror's URL, or a directory laid out as <version>/<platform>/<name>.duckdb_extension.
Without network access to either, go tool task extensions installs the same
builds from their PyPI wheels.`

func runInstallExtensions(ctx context.Context, args []string, io stdio) error {
	var dir, repository, config string
	fs := newFlagSet("msql install-extensions", installExtensionsUsage, io)
	fs.StringVar(&dir, "dir", "", "the extension directory to install into")
	fs.StringVar(&repository, "repository", "", "where to install from (default: DuckDB's core repository)")
	fs.StringVar(&config, "config", "", "meterstore.toml whose [engine] extension_directory is the default --dir")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	if dir == "" {
		var s settings.Settings
		if config != "" {
			var err error
			if s, err = settings.LoadSettings(config); err != nil {
				return err
			}
		}
		// The directory the other commands load from: the configuration's, else the environment's.
		var d deployment
		if err := d.configureExtensions(s.Engine); err != nil {
			return err
		}
		dir = d.extensions.Directory
	}
	if dir == "" {
		return withHint(fmt.Errorf("%w: no extension directory: pass --dir, or set [engine] extension_directory or %s", errUsage, engine.EnvExtensionDirectory),
			"msql install-extensions --dir ~/.local/share/msql/extensions")
	}
	done, err := engine.InstallExtensions(ctx, dir, repository)
	if len(done) > 0 {
		fmt.Fprintf(io.out, "installed into %s: %s\n", dir, strings.Join(done, ", "))
	}
	if err != nil {
		hint := "check the repository is reachable; without network access, go tool task extensions installs the pinned builds from PyPI"
		return withHint(err, hint)
	}
	fmt.Fprintf(io.out, "set [engine] extension_directory = %q (or %s) for msql to load them\n", dir, engine.EnvExtensionDirectory)
	return nil
}
