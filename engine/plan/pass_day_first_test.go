package plan

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

// dayFirstCases are statements the split applies to.
var dayFirstCases = []string{
	`SELECT date_trunc('month', balancing_day) AS m, sum(value) FROM readings GROUP BY 1 ORDER BY 1`,
	`SELECT date_trunc('month', balancing_day), sum(value), count(*) FROM readings GROUP BY 1 ORDER BY 1`,
	`SELECT date_trunc('month', r.balancing_day), r.malo_id, min(r.value), max(r."from") AS last, count(*) AS n FROM readings r WHERE r.value > 0 GROUP BY 1, 2 ORDER BY 2, 1`,
	`SELECT year(balancing_day) AS y, obis_code, sum(value) AS s FROM readings GROUP BY y, obis_code HAVING sum(value) > 1 AND count(*) > 3 ORDER BY sum(value) DESC, y LIMIT 5`,
	`SELECT CAST(date_trunc('quarter', balancing_day) AS DATE) AS q, round(sum(value) / 1000, 2) AS mwh FROM readings_versions GROUP BY 1 ORDER BY q`,
	`SELECT date_trunc($1, balancing_day) AS m, sum(value) FROM readings WHERE malo_id = 'M1' GROUP BY 1 ORDER BY 1`,
}

// dayFirstRefused are statements the split would change or not speed up:
// they keep their single level.
var dayFirstRefused = []string{
	`SELECT date_trunc('month', balancing_day) AS m, avg(value) FROM readings GROUP BY 1`,
	`SELECT date_trunc('month', balancing_day) AS m, count(value) FROM readings GROUP BY 1`,
	`SELECT date_trunc('month', balancing_day) AS m, sum(DISTINCT value) FROM readings GROUP BY 1`,
	`SELECT date_trunc('month', balancing_day) AS m, sum(value) FILTER (WHERE value > 0) FROM readings GROUP BY 1`,
	`SELECT date_trunc('month', balancing_day) AS m, sum(value), max(value) FROM readings GROUP BY 1`,
	`SELECT date_trunc('month', balancing_day) AS m, count(*) + 1 FROM readings GROUP BY 1`,
	`SELECT date_trunc('month', balancing_day) AS m, sum(value) FROM readings GROUP BY ALL`,
	`SELECT date_trunc('month', balancing_day) AS m, sum(value) FROM readings GROUP BY ROLLUP (1)`,
	`SELECT date_trunc('month', balancing_day) AS m, sum(value), sum(sum(value)) OVER () FROM readings GROUP BY 1`,
	`SELECT date_trunc('month', balancing_day) AS m, sum(value) FROM readings GROUP BY 1 QUALIFY sum(value) > 0`,
	`SELECT date_trunc('month', balancing_day) AS m, "from", sum(value) FROM readings GROUP BY 1, 2`,
	`SELECT date_trunc('hour', "from") AS h, sum(value) FROM readings GROUP BY 1`,
	`SELECT balancing_day, sum(value) FROM readings GROUP BY 1`,
	`SELECT date_trunc('month', r.balancing_day) AS m, sum(r.value) FROM readings r JOIN readings_versions v USING (malo_id) GROUP BY 1`,
	`SELECT date_trunc('month', balancing_day) AS m, string_agg(malo_id, ',') FROM readings GROUP BY 1`,
	`SELECT date_trunc('month', balancing_day) AS m, sum(value) FROM readings r(a) GROUP BY 1`,
	`SELECT date_trunc('month', balancing_day) AS m, CASE WHEN sum(value) > 0 THEN 1 END FROM readings GROUP BY 1`,
	`SELECT date_trunc('month', balancing_day) + random() AS m, sum(value) FROM readings GROUP BY 1`,
}

func TestGroupByDayFirstSplitsOnlyDecomposableAggregates(t *testing.T) {
	e := testSession(t, nil)
	ctx := context.Background()
	// The month meter_balancing_month stands for is the stored day's.
	monthly := `SELECT meter_balancing_month("from", sparte) AS m, sum(value) FROM readings GROUP BY 1 ORDER BY 1`
	for _, q := range append(append([]string{monthly}, dayFirstCases...), dayFirstRefused...) {
		split := !slices.Contains(dayFirstRefused, q)
		pl, err := planThrough(t, e, q, "group by day first", "month")
		require.NoError(t, err, q)
		out, err := deserialize(ctx, pl.conn, pl.root)
		require.NoError(t, err)
		require.Equal(t, split, strings.Contains(out, "GROUP BY balancing_day"), "%s\n→ %s", q, out)
		if split {
			inner := pl.levels[0].sel
			require.Same(t, pl.refs[0].n, inner.From, "the level the later passes read is the inner one, over the reference")
		}
	}
}

