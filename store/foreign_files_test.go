package store_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/store"
)

// addDuckDBFile writes, with DuckDB and without field ids, the rows of the
// first archived day one day earlier (select picks the columns, over the
// shifted rows as r; opts are further COPY options) and registers the file in the cold table in a commit
// carrying props.
func addDuckDBFile(t *testing.T, e *env, tbl *store.Table, name, sel string, props iceberg.Properties, opts ...string) {
	t.Helper()
	loc := tbl.Cold().Iceberg().Location()
	if !strings.HasPrefix(loc, "file://") {
		t.Skip("the added file is written to the local file system")
	}
	files, _, err := tbl.Cold().PlanFiles(e.ctx, catalog.PlanRequest{To: day0.Add(24 * time.Hour)})
	require.NoError(t, err)
	require.Len(t, files, 1)
	path := catalog.LocalPath(loc) + "/data/" + name
	_, err = e.st.Engine().DB().ExecContext(e.ctx, `COPY (SELECT `+sel+` FROM (
		SELECT * REPLACE ("from" - INTERVAL 1 DAY AS "from", "to" - INTERVAL 1 DAY AS "to", balancing_day - 1 AS balancing_day)
		FROM read_parquet('`+files[0].Path+`', hive_partitioning = false)) AS r) TO '`+path+`' (`+strings.Join(append([]string{"FORMAT parquet"}, opts...), ", ")+`)`)
	require.NoError(t, err)
	addForeignFile(t, e, tbl, path, day0.Add(-24*time.Hour), props)
}

// archivedTwoDays is a store for one intervalTable holding two days of rows,
// archived, reading its tiers through the paths the environment selects
// (engine.ExtensionsFromEnv), so the extension run (MSQL_PATHS=extension)
// plans the foreign files through iceberg_scan too.
func archivedTwoDays(t *testing.T) (*env, *store.Table) {
	t.Helper()
	ext, err := engine.ExtensionsFromEnv()
	require.NoError(t, err)
	e := open(t, func(s *setup) { s.Extensions = ext }, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	_, err = e.st.Append(e.ctx, mkDays(t, day0, 2, "1")...)
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))
	return e, tbl
}

// watermarkProps are the snapshot properties an out-of-band commit carries
// when it keeps the table's tiering watermark.
func watermarkProps(t *testing.T, e *env, tbl *store.Table) iceberg.Properties {
	t.Helper()
	require.NoError(t, tbl.Cold().Refresh(e.ctx))
	w, err := tbl.Cold().Watermark(e.ctx)
	require.NoError(t, err)
	return iceberg.Properties{catalog.WatermarkProperty: w.UTC().Format(time.RFC3339Nano)}
}

// withForeignFile runs check over two archived days beside which another
// writer added a file (name, its columns selected by sel from the archived
// rows), twice: committed without the tiering watermark property and keeping
// it — what a file's footer proves must never follow from the snapshot that
// added it.
func withForeignFile(t *testing.T, name, sel string, check func(t *testing.T, e *env, tbl *store.Table)) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("watermark-property=%t", keep), func(t *testing.T) {
			e, tbl := archivedTwoDays(t)
			var props iceberg.Properties
			if keep {
				props = watermarkProps(t, e, tbl)
			}
			addDuckDBFile(t, e, tbl, name, sel, props)
			check(t, e, tbl)
		})
	}
}

// queryRows is the rows q answers through the store's engine.
func queryRows(t *testing.T, e *env, q string) [][]any {
	t.Helper()
	res, err := e.st.Query(e.ctx, q)
	require.NoError(t, err, q)
	return res.Rows
}

// TestColdFileWithoutFieldIDsReadByName: a data file added from outside
// without Parquet field ids (a migration's add_files of files another tool
// wrote) is read by column name — read by id, each of its columns would read
// as NULL — beside MeterStore's own files, which are read by id; also when
// the commit that added it keeps the tiering watermark property (what an
// operator keeping the watermark on out-of-band commits does): whether a
// file carries field ids is read from its own footer, never assumed from the
// snapshot that added it.
func TestColdFileWithoutFieldIDsReadByName(t *testing.T) {
	withForeignFile(t, "added.parquet", "*", func(t *testing.T, e *env, tbl *store.Table) {
		files, _, err := tbl.Cold().PlanFiles(e.ctx, catalog.PlanRequest{})
		require.NoError(t, err)
		ids := map[bool]int{}
		for _, f := range files {
			ids[f.FieldIDs]++
		}
		require.Equal(t, map[bool]int{true: 2, false: 1}, ids, "MeterStore's two files carry field ids, the added one none")
		res, err := e.st.Query(e.ctx, `SELECT count(*), count(malo_id), count(*) FILTER (WHERE "from" < $1) FROM readings`, day0)
		require.NoError(t, err)
		require.Equal(t, []any{int64(3 * 4), int64(3 * 4), int64(4)}, res.Rows[0])
	})
}

