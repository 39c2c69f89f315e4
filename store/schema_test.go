package store_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"meterstore/catalog"
	"meterstore/engine"
	"meterstore/store"
	"meterstore/testkit"
)

// TestColdReadsByFieldIDAfterForeignRename: another engine renames two
// columns (Spark's RENAME COLUMN, done here through iceberg-go's
// UpdateSchema) and rewrites every data file under the new names, as its
// compaction would. The cold tier still reads every column by its Iceberg
// field id: the answers, an equality pushed into planning on a renamed column
// and a reopened store all stay what the oracle says.
func TestColdReadsByFieldIDAfterForeignRename(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	oracle := testkit.NewOracle(tbl.Config())
	series := append(mkDays(t, day0, 3, "1"), mk(t, dl{from: day0.Add(24 * time.Hour), value: "7", version: 20260301000002, n: 2}))
	_, err := e.st.Append(e.ctx, series...)
	require.NoError(t, err)
	_, err = oracle.RecordSeries(series...)
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))

	cold := tbl.Cold()
	tx := cold.Iceberg().NewTransaction()
	us := tx.UpdateSchema(true, false).RenameColumn([]string{"quality"}, "qualitaet").RenameColumn([]string{"obis_code"}, "obis")
	require.NoError(t, us.Commit())
	_, err = tx.Commit(e.ctx)
	require.NoError(t, err)
	require.NoError(t, cold.Refresh(e.ctx))
	rewriteUnderCurrentNames(t, e, tbl)

	check := func(st *store.Store) {
		t.Helper()
		all := time.Time{}
		res, err := st.Query(e.ctx, `SELECT count(*), count(*) FILTER (WHERE quality = 'MEASURED'), sum(value) FROM readings`)
		require.NoError(t, err)
		require.Equal(t, int64(oracle.RowCount(all, all)), res.Rows[0][0])
		require.Equal(t, res.Rows[0][0], res.Rows[0][1], "quality reads by field id in the renamed files")
		require.True(t, oracle.Sum(all, all).Equal(dec(t, res.Rows[0][2])))
		res, err = st.Query(e.ctx, `SELECT count(*) FROM readings WHERE obis_code = $1 AND "from" < $2`, imp, day0.Add(48*time.Hour))
		require.NoError(t, err)
		require.Equal(t, int64(oracle.RowCount(all, day0.Add(48*time.Hour))), res.Rows[0][0], "an equality on a renamed column plans by field id")
	}
	check(e.st)
	reopened, err := store.Open(e.ctx, e.cfg)
	require.NoError(t, err, "a rename keeps the layout: the sort order is checked by field id")
	defer reopened.Close()
	check(reopened)

	// iceberg_scan matches columns by the schema's names: it refuses the table.
	dir := os.Getenv(engine.EnvExtensionDirectory)
	if dir == "" {
		t.Log("iceberg_scan not checked: no DuckDB extension directory (go tool task extensions)")
		return
	}
	cfg := e.cfg
	cfg.Extensions = engine.Extensions{Directory: dir, Cold: engine.PathExtension}
	ext, err := store.Open(e.ctx, cfg)
	require.NoError(t, err)
	defer ext.Close()
	_, err = ext.Query(e.ctx, `SELECT count(*) FROM readings`)
	require.ErrorIs(t, err, engine.ErrRenamedColumn)
}

// rewriteUnderCurrentNames replaces every data file of tbl's cold table by one
// written under the table's current column names, as another engine's
// compaction would, in a commit that carries no MeterStore property.
func rewriteUnderCurrentNames(t *testing.T, e *env, tbl *store.Table) {
	t.Helper()
	cold := tbl.Cold()
	require.NoError(t, cold.Refresh(e.ctx))
	it := cold.Iceberg()
	scan := it.Scan()
	defer scan.Close()
	rows, err := scan.ToArrowTable(e.ctx)
	require.NoError(t, err)
	defer rows.Release()
	tx := it.NewTransaction()
	require.NoError(t, tx.OverwriteTable(e.ctx, rows, rows.NumRows(), iceberg.Properties{}))
	_, err = tx.Commit(e.ctx)
	require.NoError(t, err)
	require.NoError(t, cold.Refresh(e.ctx))
}

// TestColdFileWithoutFieldIDsReadByName: a data file added from outside
// without Parquet field ids (a migration's add_files of files another tool
// wrote) is read by column name — read by id, each of its columns would read
// as NULL — beside MeterStore's own files, which are read by id.
func TestColdFileWithoutFieldIDsReadByName(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	_, err := e.st.Append(e.ctx, mkDays(t, day0, 2, "1")...)
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))

	// The first day's rows again, one day earlier, written by DuckDB without field ids.
	loc := tbl.Cold().Iceberg().Location()
	if !strings.HasPrefix(loc, "file://") {
		t.Skip("the added file is written to the local file system")
	}
	files, _, err := tbl.Cold().PlanFiles(e.ctx, catalog.PlanRequest{To: day0.Add(24 * time.Hour)})
	require.NoError(t, err)
	require.Len(t, files, 1)
	path := catalog.LocalPath(loc) + "/data/added.parquet"
	_, err = e.st.Engine().DB().ExecContext(e.ctx, `COPY (
		SELECT * REPLACE ("from" - INTERVAL 1 DAY AS "from", "to" - INTERVAL 1 DAY AS "to", balancing_day - 1 AS balancing_day)
		FROM read_parquet('`+files[0].Path+`', hive_partitioning = false)) TO '`+path+`' (FORMAT parquet)`)
	require.NoError(t, err)
	addForeignFile(t, e, tbl, path, day0.Add(-24*time.Hour))

	files, _, err = tbl.Cold().PlanFiles(e.ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	ids := map[bool]int{}
	for _, f := range files {
		ids[f.FieldIDs]++
	}
	require.Equal(t, map[bool]int{true: 2, false: 1}, ids, "MeterStore's two files carry field ids, the added one none")
	res, err := e.st.Query(e.ctx, `SELECT count(*), count(malo_id), count(*) FILTER (WHERE "from" < $1) FROM readings`, day0)
	require.NoError(t, err)
	require.Equal(t, []any{int64(3 * 4), int64(3 * 4), int64(4)}, res.Rows[0])
}

// addForeignFile registers the Parquet file at path, of rows in the month of
// at, in tbl's cold table as another engine's add_files would: its statistics
// read from its footer by column name, in a commit without MeterStore's
// properties.
func addForeignFile(t *testing.T, e *env, tbl *store.Table, path string, at time.Time) {
	t.Helper()
	cold := tbl.Cold()
	require.NoError(t, cold.Refresh(e.ctx))
	it := cold.Iceberg()
	rdr, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer rdr.Close()
	st, err := os.Stat(path)
	require.NoError(t, err)
	months := int32((at.Year()-1970)*12 + int(at.Month()) - 1)
	spec := it.Spec()
	df, err := table.DataFileFromMetadata(table.DataFileArgs{
		Schema: it.Schema(), Spec: spec, Format: iceberg.ParquetFile, Metadata: rdr.MetaData(),
		FilePath: "file://" + path, FileSize: st.Size(), Content: iceberg.EntryContentData,
		PartitionValues: map[int]any{spec.Field(0).FieldID: months}, FormatVersion: it.Metadata().Version(),
	})
	require.NoError(t, err)
	tx := it.NewTransaction()
	require.NoError(t, tx.AddDataFiles(e.ctx, []iceberg.DataFile{df}, nil))
	_, err = tx.Commit(e.ctx)
	require.NoError(t, err)
	require.NoError(t, cold.Refresh(e.ctx))
}
