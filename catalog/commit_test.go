package catalog

import (
	"context"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

var day0 = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)

func TestCreateTableLayout(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	require.Equal(t, 2, tb.FormatVersion())

	// Idempotent.
	tb2, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	require.Equal(t, tb.Iceberg().Metadata().TableUUID(), tb2.Iceberg().Metadata().TableUUID())

	ice := tb.Iceberg()
	sc := ice.Schema()
	for _, c := range e.cfg.Columns() {
		f, ok := sc.FindFieldByID(c.FieldID)
		require.True(t, ok, c.Name)
		require.Equal(t, c.Name, f.Name)
		require.Equal(t, !c.Nullable, f.Required, c.Name)
		require.True(t, f.Type.Equals(IcebergType(c.Type)), "%s: %s", c.Name, f.Type)
	}
	require.Equal(t, "identity(tenant),month(from)", describeSpec(ice.Spec(), sc))
	require.Equal(t, "malo_id,obis_code,from", describeSort(ice.SortOrder(), sc))
	require.Equal(t, "zstd", ice.Properties()["write.parquet.compression-codec"])

	_, err = e.cat.Table(ctx, testConfigNamed(t, "nope"))
	require.ErrorIs(t, err, ErrNoSuchTable)
}

// TestPartitionFieldIDsUniqueAcrossSpecs: a table with identity columns is
// created with month(from) alone and gets its full spec in a second commit.
// Iceberg requires a partition field id to mean one field in every spec of the
// table; Spark's Iceberg runtime builds the _partition metadata column from all
// specs and refuses any read of a table that reuses an id for another field.
func TestPartitionFieldIDsUniqueAcrossSpecs(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	md := tb.Iceberg().Metadata()
	require.Greater(t, len(md.PartitionSpecs()), 1, "the identity column arrives in a second spec")
	type field struct {
		source    int
		transform string
	}
	byID := map[int]field{}
	for _, spec := range md.PartitionSpecs() {
		for _, f := range spec.Fields() {
			got := field{f.SourceID(), f.Transform.String()}
			if prev, ok := byID[f.FieldID]; ok {
				require.Equal(t, prev, got, "partition field id %d names two fields (spec %d)", f.FieldID, spec.ID())
			}
			byID[f.FieldID] = got
		}
	}
	require.NotNil(t, md.LastPartitionSpecID())
	require.Equal(t, len(byID)+firstPartitionID-1, *md.LastPartitionSpecID(), "last-partition-id is the highest assigned")
}