// TestGroupByDayFirstAnswersAsTheStatement runs each statement as written and
// as split over the same rows in a plain DuckDB table — NULL values and days,
// several MaLo and channels, days across month, quarter and year ends — and
// compares column names, types and every value.
func TestGroupByDayFirstAnswersAsTheStatement(t *testing.T) {
	e := testSession(t, nil)
	ctx := context.Background()
	db := readingsTable(t, testConfig(t))
	for _, q := range dayFirstCases {
		pl, err := planThrough(t, e, q, "group by day first", "month")
		require.NoError(t, err, q)
		split, err := deserialize(ctx, pl.conn, pl.root)
		require.NoError(t, err)
		want, wantCols := queryAll(t, db, q)
		got, gotCols := queryAll(t, db, split)
		require.Equal(t, wantCols, gotCols, "%s\n→ %s", q, split)
		require.NotEmpty(t, want)
		require.Equal(t, want, got, "%s\n→ %s", q, split)
	}
}

// readingsTable is a DuckDB database holding cfg's columns as the tables
// readings and readings_versions, filled with generated rows.
func readingsTable(t *testing.T, cfg meterstore.TableConfig) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	var cols, vals []string
	for _, c := range cfg.Columns() {
		cols = append(cols, meterstore.QuoteIdent(c.Name)+" "+c.Type.DuckDBType())
		vals = append(vals, generatedColumn(c))
	}
	for _, name := range []string{"readings", "readings_versions"} {
		_, err := db.Exec(fmt.Sprintf("CREATE TABLE %s (%s)", name, strings.Join(cols, ", ")))
		require.NoError(t, err)
		_, err = db.Exec(fmt.Sprintf("INSERT INTO %s SELECT %s FROM range(20000) t(i)", name, strings.Join(vals, ", ")))
		require.NoError(t, err)
	}
	return db
}

// generatedColumn is a generated value of column c for row i: days over
// fourteen months, every 97th day NULL, values with six decimals, every
// 89th NULL, five MaLo and two channels.
func generatedColumn(c meterstore.ColumnDef) string {
	switch c.Name {
	case "balancing_day":
		return "CASE WHEN i % 97 = 0 THEN NULL ELSE DATE '2024-11-20' + CAST(i % 430 AS INTEGER) END"
	case "value":
		return "CASE WHEN i % 89 = 0 THEN NULL ELSE CAST((i * 7919 % 100003) / 1000.123457 - 20 AS DECIMAL(18,6)) END"
	case "malo_id":
		return "'M' || (i % 5)"
	case "obis_code":
		return "CASE WHEN i % 2 = 0 THEN '1-0:1.29.0' ELSE '1-0:2.29.0' END"
	case "sparte":
		return "'STROM'"
	}
	switch c.Type {
	case meterstore.TypeDecimal18_6, meterstore.TypeDecimal20_0:
		return fmt.Sprintf("CAST(i AS %s)", c.Type.DuckDBType())
	case meterstore.TypeDate:
		return "DATE '2024-11-20' + CAST(i % 430 AS INTEGER)"
	}
	return fmt.Sprintf("CAST(TIMESTAMPTZ '2024-11-20 00:00:00+00' + to_minutes(CAST(i * 15 AS BIGINT)) AS %s)", c.Type.DuckDBType())
}

// queryAll is every row of q (with "month" for its parameter, if any) as
// text, and its columns' names and types.
func queryAll(t *testing.T, db *sql.DB, q string) ([][]string, []string) {
	t.Helper()
	var args []any
	if strings.Contains(q, "$1") {
		args = append(args, "month")
	}
	rows, err := db.Query(q, args...)
	require.NoError(t, err, q)
	defer rows.Close()
	types, err := rows.ColumnTypes()
	require.NoError(t, err)
	var cols []string
	for _, ct := range types {
		cols = append(cols, ct.Name()+" "+ct.DatabaseTypeName())
	}
	var out [][]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = fmt.Sprint(v)
		}
		out = append(out, row)
	}
	require.NoError(t, rows.Err())
	return out, cols
}
