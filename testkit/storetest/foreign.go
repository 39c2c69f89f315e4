package storetest

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
)

// LoseWatermark puts a cold table in the state an out-of-band compaction and a
// later expiry leave: every data file is replaced by a byte-equal copy in one
// commit carrying no MeterStore snapshot property (what Spark or PyIceberg
// commit), then every older snapshot — each one MeterStore wrote, carrying
// the tiering watermark — is expired.
func LoseWatermark(t testing.TB, ctx context.Context, cold *catalog.Table) {
	t.Helper()
	require.NoError(t, cold.Refresh(ctx))
	files, _, err := cold.PlanFiles(ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var old, copies []string
	for _, f := range files {
		dir, base := path.Split(f.Path)
		dst := dir + "rewritten-" + base
		b, err := os.ReadFile(s3test.LocalCopy(t, f.Path))
		require.NoError(t, err)
		s3test.WriteFile(t, dst, b)
		old, copies = append(old, fileURI(f.Path)), append(copies, fileURI(dst))
	}
	tx := cold.Iceberg().NewTransaction()
	require.NoError(t, tx.ReplaceDataFiles(ctx, old, copies, nil))
	_, err = tx.Commit(ctx)
	require.NoError(t, err)
	require.NoError(t, cold.Refresh(ctx))
	_, err = cold.ExpireSnapshots(ctx, 0, 1, true)
	require.NoError(t, err)
}

// SchemaChange commits a schema change to cold as another engine would
// (Spark's ALTER TABLE … RENAME COLUMN, ALTER COLUMN … TYPE), through
// iceberg-go's UpdateSchema.
func SchemaChange(t testing.TB, ctx context.Context, cold *catalog.Table, change func(*table.UpdateSchema) *table.UpdateSchema) {
	t.Helper()
	require.NoError(t, cold.Refresh(ctx))
	tx := cold.Iceberg().NewTransaction()
	require.NoError(t, change(tx.UpdateSchema(true, false)).Commit())
	_, err := tx.Commit(ctx)
	require.NoError(t, err)
	require.NoError(t, cold.Refresh(ctx))
}

// AddDataFile commits the local Parquet file at path to cold as a writer
// around the store would (another tool's add_files): one data file, its
// partition values named by partition field (tenant, from_month — see
// PartitionMonth), in a commit carrying props.
func AddDataFile(t testing.TB, ctx context.Context, cold *catalog.Table, path string, partition map[string]any, props iceberg.Properties) {
	t.Helper()
	require.NoError(t, cold.Refresh(ctx))
	it := cold.Iceberg()
	rdr, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer rdr.Close()
	st, err := os.Stat(path)
	require.NoError(t, err)
	spec := it.Spec()
	values := map[int]any{}
	for _, f := range spec.Fields() {
		v, ok := partition[f.Name]
		require.True(t, ok, "no value for partition field %s", f.Name)
		values[f.FieldID] = v
	}
	df, err := table.DataFileFromMetadata(table.DataFileArgs{
		Schema: it.Schema(), Spec: spec, Format: iceberg.ParquetFile, Metadata: rdr.MetaData(),
		FilePath: fileURI(path), FileSize: st.Size(), Content: iceberg.EntryContentData,
		PartitionValues: values, FormatVersion: it.Metadata().Version(),
	})
	require.NoError(t, err)
	tx := it.NewTransaction()
	require.NoError(t, tx.AddDataFiles(ctx, []iceberg.DataFile{df}, props))
	_, err = tx.Commit(ctx)
	require.NoError(t, err)
	require.NoError(t, cold.Refresh(ctx))
}

// PartitionMonth is the from_month partition value of a row from at: months
// since January 1970.
func PartitionMonth(at time.Time) int32 {
	return int32((at.Year()-1970)*12 + int(at.Month()) - 1)
}

// fileURI is loc as the Iceberg table names it: a local path as file://.
func fileURI(loc string) string {
	if strings.HasPrefix(loc, "/") {
		return "file://" + loc
	}
	return loc
}

// DeletePositions deletes, as another engine would (PyIceberg's merge-on-read
// delete), the rows matching filter: iceberg-go writes position delete files
// for the data files it matches in part and commits them.
func DeletePositions(t testing.TB, ctx context.Context, cold *catalog.Table, filter iceberg.BooleanExpression) {
	t.Helper()
	require.NoError(t, cold.Refresh(ctx))
	tx := cold.Iceberg().NewTransaction()
	require.NoError(t, tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}))
	require.NoError(t, tx.Delete(ctx, filter, nil))
	_, err := tx.Commit(ctx)
	require.NoError(t, err)
	require.NoError(t, cold.Refresh(ctx))
}

// DeleteEqual commits, as Spark or Flink would, an equality delete of every
// row whose malo_id is malo, in the partition of the table's first data file: a
// Parquet file holding that one value under malo_id's field id, registered
// through iceberg-go's row delta. It returns the delete file's path.
func DeleteEqual(t testing.TB, ctx context.Context, cold *catalog.Table, malo string) string {
	t.Helper()
	require.NoError(t, cold.Refresh(ctx))
	tbl := cold.Iceberg()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, tasks)
	field, ok := tbl.Schema().FindFieldByName("malo_id")
	require.True(t, ok)

	md := arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(field.ID)})
	sc := arrow.NewSchema([]arrow.Field{{Name: "malo_id", Type: arrow.BinaryTypes.String, Metadata: md}}, nil)
	b := array.NewStringBuilder(memory.DefaultAllocator)
	b.Append(malo)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, 1)
	defer rec.Release()
	loc := catalog.LocalPath(strings.TrimSuffix(tbl.Location(), "/") + "/data/eq-delete-" + malo + ".parquet")
	path := loc
	if !strings.HasPrefix(loc, "/") {
		path = filepath.Join(t.TempDir(), "eq-delete-"+malo+".parquet") // written here, then uploaded
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())

	rdr, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer rdr.Close()
	st, err := os.Stat(path)
	require.NoError(t, err)
	if path != loc {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		s3test.WriteFile(t, loc, b)
	}
	df, err := table.DataFileFromMetadata(table.DataFileArgs{
		Schema:           iceberg.NewSchema(0, field),
		Spec:             tbl.Spec(),
		Format:           iceberg.ParquetFile,
		Metadata:         rdr.MetaData(),
		FilePath:         fileURI(loc),
		FileSize:         st.Size(),
		Content:          iceberg.EntryContentEqDeletes,
		PartitionValues:  tasks[0].File.Partition(),
		EqualityFieldIDs: []int{field.ID},
		FormatVersion:    tbl.Metadata().Version(),
	})
	require.NoError(t, err)
	tx := tbl.NewTransaction()
	require.NoError(t, tx.NewRowDelta(nil).AddDeletes(df).Commit(ctx))
	_, err = tx.Commit(ctx)
	require.NoError(t, err)
	require.NoError(t, cold.Refresh(ctx))
	return loc
}
