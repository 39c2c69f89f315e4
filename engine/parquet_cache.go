package engine

import (
	"context"
	"database/sql"
	"fmt"
)

// cacheParquetMetadata keeps the footers of the Parquet files DuckDB read
// (schema, row-group statistics) for the next statements. A warehouse data
// file is never rewritten under its path — Iceberg adds and removes files,
// compaction writes new ones — so a footer read once stays true; DuckDB still
// checks a cached entry against the file's modification time, and bounds the
// cache by its estimated memory (least recently used entries go first).
// Without it every statement re-read and re-parsed the footer of every file it
// scans, which for a single meter's year over a month of daily files was most
// of the scan.
func cacheParquetMetadata(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "SET GLOBAL parquet_metadata_cache = true"); err != nil {
		return fmt.Errorf("parquet metadata cache: %w", err)
	}
	return nil
}
