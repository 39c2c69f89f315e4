package engine

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// InstallableExtensions are the extensions the engine loads when present:
// the postgres and iceberg paths (iceberg reads its manifests with avro) and
// httpfs for a warehouse on object storage.
var InstallableExtensions = []string{extPostgres, extAvro, extIceberg, extHTTPFS}

// InstallExtensions runs DuckDB's INSTALL for each of InstallableExtensions
// into dir, an extension_directory the engine then loads from
// (Extensions.Directory), and loads each back to prove it fits. It runs in the
// engine's own DuckDB, so the builds fetched are the ones this release takes.
// repository is where INSTALL fetches from: "" is DuckDB's core repository
// (extensions.duckdb.org), else a URL or a local directory laid out as
// <repository>/<DuckDB version>/<platform>/<name>.duckdb_extension — a mirror,
// or the directory `go tool task extensions` fills. It returns the names
// installed; on an error the ones before it stay installed.
func InstallExtensions(ctx context.Context, dir, repository string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("install extensions: %w", err)
	}
	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, fmt.Errorf("install extensions: open DuckDB: %w", err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("install extensions: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET extension_directory = "+sqltext.String(dir)); err != nil {
		return nil, fmt.Errorf("install extensions: %w", err)
	}
	from := "core"
	if repository != "" {
		from = sqltext.String(repository)
	}
	var done []string
	for _, name := range InstallableExtensions {
		for _, q := range []string{"FORCE INSTALL " + name + " FROM " + from, "LOAD " + name} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return done, fmt.Errorf("install extensions: %s: %w", q, err)
			}
		}
		done = append(done, name)
	}
	return done, nil
}
