package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
)

// maloRanges are the malo_id statistics of each row group of the file at path.
func maloRanges(t testing.TB, path string) [][2]string {
	t.Helper()
	r, err := file.OpenParquetFile(s3test.LocalCopy(t, path), false)
	require.NoError(t, err)
	defer r.Close()
	ci := r.MetaData().Schema.ColumnIndexByName("malo_id")
	var out [][2]string
	for rg := 0; rg < r.NumRowGroups(); rg++ {
		cc, err := r.MetaData().RowGroup(rg).ColumnChunk(ci)
		require.NoError(t, err)
		st, err := cc.Statistics()
		require.NoError(t, err)
		bs := st.(*metadata.ByteArrayStatistics)
		out = append(out, [2]string{string(bs.Min()), string(bs.Max())})
	}
	return out
}

// With a row-group target, a row group ends at the first malo_id boundary
// after it holds that many rows: the row groups' malo_id ranges are disjoint,
// so a reader filtering one malo_id skips every row group but one by their
// statistics. Without one, the file is a single row group.
func TestRowGroupsEndAtMaloBoundaries(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	rows := genRows(day0, 300, opA, 1) // 4 malo_ids × 300 rows
	for _, tc := range []struct {
		name   string
		target int
		want   [][2]string
	}{
		{"target 500", 500, [][2]string{{malos[0], malos[1]}, {malos[3], malos[2]}}},
		{"no target", 0, [][2]string{{malos[0], malos[2]}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := tb.writeFiles(ctx, tb.Iceberg(), rowPages(rows, 100), fileBounds{rowGroups: maxRowGroupsPerFile,
				footerRowGroups: maxFooterRowGroups, maloBoundary: true, rowGroupRows: tc.target})
			require.NoError(t, err)
			require.Len(t, files, 1)
			checkFooter(t, files[0].FilePath())
			require.Equal(t, tc.want, maloRanges(t, files[0].FilePath()))
			require.Equal(t, rows, fileRows(t, tb, files[0].FilePath()))
		})
	}
}

// Compaction writes row groups of about compactRowGroupRows rows, each ending
// at a malo_id boundary.
func TestCompactionRowGroupsPerMeter(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	march := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	rows, _ := monthRows(12, march) // 71 424 rows: more than two row groups' target
	_, err = tb.CommitWindow(ctx, &SliceSource{Rows: rows, PageSize: 10_000}, march.AddDate(0, 1, 0))
	require.NoError(t, err)
	res, err := tb.Compact(ctx, CompactOptions{Force: true})
	require.NoError(t, err)
	require.NotEmpty(t, res.Partitions)
	files, _, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	seen := 0
	for _, f := range files {
		if !f.KeysUnique {
			continue
		}
		seen++
		rs := maloRanges(t, f.Path)
		require.Greater(t, len(rs), 1)
		for i := 1; i < len(rs); i++ {
			require.Less(t, rs[i-1][1], rs[i][0], "row groups of %s overlap in malo_id: %v", f.Path, rs)
		}
	}
	require.Positive(t, seen)
}

// BenchmarkOneMeterMonth reads one meter's month through DuckDB's
// read_parquet from a compacted month of 200 meters × 2 quarter-hour
// channels, the same rows in two layouts timed alternately in one run, each
// with DuckDB's Parquet metadata cache off and on: row groups of RowGroupRows
// rows with dictionary-encoded timestamps (the layout before), and row groups
// ending at the first malo_id boundary after compactRowGroupRows with
// delta-encoded timestamps (compaction's):
//
//	go test -run '^$' -bench OneMeterMonth ./catalog/
func BenchmarkOneMeterMonth(b *testing.B) {
	ctx := context.Background()
	e := newEnv(b)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(b, err)
	rows, meters := monthRows(200, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	var dictionary []parquet.WriterProperty
	for _, c := range tb.cfg.Columns() {
		if c.Type == meterstore.TypeTimestamp {
			dictionary = append(dictionary, parquet.WithDictionaryFor(c.Name, true), parquet.WithEncodingFor(c.Name, parquet.Encodings.Plain))
		}
	}
	write := func(target int, extra []parquet.WriterProperty) string {
		f, err := tb.newFanout(ctx, tb.Iceberg(), fileBounds{versions: 2, rowGroups: compactRowGroups,
			footerRowGroups: 2 * compactRowGroups, maloBoundary: true, openRows: 2 * RowGroupRows, rowGroupRows: target})
		require.NoError(b, err)
		f.props = parquet.NewWriterProperties(append(writerOptions(tb.cfg), extra...)...)
		for i := range rows {
			require.NoError(b, f.add(&rows[i], rows[i].Version))
		}
		files, err := f.close()
		require.NoError(b, err)
		require.Len(b, files, 1)
		b.Logf("row-group target %d, %d options added: %d row groups, %.2f B/row", target, len(extra),
			len(maloRanges(b, files[0].FilePath())), float64(files[0].FileSizeBytes())/float64(len(rows)))
		return LocalPath(files[0].FilePath())
	}
	sides := []struct {
		name string
		path string
	}{{"before", write(0, dictionary)}, {"after", write(compactRowGroupRows, nil)}}
	db, err := sql.Open("duckdb", "")
	require.NoError(b, err)
	defer db.Close()
	read := func(path, malo string) time.Duration {
		begin := time.Now()
		var n int64
		var sum sql.NullString
		require.NoError(b, db.QueryRowContext(ctx, `SELECT count(*), sum(value)::VARCHAR FROM read_parquet(?) WHERE malo_id = ?`,
			path, malo).Scan(&n, &sum))
		require.EqualValues(b, 2*31*96, n)
		return time.Since(begin)
	}
	took := map[string]time.Duration{}
	i := 0
	for b.Loop() {
		for _, cache := range []bool{false, true} {
			_, err := db.ExecContext(ctx, fmt.Sprintf("SET GLOBAL parquet_metadata_cache = %v", cache))
			require.NoError(b, err)
			for _, s := range sides {
				took[fmt.Sprintf("%s,cache=%v", s.name, cache)] += read(s.path, meters[i%len(meters)])
			}
		}
		i++
	}
	for k, d := range took {
		b.ReportMetric(float64(d.Microseconds())/float64(i), "µs/read:"+k)
	}
}

// monthRows is a month of quarter-hours on two channels for n meters, from
// start, in keyset order, and the meters' ids.
func monthRows(n int, start time.Time) ([]meterstore.Row, []string) {
	var rows []meterstore.Row
	var meters []string
	end := start.AddDate(0, 1, 0)
	for m := 0; m < n; m++ {
		malo := fmt.Sprintf("5%010d", m*7919)
		meters = append(meters, malo)
		for _, obis := range []string{"1-1:1.29.0", "1-1:2.29.0"} {
			for from := start; from.Before(end); from = from.Add(15 * time.Minute) {
				r := mkRow(malo, opA, from, "0", 20240301000001, opA)
				r.ObisCode = obis
				r.Value = decimal.New(int64(m*7919+from.Minute()*104729+from.Day())%5_000_000, -6)
				rows = append(rows, r)
			}
		}
	}
	sortKeyset(rows)
	return rows, meters
}
