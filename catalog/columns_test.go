package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

// nopCloser lets a bytes.Buffer stand in for a file.
type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }

// The writer below pqarrow writes the bytes pqarrow writes for the same rows
// in the same batches: schema, key-value metadata (with the writer's
// MarkBalancingDay), pages, statistics, page index, bloom filters — across a row-group boundary, with nulls in nullable
// core and declared columns.
func TestDataFileMatchesPqarrow(t *testing.T) {
	cfg := testConfig(t)
	var rows []meterstore.Row
	for day := 0; len(rows) < RowGroupRows+10_000; day++ {
		for i, tenant := range []string{opA, opB} {
			for _, r := range genRows(day0.Add(time.Duration(day)*24*time.Hour), 96, tenant, uint64(day+i)) {
				if len(rows)%3 == 0 {
					r.MeloID = strp("DE0001234567890123456789012345678")
					r.Extra[1] = strp("contract-" + tenant)
				}
				if len(rows)%5 == 0 {
					r.Provenance = strp(`{"corrected_by":"` + tenant + `"}`)
				}
				rows = append(rows, r)
			}
		}
	}
	props := writerProperties(cfg)
	for _, chunk := range []int{997, 20_000} {
		var want, got bytes.Buffer
		fw, err := pqarrow.NewFileWriter(ArrowSchema(cfg), nopCloser{&want}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		require.NoError(t, err)
		// the writer's own footer mark: it derives every row's balancing_day
		require.NoError(t, fw.AppendKeyValueMetadata(MarkBalancingDay, MarkBalancingDayDerived))
		f, err := openDataFile(cfg, nopCloser{&got}, props)
		require.NoError(t, err)
		start := 0
		flush := func(end int) {
			rec, err := rowsToRecord(cfg, rows[start:end], nil)
			require.NoError(t, err)
			require.NoError(t, fw.WriteBuffered(rec))
			rec.Release()
			_, err = f.flush()
			require.NoError(t, err)
			start = end
		}
		for i := range rows {
			_, err := f.batch.add(&rows[i])
			require.NoError(t, err)
			if f.full() || i+1-start == chunk { // as writeFiles flushes
				flush(i + 1)
			}
		}
		flush(len(rows))
		// and, as it closes the file, that it checked every row's unit pair
		require.NoError(t, fw.AppendKeyValueMetadata(MarkUnitPairs, MarkUnitPairsChecked))
		require.NoError(t, fw.Close())
		require.NoError(t, f.close())
		require.EqualValues(t, len(rows), f.rows)
		require.True(t, bytes.Equal(want.Bytes(), got.Bytes()), "batches of %d rows: %d bytes from pqarrow, %d from the writer", chunk, want.Len(), got.Len())
	}
}

// pagedSource hands out rows in pages decoded into two buffers in turn, as the
// archiver's partition source does, overwriting a page on the call after next;
// it fails if called concurrently, and after a given number of pages.
type pagedSource struct {
	rows     []meterstore.Row
	pageSize int
	failAt   int // page number that fails instead; 0 = none
	bufs     [2][]meterstore.Row
	pos      int
	calls    int
	inFlight atomic.Int32
}

var errSourceBroke = errors.New("source broke")

func (s *pagedSource) Next(context.Context) ([]meterstore.Row, error) {
	if s.inFlight.Add(1) != 1 {
		return nil, errors.New("Next called concurrently")
	}
	defer s.inFlight.Add(-1)
	time.Sleep(time.Millisecond) // widen any overlap
	s.calls++
	if s.calls == s.failAt {
		return nil, errSourceBroke
	}
	if s.pos >= len(s.rows) {
		return nil, io.EOF
	}
	buf := &s.bufs[s.calls%2]
	*buf = append((*buf)[:0], s.rows[s.pos:min(s.pos+s.pageSize, len(s.rows))]...)
	s.pos += len(*buf)
	return *buf, nil
}

// CommitWindow reads the next page while it writes the current one: a source
// reusing page memory two calls later still has every row written exactly,
// and a source failing midway fails the window with nothing committed and no
// data file left behind.
func TestCommitWindowPrefetch(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	rows := append(genRows(day0, 96, opA, 1), genRows(day0, 96, opB, 1)...)
	sortKeyset(rows)

	snap := tb.CurrentSnapshotID()
	broken := &pagedSource{rows: rows, pageSize: 50, failAt: 4}
	_, err = tb.CommitWindow(ctx, broken, day0.Add(24*time.Hour))
	require.ErrorIs(t, err, errSourceBroke)
	require.Equal(t, 4, broken.calls, "the source is not asked again after it failed")
	require.Equal(t, snap, tb.CurrentSnapshotID())
	orphans, err := tb.DeleteOrphanFiles(ctx, 0, true)
	require.NoError(t, err)
	for _, o := range orphans {
		require.NotContains(t, o, ".parquet", "a failed window leaves no data file")
	}

	src := &pagedSource{rows: rows, pageSize: 50}
	res, err := tb.CommitWindow(ctx, src, day0.Add(24*time.Hour))
	require.NoError(t, err)
	require.EqualValues(t, len(rows), res.Rows)
	require.Equal(t, rowSet(rows), rowSet(readAll(t, tb)), fmt.Sprintf("%d pages", src.calls))
}

// versionedWindow is a new cold table and a window of perVersion rows at each
// of versions versions, interleaved row by row in (malo_id, obis_code, from) order.
func versionedWindow(t *testing.T, versions uint64, perVersion int) (*Table, []meterstore.Row) {
	e := newEnv(t)
	tb, err := e.cat.CreateTable(context.Background(), e.cfg)
	require.NoError(t, err)
	var rows []meterstore.Row
	n := int(versions) * perVersion
	for m := 0; len(rows) < n; m++ {
		malo := fmt.Sprintf("5%010d", m)
		for q := 0; q < 96 && len(rows) < n; q++ {
			for v := uint64(1); v <= versions; v++ {
				rows = append(rows, mkRow(malo, opA, day0.Add(time.Duration(q)*15*time.Minute), "1.5", v, opA))
			}
		}
	}
	return tb, rows
}

// rowGroupsOf counts the row groups of a Parquet file.
func rowGroupsOf(t *testing.T, path string) int {
	t.Helper()
	r, err := file.OpenParquetFile(s3test.LocalCopy(t, path), false)
	require.NoError(t, err)
	defer r.Close()
	return r.NumRowGroups()
}

// A window of eight versions opens eight files; their row groups in the making
// together stay under openRowGroupRows: the largest is ended early, and every
// row is still written once, in order, with its footer facts.
func TestWriterBoundsOpenRowGroups(t *testing.T) {
	ctx := context.Background()
	const versions = 8
	perVersion := openRowGroupRows/8 + 4_000
	tb, rows := versionedWindow(t, versions, perVersion)
	res, err := tb.CommitWindow(ctx, &SliceSource{Rows: rows}, day0.Add(24*time.Hour))
	require.NoError(t, err)
	require.Equal(t, versions, res.Files)
	files, _, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	rowGroups := 0
	for _, f := range files {
		require.EqualValues(t, perVersion, f.Records)
		checkFooter(t, f.Path)
		rowGroups += rowGroupsOf(t, f.Path)
	}
	require.Greater(t, rowGroups, versions, "a row group ended before it was full")
}

// A version's rows continue in a new file once its file holds its bound of row
// groups, or once the open files together hold theirs: every file stays within
// the bounds, holds rows of one version in order, and together they hold every
// row once.
func TestWriterClosesFilesAtFooterBounds(t *testing.T) {
	for name, bounds := range map[string]fileBounds{
		"per file":  {versions: 8, rowGroups: 1, footerRowGroups: 100},
		"all files": {versions: 8, rowGroups: 8, footerRowGroups: 1},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			const versions = 8
			tb, rows := versionedWindow(t, versions, openRowGroupRows/8+4_000)
			tbl := tb.Iceberg()
			files, err := tb.writeFiles(ctx, tbl, rowPages(rows, 50_000), bounds)
			require.NoError(t, err)
			_, err = tb.commitFiles(ctx, tbl, "archive", files, map[string]string{WatermarkProperty: formatWatermark(day0.Add(24 * time.Hour))})
			require.NoError(t, err)
			planned, _, err := tb.PlanFiles(ctx, PlanRequest{})
			require.NoError(t, err)
			require.Greater(t, len(planned), versions, "files were closed early")
			perVersion := map[uint64]int64{}
			for _, f := range planned {
				require.Positive(t, f.Records, f.Path)
				require.LessOrEqual(t, rowGroupsOf(t, f.Path), bounds.rowGroups, f.Path)
				require.NotNil(t, f.VersionMin)
				require.Equal(t, *f.VersionMin, *f.VersionMax, "one version per file")
				perVersion[*f.VersionMin] += f.Records
				checkFooter(t, f.Path)
			}
			for v := uint64(1); v <= versions; v++ {
				require.EqualValues(t, len(rows)/versions, perVersion[v], "version %d", v)
			}
			require.Equal(t, rowSet(rows), rowSet(readAll(t, tb)))
		})
	}
}

