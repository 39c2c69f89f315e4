package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine/plan"
)

// parquetColumn is one column a test file is written with: its name, the
// DuckDB expression of its values over the row number i, and its field id
// (0: written without one).
type parquetColumn struct {
	name, expr string
	id         int
}

// configuredColumns are cfg's columns as the store writes them, with values
// that tell every column apart, the rows shifted by offset days.
func configuredColumns(cfg meterstore.TableConfig, offset int) []parquetColumn {
	from := fmt.Sprintf("TIMESTAMPTZ '2025-01-01 00:00:00+00' + INTERVAL %d DAY + to_minutes(i * 15)", offset)
	exprs := map[string]string{
		"malo_id": "'5' || (10000000000 + i % 3)", "melo_id": "NULL", "obis_code": "'1-1:1.29.0'", "sparte": "'STROM'",
		"from": from, "to": from + " + INTERVAL 15 MINUTE", "value": "CAST(i / 1000 AS DECIMAL(18,6))", "unit": "'KWH'",
		"quality": "'MEASURED'", "resolution": "'PT15M'", "source_kind": "'mscons'", "source_detail": "'{}'",
		"provenance": "NULL", "version": "CAST(20250101000001 + i % 2 AS DECIMAL(20,0))", "version_scope": "'op:2025-01'",
		"recorded_at": "TIMESTAMPTZ '2025-02-01 00:00:00+00' + to_seconds(i)", "balancing_day": fmt.Sprintf("DATE '2025-01-01' + %d + CAST(i // 96 AS INTEGER)", offset),
		"tenant": "'t-' || (i % 2)", "contract": "'c-' || i",
	}
	var cols []parquetColumn
	for _, c := range cfg.Columns() {
		e, ok := exprs[c.Name]
		if !ok {
			panic("no test values for column " + c.Name)
		}
		cols = append(cols, parquetColumn{name: c.Name, expr: fmt.Sprintf("CAST(%s AS %s)", e, c.Type.DuckDBType()), id: c.FieldID})
	}
	return cols
}

// writeParquetFile writes 192 rows of cols to dir/name with DuckDB.
func writeParquetFile(t *testing.T, db *sql.DB, dir, name string, cols []parquetColumn) string {
	t.Helper()
	path := filepath.Join(dir, name)
	sel := make([]string, len(cols))
	var ids []string
	for i, c := range cols {
		sel[i] = c.expr + " AS " + meterstore.QuoteIdent(c.name)
		if c.id != 0 {
			ids = append(ids, fmt.Sprintf("%s: %d", meterstore.QuoteIdent(c.name), c.id))
		}
	}
	opts := "FORMAT parquet"
	if ids != nil {
		opts += ", FIELD_IDS {" + strings.Join(ids, ", ") + "}"
	}
	_, err := db.Exec(fmt.Sprintf("COPY (SELECT %s FROM range(192) AS r(i)) TO '%s' (%s)", strings.Join(sel, ", "), path, opts))
	require.NoError(t, err)
	return path
}

// withColumn is cols with the column of field id changed by change (false
// drops it).
func withColumn(cols []parquetColumn, id int, change func(*parquetColumn) bool) []parquetColumn {
	var out []parquetColumn
	for _, c := range cols {
		if c.id != id || change(&c) {
			out = append(out, c)
		}
	}
	return out
}

// withoutIDs is cols written without field ids.
func withoutIDs(cols []parquetColumn) []parquetColumn {
	out := slices.Clone(cols)
	for i := range out {
		out[i].id = 0
	}
	return out
}

// filesRelation is every row of files read with DuckDB's reader as a cold
// half reads them.
func filesRelation(t *testing.T, cfg meterstore.TableConfig, files []plan.ColdFile) string {
	t.Helper()
	rel, err := plan.FilesRelation(context.Background(), &plan.Table{Config: cfg}, false, nil, files, time.Time{})
	require.NoError(t, err)
	return rel
}

