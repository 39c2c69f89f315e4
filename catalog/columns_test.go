package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"meterstore"
)

// nopCloser lets a bytes.Buffer stand in for a file.
type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }

// The writer below pqarrow writes the bytes pqarrow writes for the same rows
// in the same batches: schema, key-value metadata, pages, statistics, page
// index, bloom filters — across a row-group boundary, with nulls in nullable
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
	for _, chunk := range []int{997, batchRows} {
		var want, got bytes.Buffer
		fw, err := pqarrow.NewFileWriter(ArrowSchema(cfg), nopCloser{&want}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		require.NoError(t, err)
		f, err := openDataFile(cfg, nopCloser{&got}, props)
		require.NoError(t, err)
		start := 0
		flush := func(end int) {
			rec, err := RowsToRecord(cfg, rows[start:end], nil)
			require.NoError(t, err)
			require.NoError(t, fw.WriteBuffered(rec))
			rec.Release()
			require.NoError(t, f.flush())
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