func TestCommitWindowFootersAndPlan(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)

	w0, err := tb.Watermark(ctx)
	require.NoError(t, err)
	require.True(t, w0.IsZero())

	rows := genRows(day0, 96, opA, 1) // one day, 4 MaLos, tenant = opA
	rows2 := genRows(day0, 96, opB, 1)
	src := &SliceSource{Rows: append(append(rows[:0:0], rows...), rows2...), PageSize: 50}
	sortKeyset(src.Rows)
	w1 := day0.Add(24 * time.Hour)
	res, err := tb.CommitWindow(ctx, src, w1)
	require.NoError(t, err)
	require.EqualValues(t, 2*4*96, res.Rows)
	require.Equal(t, 2, res.Files, "one file per tenant partition")
	require.True(t, res.Watermark.Equal(w1))

	got, err := tb.Watermark(ctx)
	require.NoError(t, err)
	require.True(t, got.Equal(w1))

	// Reload from the catalog: the watermark is in the snapshot.
	tb2, err := e.cat.Table(ctx, e.cfg)
	require.NoError(t, err)
	got, err = tb2.Watermark(ctx)
	require.NoError(t, err)
	require.True(t, got.Equal(w1))

	// Round trip is exact.
	back := readAll(t, tb2)
	require.Equal(t, rowSet(src.Rows), rowSet(back))
	require.Len(t, back, len(src.Rows))
	for i := range back {
		require.True(t, back[i].Value.Equal(src.Rows[i].Value), "value %s vs %s", back[i].Value, src.Rows[i].Value)
		require.Equal(t, src.Rows[i].Version, back[i].Version)
		require.True(t, back[i].BalancingDay.Equal(src.Rows[i].BalancingDay))
		require.True(t, back[i].RecordedAt.Equal(src.Rows[i].RecordedAt))
		require.Equal(t, *src.Rows[i].Extra[0], *back[i].Extra[0])
		require.Nil(t, back[i].Extra[1])
	}

	// Footers.
	files, snap, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	require.Equal(t, res.SnapshotID, snap)
	require.Len(t, files, 2)
	for _, f := range files {
		checkFooter(t, f.Path)
		require.NotNil(t, f.FromMin)
		require.NotNil(t, f.FromMax)
		require.True(t, f.FromMin.Equal(day0), f.FromMin)
		require.True(t, f.FromMax.Equal(day0.Add(95*15*time.Minute)), f.FromMax)
		require.NotNil(t, f.VersionMin)
		require.EqualValues(t, 1, *f.VersionMin)
		require.EqualValues(t, 1, *f.VersionMax)
		require.EqualValues(t, 4*96, f.Records)
		require.Contains(t, f.Partition, "tenant")
		require.EqualValues(t, (2024-1970)*12+2, f.Partition["from_month"])
		st, err := os.Stat(s3test.LocalCopy(t, f.Path))
		require.NoError(t, err)
		t.Logf("file %s: %d rows, %d bytes", filepath.Base(f.Path), f.Records, st.Size())
	}

	// Pruning by tenant.
	files, _, err = tb.PlanFiles(ctx, PlanRequest{Eq: map[string]string{"tenant": opB}})
	require.NoError(t, err)
	require.Len(t, files, 1)
	require.Equal(t, opB, files[0].Partition["tenant"])

	// Second window in April; pruning by range.
	w2 := time.Date(2024, 4, 2, 0, 0, 0, 0, time.UTC)
	res2, err := tb.CommitWindow(ctx, &SliceSource{Rows: genRows(time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC), 8, opA, 3)}, w2)
	require.NoError(t, err)
	files, _, err = tb.PlanFiles(ctx, PlanRequest{From: time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	require.Len(t, files, 1)
	require.EqualValues(t, 3, *files[0].VersionMin)
	files, _, err = tb.PlanFiles(ctx, PlanRequest{To: time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	require.Len(t, files, 2)
	// Planning an older snapshot.
	files, _, err = tb.PlanFiles(ctx, PlanRequest{SnapshotID: &res.SnapshotID})
	require.NoError(t, err)
	require.Len(t, files, 2)
	files, _, err = tb.PlanFiles(ctx, PlanRequest{SnapshotID: &res2.SnapshotID})
	require.NoError(t, err)
	require.Len(t, files, 3)

	// Never backwards.
	_, err = tb.CommitWindow(ctx, &SliceSource{}, w1)
	require.ErrorIs(t, err, ErrWatermarkBackwards)
	require.ErrorIs(t, err, meterstore.ErrConflict)
	// An empty window still advances the watermark.
	w3 := w2.Add(24 * time.Hour)
	res3, err := tb.CommitWindow(ctx, &SliceSource{}, w3)
	require.NoError(t, err)
	require.Zero(t, res3.Rows)
	got, _ = tb.Watermark(ctx)
	require.True(t, got.Equal(w3))
	require.Len(t, readAll(t, tb), 2*4*96+4*8)
}

func checkFooter(t *testing.T, path string) {
	t.Helper()
	r, err := file.OpenParquetFile(s3test.LocalCopy(t, path), false)
	require.NoError(t, err)
	defer r.Close()
	md := r.MetaData()
	sc := md.Schema
	maloIdx := sc.ColumnIndexByName("malo_id")
	obisIdx := sc.ColumnIndexByName("obis_code")
	fromIdx := sc.ColumnIndexByName("from")
	require.GreaterOrEqual(t, maloIdx, 0)
	require.Equal(t, parquet.Repetitions.Required, sc.Column(maloIdx).SchemaNode().RepetitionType())
	bloomReader := r.GetBloomFilterReader()
	var prev struct {
		malo, obis string
		from       int64
		set        bool
	}
	for rg := 0; rg < r.NumRowGroups(); rg++ {
		rgm := md.RowGroup(rg)
		for ci := 0; ci < rgm.NumColumns(); ci++ {
			cc, err := rgm.ColumnChunk(ci)
			require.NoError(t, err)
			require.Equal(t, compress.Codecs.Zstd, cc.Compression(), sc.Column(ci).Name())
			ok, err := cc.StatsSet()
			require.NoError(t, err)
			require.True(t, ok, "statistics for %s", sc.Column(ci).Name())
		}
		bf, err := bloomReader.RowGroup(rg)
		require.NoError(t, err)
		for _, ci := range []int{maloIdx, obisIdx} {
			cc, _ := rgm.ColumnChunk(ci)
			require.Positive(t, cc.BloomFilterOffset(), "bloom filter offset for %s", sc.Column(ci).Name())
			f, err := bf.GetColumnBloomFilter(ci)
			require.NoError(t, err)
			require.NotNil(t, f, "bloom filter for %s", sc.Column(ci).Name())
			require.LessOrEqual(t, f.Size(), int64(BloomFilterMaxBytes), "bloom filter size bounded")
			t.Logf("bloom filter %s rg %d: %d bytes", sc.Column(ci).Name(), rg, f.Size())
		}
		// Page index: column index + offset index on every column, readable.
		pir, err := r.GetPageIndexReader().RowGroup(rg)
		require.NoError(t, err)
		for ci := 0; ci < rgm.NumColumns(); ci++ {
			cc, _ := rgm.ColumnChunk(ci)
			require.NotNil(t, cc.GetColumnIndexLocation(), "column index for %s", sc.Column(ci).Name())
			require.NotNil(t, cc.GetOffsetIndexLocation(), "offset index for %s", sc.Column(ci).Name())
			oi, err := pir.GetOffsetIndex(ci)
			require.NoError(t, err)
			require.NotEmpty(t, oi.GetPageLocations(), sc.Column(ci).Name())
			cix, err := pir.GetColumnIndex(ci)
			require.NoError(t, err)
			require.NotNil(t, cix, sc.Column(ci).Name())
		}
		// The sort order is declared in the footer.
		require.Equal(t, []parquet.SortingColumn{
			{ColumnIdx: int32(maloIdx), NullsFirst: true},
			{ColumnIdx: int32(obisIdx), NullsFirst: true},
			{ColumnIdx: int32(fromIdx), NullsFirst: true},
		}, rgm.SortingColumns())
		require.LessOrEqual(t, rgm.NumRows(), int64(RowGroupRows))
		// Sortedness: (malo_id, obis_code, from) ascending.
		rgr := r.RowGroup(rg)
		malo := readStrings(t, rgr, maloIdx)
		obis := readStrings(t, rgr, obisIdx)
		from := readInt64(t, rgr, fromIdx)
		for i := range malo {
			if prev.set {
				less := prev.malo < malo[i] || prev.malo == malo[i] && (prev.obis < obis[i] || prev.obis == obis[i] && prev.from <= from[i])
				require.True(t, less, "row %d out of order: %s %s %d after %s %s %d", i, malo[i], obis[i], from[i], prev.malo, prev.obis, prev.from)
			}
			prev.malo, prev.obis, prev.from, prev.set = malo[i], obis[i], from[i], true
		}
	}
}

func readStrings(t *testing.T, rg *file.RowGroupReader, ci int) []string {
	cr, err := rg.Column(ci)
	require.NoError(t, err)
	br := cr.(*file.ByteArrayColumnChunkReader)
	n := rg.NumRows()
	vals := make([]parquet.ByteArray, n)
	_, read, err := br.ReadBatch(n, vals, nil, nil)
	require.NoError(t, err)
	out := make([]string, read)
	for i := 0; i < read; i++ {
		out[i] = string(vals[i])
	}
	return out
}

func readInt64(t *testing.T, rg *file.RowGroupReader, ci int) []int64 {
	cr, err := rg.Column(ci)
	require.NoError(t, err)
	ir := cr.(*file.Int64ColumnChunkReader)
	n := rg.NumRows()
	vals := make([]int64, n)
	_, read, err := ir.ReadBatch(n, vals, nil, nil)
	require.NoError(t, err)
	return vals[:read]
}