// The registered ZSTD codec compresses a page of up to its window to the
// bytes arrow-go's own does, and a larger one to a frame that decodes back.
func TestZstdCodecMatchesArrow(t *testing.T) {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	require.NoError(t, err)
	ours, ok := c.(*zstdCodec)
	require.True(t, ok, "catalog's codec is registered")
	var text bytes.Buffer
	for i := 0; text.Len() < 3<<20; i++ {
		fmt.Fprintf(&text, "%d,5%010d,1-0:1.29.0,%d.%06d\n", i, i/96, i%1000, i*7919%1000000)
	}
	noise := make([]byte, 1<<20)
	for i := range noise {
		noise[i] = byte(i * 2654435761 >> 13)
	}
	for _, src := range [][]byte{{}, []byte("x"), text.Bytes()[:1000], text.Bytes()[:200<<10], text.Bytes()[:zstdWindow], noise, text.Bytes()} {
		for _, level := range []int{1, 3, 9, compress.DefaultCompressionLevel} {
			got := ours.EncodeLevel(nil, src, level)
			if len(src) <= zstdWindow {
				require.Equal(t, ours.Codec.EncodeLevel(nil, src, level), got, "%d bytes at level %d", len(src), level)
			}
			back, err := compress.Decode(c, nil, got)
			require.NoError(t, err)
			require.True(t, bytes.Equal(src, back), "%d bytes at level %d round trip", len(src), level)
		}
	}
}