// TestForeignFileWithoutBalancingDay: a file another writer added without
// the stored balancing_day column groups by the balancing day the calendar
// function computes — meter_balancing_day over readings (rewritten to the
// stored column where every file proves it holds it) and the column itself
// agree with the function evaluated row by row, with no NULL day.
func TestForeignFileWithoutBalancingDay(t *testing.T) {
	for _, v := range []struct {
		fieldIDs, watermark bool
	}{{false, false}, {false, true}, {true, false}} {
		t.Run(fmt.Sprintf("field-ids=%t,watermark-property=%t", v.fieldIDs, v.watermark), func(t *testing.T) {
			e, tbl := archivedTwoDays(t)
			var props iceberg.Properties
			if v.watermark {
				props = watermarkProps(t, e, tbl)
			}
			var opts []string
			if v.fieldIDs {
				var ids []string
				for _, c := range tbl.Config().Columns() {
					if c.Name != "balancing_day" {
						ids = append(ids, fmt.Sprintf("%s: %d", meterstore.QuoteIdent(c.Name), c.FieldID))
					}
				}
				opts = append(opts, "FIELD_IDS {"+strings.Join(ids, ", ")+"}")
			}
			addDuckDBFile(t, e, tbl, "no-day.parquet", "* EXCLUDE (balancing_day)", props, opts...)
			query := func(q string) [][]any { return queryRows(t, e, q) }
			computed := query(`SELECT meter_balancing_day("from" + INTERVAL 0 SECOND, sparte) AS d, count(*) FROM readings GROUP BY 1 ORDER BY 1`)
			require.Len(t, computed, 3)
			require.Equal(t, computed, query(`SELECT meter_balancing_day("from", sparte) AS d, count(*) FROM readings GROUP BY 1 ORDER BY 1`))
			require.Equal(t, computed, query(`SELECT balancing_day AS d, count(*) FROM readings GROUP BY 1 ORDER BY 1`))
			require.Equal(t, computed, query(`SELECT balancing_day AS d, count(*) FROM readings_versions GROUP BY 1 ORDER BY 1`))
			months := query(`SELECT meter_balancing_month("from", sparte) AS m, count(*) FROM readings GROUP BY 1 ORDER BY 1`)
			require.Equal(t, query(`SELECT meter_balancing_month("from" + INTERVAL 0 SECOND, sparte) AS m, count(*) FROM readings GROUP BY 1 ORDER BY 1`), months)
		})
	}
}

// TestBalancingDayMismatchesFindAForeignFile: a file another writer added
// with a balancing_day five days off the calendar's is counted, with the
// first and last "from" of its rows; the store's own files and a foreign file
// without the column (its day computed) are not.
func TestBalancingDayMismatchesFindAForeignFile(t *testing.T) {
	e, tbl := archivedTwoDays(t)
	m, err := tbl.BalancingDayMismatches(e.ctx)
	require.NoError(t, err)
	require.Zero(t, m.Rows, "the store's own rows: %s", m)
	addDuckDBFile(t, e, tbl, "no-day.parquet", "* EXCLUDE (balancing_day)", watermarkProps(t, e, tbl))
	m, err = tbl.BalancingDayMismatches(e.ctx)
	require.NoError(t, err)
	require.Zero(t, m.Rows, "a file without the column: %s", m)

	e, tbl = archivedTwoDays(t)
	addDuckDBFile(t, e, tbl, "wrong-day.parquet", "* REPLACE (r.balancing_day + 5 AS balancing_day)", watermarkProps(t, e, tbl))
	m, err = tbl.BalancingDayMismatches(e.ctx)
	require.NoError(t, err)
	require.EqualValues(t, 4, m.Rows)
	require.True(t, m.From.Equal(day0.Add(-24*time.Hour)), "from %s", m.From)
	require.True(t, m.To.Equal(day0.Add(-24*time.Hour+45*time.Minute)), "to %s", m.To)
	require.Contains(t, m.String(), `4 rows carry a balancing_day that is not the day their "from" and sparte give`)

	// Read as a file on object storage is read (the Go reader), the same rows.
	store.ReadColdFilesInGo(t)
	inGo, err := tbl.BalancingDayMismatches(e.ctx)
	require.NoError(t, err)
	require.Equal(t, m, inGo)
}

