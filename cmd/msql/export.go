package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// dotExport writes a query's result to a Parquet or CSV file. The query runs
// through the engine (planned, split, resolved, confined like any other); its
// rows are staged in a temporary DuckDB table on the unrestricted handle that
// only this in-process shell holds, and DuckDB's COPY writes the file — for
// Parquet with the watermark, the snapshot and the read mode in the key-value
// metadata.
func (sh *shell) dotExport(_ []string, rest string) error {
	file, query, ok := strings.Cut(rest, " ")
	query = strings.TrimSpace(query)
	if !ok || query == "" {
		return errors.New(".export takes FILE.parquet|FILE.csv QUERY")
	}
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(file), "."))
	if format != "parquet" && format != "csv" {
		return fmt.Errorf(".export %s: the file must end in .parquet or .csv", file)
	}
	n, prov, err := exportQuery(sh.ctx, sh.es, file, format, query)
	if err != nil {
		return err
	}
	fmt.Fprintf(sh.p.target(), "wrote %d rows to %s\n", n, file)
	if sh.p.provenance && prov != "" {
		fmt.Fprintf(sh.p.target(), "-- %s\n", prov)
	}
	return nil
}

func exportQuery(ctx context.Context, es *engineSession, file, format, query string) (int, string, error) {
	rows, err := es.eng.Rows(ctx, query)
	if err != nil {
		return 0, "", err
	}
	es.running.Store(rows.Provenance)
	defer es.running.Store(nil)
	t, err := collectRows(rows.Rows, false)
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, "", err
	}
	prov := rows.Provenance
	db := es.d.engine.DB()
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, "", err
	}
	defer conn.Close()
	stage := fmt.Sprintf("msql_export_%d", time.Now().UnixNano())
	var cols []string
	for i, c := range t.columns {
		typ := "VARCHAR"
		if i < len(t.types) && t.types[i] != "" {
			typ = t.types[i]
		}
		cols = append(cols, quoteIdent(c)+" "+typ)
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("CREATE TEMP TABLE %s (%s)", stage, strings.Join(cols, ", "))); err != nil {
		return 0, "", fmt.Errorf("export: stage: %w", err)
	}
	defer conn.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+stage)
	const batch = 256
	for i := 0; i < len(t.rows); i += batch {
		part := t.rows[i:min(i+batch, len(t.rows))]
		var ph []string
		var args []any
		for _, r := range part {
			marks := make([]string, len(r))
			for j := range r {
				marks[j] = "?"
				args = append(args, exportValue(r[j]))
			}
			ph = append(ph, "("+strings.Join(marks, ", ")+")")
		}
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s VALUES %s", stage, strings.Join(ph, ", ")), args...); err != nil {
			return 0, "", fmt.Errorf("export: stage rows: %w", err)
		}
	}
	opts := "FORMAT csv, HEADER"
	if format == "parquet" {
		snap := int64(0)
		if len(prov.SnapshotIDs) > 0 {
			snap = prov.SnapshotIDs[0]
		}
		opts = fmt.Sprintf("FORMAT parquet, COMPRESSION zstd, KV_METADATA {meterstore_watermark: %s, meterstore_snapshot: '%d', meterstore_read_mode: %s, meterstore_tiers: %s, meterstore_query: %s}",
			sqlQuote(prov.Watermark.UTC().Format(time.RFC3339Nano)), snap, sqlQuote(prov.Mode.String()), sqlQuote(prov.Tiers.String()), sqlQuote(query))
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("COPY %s TO %s (%s)", stage, sqlQuote(file), opts)); err != nil {
		return 0, "", fmt.Errorf("export: write %s: %w", file, err)
	}
	return len(t.rows), prov.String(), nil
}

// exportValue hands DuckDB a value it binds: exact decimals as their text.
func exportValue(v any) any {
	if s, ok := v.(fmt.Stringer); ok {
		if _, isTime := v.(time.Time); !isTime {
			return s.String()
		}
	}
	return v
}

func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
