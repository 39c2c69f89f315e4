package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/meterstore/meterstore/internal/duckfmt"
	"github.com/meterstore/meterstore/internal/sqltext"
)

// exportXLSX writes query's result to an Excel workbook through DuckDB's
// excel extension (pinned in duckdb-extensions.txt, loaded from the
// extension directory like the others): the result streams into a Parquet
// file beside the target first (memory bounded by one batch, as .export
// FILE.parquet), which DuckDB then copies into the workbook — renamed into
// place only when complete. TIMESTAMPTZ columns are written as the session
// time zone's wall clock, as the shell prints them: a spreadsheet cell has
// no zone.
func exportXLSX(ctx context.Context, es *engineSession, file, query string, values duckfmt.Formatter, args []any) (int64, string, error) {
	dir, base := filepath.Split(file)
	stage := filepath.Join(dir, "."+base+".stage.parquet")
	defer os.Remove(stage)
	n, prov, err := exportQuery(ctx, es, stage, "parquet", query, values, args)
	if err != nil {
		return 0, "", err
	}
	tmp, err := createTemp(file)
	if err != nil {
		return 0, "", fmt.Errorf("export: %w", err)
	}
	tmp.Close()
	os.Remove(tmp.Name()) // DuckDB's COPY creates it
	defer os.Remove(tmp.Name())
	if err := copyToXLSX(ctx, es.d.engine.DB(), stage, tmp.Name(), es.eng.TimeZone()); err != nil {
		return 0, "", err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return 0, "", fmt.Errorf("export: %w", err)
	}
	return n, prov, nil
}

func copyToXLSX(ctx context.Context, db *sql.DB, parquetFile, xlsx, zone string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "LOAD excel"); err != nil {
		return withHint(fmt.Errorf("export to .xlsx needs DuckDB's excel extension, which did not load: %w", err),
			"go tool task extensions installs it (pinned in duckdb-extensions.txt); .extensions says where msql loads extensions from")
	}
	var cols []string
	rows, err := conn.QueryContext(ctx, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet("+sqltext.String(parquetFile)+"))")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			rows.Close()
			return fmt.Errorf("export: %w", err)
		}
		col := sqltext.Ident(name)
		if strings.HasPrefix(typ, "TIMESTAMP WITH TIME ZONE") {
			col = fmt.Sprintf("timezone(%s, %s) AS %s", sqltext.String(zone), col, col)
		}
		cols = append(cols, col)
	}
	rows.Close()
	q := fmt.Sprintf("COPY (SELECT %s FROM read_parquet(%s)) TO %s (FORMAT xlsx, HEADER true)", strings.Join(cols, ", "), sqltext.String(parquetFile), sqltext.String(xlsx))
	if _, err := conn.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