// TestBalancingDayMismatchesFindAHotRowWrittenAroundTheStore: hot rows whose
// balancing_day a writer around the store changed with SQL (past the
// append-only trigger, as a hand repair would) are counted with their first
// and last "from"; the store's own rows of both tiers are not.
func TestBalancingDayMismatchesFindAHotRowWrittenAroundTheStore(t *testing.T) {
	e, tbl := archivedTwoDays(t)
	hotDay := day0.Add(48 * time.Hour)
	_, err := e.st.Append(e.ctx, mkDays(t, hotDay, 1, "1")...)
	require.NoError(t, err)
	m, err := tbl.BalancingDayMismatches(e.ctx)
	require.NoError(t, err)
	require.Zero(t, m.Rows, "the store's own rows of both tiers: %s", m)
	tx, err := e.pool.Begin(e.ctx)
	require.NoError(t, err)
	defer tx.Rollback(e.ctx) //nolint:errcheck
	_, err = tx.Exec(e.ctx, `SET LOCAL session_replication_role = replica`)
	require.NoError(t, err)
	tag, err := tx.Exec(e.ctx, `UPDATE readings_versions SET balancing_day = balancing_day + 1 WHERE "from" BETWEEN $1 AND $2`,
		hotDay.Add(15*time.Minute), hotDay.Add(30*time.Minute))
	require.NoError(t, err)
	require.EqualValues(t, 2, tag.RowsAffected())
	require.NoError(t, tx.Commit(e.ctx))
	m, err = tbl.BalancingDayMismatches(e.ctx)
	require.NoError(t, err)
	require.EqualValues(t, 2, m.Rows, "%s", m)
	require.True(t, m.From.Equal(hotDay.Add(15*time.Minute)), "from %s", m.From)
	require.True(t, m.To.Equal(hotDay.Add(30*time.Minute)), "to %s", m.To)
}

// TestBalancingDayMismatchesFindACompactedFileOfAnOlderEncoder: a compacted
// file whose footer does not say the encoder derived its balancing_day — the
// compactor wrote it before the encoder derived the column, so it kept the
// day its input rows carried — is counted: queries answer from its stored
// column (a compaction's file counts as derived), so msql verify reads it.
func TestBalancingDayMismatchesFindACompactedFileOfAnOlderEncoder(t *testing.T) {
	e, tbl := archivedTwoDays(t)
	addDuckDBFile(t, e, tbl, "older-compaction.parquet", "* REPLACE (r.balancing_day + 5 AS balancing_day)", watermarkProps(t, e, tbl),
		`KV_METADATA {'`+catalog.MarkCompaction+`': 'a compaction of an older encoder'}`)
	files, _, err := tbl.Cold().PlanFiles(e.ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	trusted := 0
	for _, f := range files {
		if f.BalancingDay {
			trusted++
		}
	}
	require.Equal(t, len(files), trusted, "every file's stored day answers queries, the older compaction's too")
	m, err := tbl.BalancingDayMismatches(e.ctx)
	require.NoError(t, err)
	require.EqualValues(t, 4, m.Rows, "%s", m)
}

// TestForeignFileWithOtherBalancingDays: a file another writer added holding
// balancing_day with other days than the calendar's (here five days later) is
// grouped by the day the calendar function computes: meter_balancing_day and
// meter_balancing_month over readings agree with the function evaluated row
// by row ("from" + INTERVAL 0 SECOND, which the planner does not rewrite to
// the stored column). Only files whose footer says the store derived the
// column answer from it; the writer's days are still reported by
// BalancingDayMismatches.
func TestForeignFileWithOtherBalancingDays(t *testing.T) {
	withForeignFile(t, "other-day.parquet", "* REPLACE (r.balancing_day + 5 AS balancing_day)", func(t *testing.T, e *env, tbl *store.Table) {
		query := func(q string) [][]any { return queryRows(t, e, q) }
		computed := query(`SELECT meter_balancing_day("from" + INTERVAL 0 SECOND, sparte) AS d, count(*) FROM readings GROUP BY 1 ORDER BY 1`)
		require.Len(t, computed, 3)
		require.Equal(t, computed, query(`SELECT meter_balancing_day("from", sparte) AS d, count(*) FROM readings GROUP BY 1 ORDER BY 1`))
		require.Equal(t, computed, query(`SELECT meter_balancing_day(r."from", r.sparte) AS d, count(*) FROM readings_versions r GROUP BY 1 ORDER BY 1`))
		require.Equal(t,
			query(`SELECT meter_balancing_month("from" + INTERVAL 0 SECOND, sparte) AS m, count(*) FROM readings GROUP BY 1 ORDER BY 1`),
			query(`SELECT meter_balancing_month("from", sparte) AS m, count(*) FROM readings GROUP BY 1 ORDER BY 1`))
		m, err := tbl.BalancingDayMismatches(e.ctx)
		require.NoError(t, err)
		require.EqualValues(t, 4, m.Rows, "the foreign file's stored days are still reported")
	})
}
