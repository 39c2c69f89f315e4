package proof

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/meterstore/meterstore/internal/sqltext"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	_ "github.com/duckdb/duckdb-go/v2" // a plain DuckDB: no MeterStore functions registered
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/testkit"
)

// TestInteropColdFiles: the cold tier's files, read by engines that are not
// the writer's code path. arrow-go's Parquet reader reads every file: the
// declared sort order is in the footer and holds, bloom filters for malo_id
// and obis_code are there and know the values, decimals are exact, quality is
// text. The published resolution SQL, run unmodified in a plain DuckDB over a
// view of read_parquet of the current files, reproduces the store's answer;
// the naive sum over the same files does not.
func TestInteropColdFiles(t *testing.T) {
	w := testkit.NewWorkload(0x0DE7)
	w.MaLos, w.Days, w.Mix = 5, 3, testkit.StromOnly
	w.CorrectionRate, w.RedeliveryRate, w.SubstitutedRate = 0.3, 0.1, 0.05
	b, err := w.Generate()
	require.NoError(t, err)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	o := testkit.NewOracle(cfg)
	var originals, corrections []testkit.Delivery
	for _, d := range b.Deliveries {
		if d.Kind == testkit.Correction {
			corrections = append(corrections, d)
		} else {
			originals = append(originals, d)
		}
	}
	e := newEnv(t, b.Deliveries[0].Arrival, cfg)
	e.appendAll(t, o, originals)
	last := b.Deliveries[len(b.Deliveries)-1].Arrival
	_, err = e.table(t).Archive(e.ctx, last.Add(cfg.SettlementLag()).Add(48*time.Hour), 0)
	require.NoError(t, err)
	out := e.appendAll(t, o, corrections) // every correction is late: a second set of files
	require.True(t, out.HadLateCorrections())
	require.Zero(t, e.hotRows(t), "everything is in the cold tier")
	agree(t, e, o, "interop fixture")

	tbl := e.table(t)
	require.NoError(t, tbl.Cold().Refresh(e.ctx))
	files, _, err := tbl.Cold().PlanFiles(e.ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	require.Greater(t, len(files), 1)

	// 1. arrow-go's Parquet reader, file by file.
	want := map[string]bool{}
	for _, r := range o.Current().Versions(time.Time{}, time.Time{}) {
		want[interopKey(r.MaloID, r.ObisCode, r.From, r.Version, r.Value, r.Quality)] = true
	}
	got := map[string]bool{}
	for _, f := range files {
		readWithArrowGo(t, f.Path, got)
	}
	require.Equal(t, len(want), len(got), "every stored version read back exactly once")
	for k := range want {
		require.True(t, got[k], "arrow-go did not read %s", k)
	}

	// 2. A plain DuckDB, the published SQL unmodified.
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	paths := make([]string, len(files))
	for i, f := range files {
		// On S3, local copies of the same objects: this DuckDB has no httpfs.
		paths[i] = sqltext.String(s3test.LocalCopy(t, f.Path))
	}
	_, err = db.ExecContext(e.ctx, `CREATE VIEW `+meterstore.QuoteIdent(cfg.Name())+` AS SELECT * FROM read_parquet([`+strings.Join(paths, ", ")+`])`)
	require.NoError(t, err)
	published := cfg.ResolutionSQL()
	var n int64
	var sum, naive string
	require.NoError(t, db.QueryRowContext(e.ctx, `SELECT count(*), CAST(sum("value") AS VARCHAR) FROM (`+published+`) AS r`).Scan(&n, &sum))
	storeRes := e.query(t, `SELECT count(*), sum(value) FROM readings`)
	all := time.Time{}
	require.Equal(t, asInt(t, storeRes[0][0]), n, "DuckDB over the published SQL: row count")
	require.True(t, asDec(t, storeRes[0][1]).Equal(decimal.RequireFromString(sum)), "store %s, DuckDB %s", asDec(t, storeRes[0][1]), sum)
	require.True(t, o.Sum(all, all).Equal(decimal.RequireFromString(sum)))
	require.NoError(t, db.QueryRowContext(e.ctx, `SELECT CAST(sum("value") AS VARCHAR) FROM `+meterstore.QuoteIdent(cfg.Name())).Scan(&naive))
	require.True(t, o.NaiveSum(all, all).Equal(decimal.RequireFromString(naive)))
	require.False(t, decimal.RequireFromString(naive).Equal(decimal.RequireFromString(sum)), "the naive sum over the files overstates")

	// Per MaLo/channel/balancing day, from the stored column, in plain DuckDB.
	rows, err := db.QueryContext(e.ctx, `SELECT malo_id, obis_code, CAST(balancing_day AS VARCHAR), CAST(sum("value") AS VARCHAR) FROM (`+published+`) AS r GROUP BY ALL`)
	require.NoError(t, err)
	defer rows.Close()
	wantDays := o.SumsByMaloChannelDay(all, all)
	groups := 0
	for rows.Next() {
		var malo, obis, day, s string
		require.NoError(t, rows.Scan(&malo, &obis, &day, &s))
		var k testkit.MaloChannelDay
		k.MaloID, k.ObisCode = malo, obis
		d, err := time.Parse("2006-01-02", day)
		require.NoError(t, err)
		k.BalancingDay.Year, k.BalancingDay.Month, k.BalancingDay.Day = d.Date()
		require.True(t, wantDays[k].Equal(decimal.RequireFromString(s)), "%+v: oracle %s, DuckDB %s", k, wantDays[k], s)
		groups++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, len(wantDays), groups)
}

func interopKey(malo, obis string, from time.Time, version uint64, v decimal.Decimal, quality string) string {
	return fmt.Sprintf("%s|%s|%s|%d|%s|%s", malo, obis, from.UTC().Format(time.RFC3339), version, v.String(), quality)
}

// readWithArrowGo checks one file's footer and adds its rows to got.
func readWithArrowGo(t *testing.T, path string, got map[string]bool) {
	t.Helper()
	r, err := file.OpenParquetFile(s3test.LocalCopy(t, path), false)
	require.NoError(t, err, path)
	defer r.Close()
	md := r.MetaData()
	schema := md.Schema
	idx := func(name string) int {
		i := schema.ColumnIndexByName(name)
		require.GreaterOrEqual(t, i, 0, "%s has no column %s", path, name)
		return i
	}
	maloCol, obisCol, fromCol := idx("malo_id"), idx("obis_code"), idx("from")

	// Footer: declared sort order and bloom filters in every row group.
	bfr := r.GetBloomFilterReader()
	for g := 0; g < r.NumRowGroups(); g++ {
		rg := md.RowGroup(g)
		sc := rg.SortingColumns()
		require.Len(t, sc, 3, "%s row group %d declares its sort order", path, g)
		for i, c := range []int{maloCol, obisCol, fromCol} {
			require.EqualValues(t, c, sc[i].ColumnIdx)
			require.False(t, sc[i].Descending)
		}
		gb, err := bfr.RowGroup(g)
		require.NoError(t, err)
		for _, c := range []int{maloCol, obisCol} {
			bf, err := gb.GetColumnBloomFilter(c)
			require.NoError(t, err)
			require.NotNil(t, bf, "%s row group %d: bloom filter for %s", path, g, schema.Column(c).Name())
		}
	}

	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	require.NoError(t, err)
	tbl, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	defer tbl.Release()
	col := func(name string) arrow.Array {
		for i := 0; i < int(tbl.NumCols()); i++ {
			if tbl.Schema().Field(i).Name == name {
				ch := tbl.Column(i).Data().Chunks()
				if len(ch) == 1 {
					return ch[0]
				}
				c, err := array.Concatenate(ch, memory.DefaultAllocator)
				require.NoError(t, err)
				return c
			}
		}
		require.FailNow(t, "no column "+name)
		return nil
	}
	malo, obis := col("malo_id").(*array.String), col("obis_code").(*array.String)
	from := col("from").(*array.Timestamp)
	fromType := from.DataType().(*arrow.TimestampType)
	require.Equal(t, arrow.Microsecond, fromType.Unit)
	quality, ok := col("quality").(*array.String)
	require.True(t, ok, "quality reads as text, not %s", col("quality").DataType())
	value, ok := col("value").(*array.Decimal128)
	require.True(t, ok, "value is a decimal, not %s", col("value").DataType())
	dt := value.DataType().(*arrow.Decimal128Type)
	require.EqualValues(t, 18, dt.Precision)
	require.EqualValues(t, 6, dt.Scale)
	vcol := col("version")

	// Bloom filters know every value of their row group (one group here).
	if r.NumRowGroups() == 1 {
		gb, _ := bfr.RowGroup(0)
		for _, c := range []struct {
			ci  int
			arr *array.String
		}{{maloCol, malo}, {obisCol, obis}} {
			bf, err := gb.GetColumnBloomFilter(c.ci)
			require.NoError(t, err)
			for i := 0; i < c.arr.Len(); i++ {
				require.True(t, bf.CheckHash(metadata.GetHash(bf.Hasher(), parquet.ByteArray(c.arr.Value(i)))), "bloom filter misses %q", c.arr.Value(i))
			}
		}
	}

	type sk struct {
		m, o string
		f    int64
	}
	var prev *sk
	for i := 0; i < malo.Len(); i++ {
		cur := sk{malo.Value(i), obis.Value(i), int64(from.Value(i))}
		if prev != nil {
			order := []string{prev.m, cur.m}
			require.True(t, sort.StringsAreSorted(order), "%s row %d out of (malo_id, obis_code, from) order", path, i)
			if prev.m == cur.m {
				require.LessOrEqual(t, prev.o, cur.o, "%s row %d out of order", path, i)
				if prev.o == cur.o {
					require.LessOrEqual(t, prev.f, cur.f, "%s row %d out of order", path, i)
				}
			}
		}
		prev = &cur
		n := value.Value(i)
		v := decimal.NewFromBigInt(n.BigInt(), -dt.Scale)
		var ver uint64
		switch vc := vcol.(type) {
		case *array.Decimal128:
			ver = vc.Value(i).BigInt().Uint64()
		case *array.Int64:
			ver = uint64(vc.Value(i))
		default:
			require.FailNow(t, "version column type", "%s", vcol.DataType())
		}
		k := interopKey(cur.m, cur.o, time.UnixMicro(cur.f), ver, v, quality.Value(i))
		require.False(t, got[k], "row %s read twice", k)
		got[k] = true
	}
}