// relationRows are the rows of the files read as a cold half reads them
// (plan.FilesRelation), sorted.
func relationRows(t *testing.T, db *sql.DB, cfg meterstore.TableConfig, files []plan.ColdFile) []string {
	t.Helper()
	rel := filesRelation(t, cfg, files)
	rows, err := db.Query("SELECT CAST(COLUMNS(*) AS VARCHAR) FROM (" + rel + ")")
	require.NoError(t, err, rel)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		out = append(out, fmt.Sprint(vals))
	}
	require.NoError(t, rows.Err())
	slices.Sort(out)
	return out
}

// TestNamesAsIDsReadAsByID: a file is read by name without the field-id
// schema only where its footer proves that reading it by name reads what
// reading it by field id does — every configured column once, under its field
// id, name and type, and no other. A file written before a rename, another
// writer's file whose names swap two columns' ids, one without a column added
// since, one of another type, with a column more or without field ids keeps
// its read; and the rows every file — alone and all together, grouped as the
// marks say — reads are the rows it reads by field id.
func TestNamesAsIDsReadAsByID(t *testing.T) {
	cfg := testConfig(t)
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	dir := t.TempDir()
	current := configuredColumns(cfg, 0)
	id := func(name string) int {
		for _, c := range cfg.Columns() {
			if c.Name == name {
				return c.FieldID
			}
		}
		panic(name)
	}
	quality, obis, contract, value := id("quality"), id("obis_code"), id("contract"), id("value")
	files := []struct {
		name       string
		cols       []parquetColumn
		namesAsIDs bool
	}{
		{"current.parquet", current, true},
		{"current-later.parquet", configuredColumns(cfg, 7), true},
		{"before-rename.parquet", withColumn(current, quality, func(c *parquetColumn) bool { c.name = "qualitaet"; return true }), false},
		{"swapped-names.parquet", withColumn(withColumn(current, quality, func(c *parquetColumn) bool { c.name = "obis_code"; return true }),
			obis, func(c *parquetColumn) bool { c.name = "quality"; return true }), false},
		{"without-added.parquet", withColumn(current, contract, func(*parquetColumn) bool { return false }), false},
		{"other-type.parquet", withColumn(current, value, func(c *parquetColumn) bool { c.expr = "CAST(i / 1000 AS DOUBLE)"; return true }), false},
		{"column-more.parquet", append(slices.Clone(current), parquetColumn{name: "note", expr: "'n'", id: 900}), false},
		{"no-ids.parquet", withoutIDs(current), false},
	}
	var marked, byID []plan.ColdFile
	for _, f := range files {
		path := writeParquetFile(t, db, dir, f.name, f.cols)
		m, err := readMarks(iceio.LocalFS{}, path, cfg)
		require.NoError(t, err)
		require.Equal(t, f.namesAsIDs, m.namesAsIDs, f.name)
		file := plan.ColdFile{Path: path, FieldIDs: m.fieldIDs, NamesAsIDs: m.namesAsIDs, BalancingDay: true}
		read := relationRows(t, db, cfg, []plan.ColdFile{file})
		require.NotEmpty(t, read, f.name)
		asByID := file
		asByID.NamesAsIDs = false
		require.Equal(t, relationRows(t, db, cfg, []plan.ColdFile{asByID}), read, "%s reads as by field id", f.name)
		marked, byID = append(marked, file), append(byID, asByID)
	}
	rel := filesRelation(t, cfg, marked)
	require.Equal(t, 1, strings.Count(rel, "hive_partitioning = false"), "the two files named as their ids are read together, by name: %s", rel)
	require.Equal(t, relationRows(t, db, cfg, byID), relationRows(t, db, cfg, marked), "all files, grouped by their marks, read as by field id")

	swapped := marked[3]
	swapped.NamesAsIDs = true
	require.NotEqual(t, relationRows(t, db, cfg, []plan.ColdFile{marked[3]}), relationRows(t, db, cfg, []plan.ColdFile{swapped}),
		"read by name, the file whose names swap two ids would read otherwise: the mark must keep it read by id")
}
