package store

import (
	"context"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/archive"
)

// Backfill writes settled history (every interval before until) straight to
// Iceberg as one archival window and moves the watermark to until: the
// deliveries are encoded and validated as Append encodes them, then committed
// by archive.Archiver.Backfill, which states the rules. It returns the window
// and the number of identical redeliveries that were no-ops. Send the hot
// window through Append (or a HotWriter) and late corrections through Append.
func (t *Table) Backfill(ctx context.Context, until time.Time, series ...meterstore.StoredSeries) (archive.Window, int, error) {
	rows, _, err := t.encode(series)
	if err != nil {
		return archive.Window{}, 0, err
	}
	if err := t.checkSubjects(ctx, rows); err != nil {
		return archive.Window{}, 0, err
	}
	return t.archiver.Backfill(ctx, until, rows)
}

// SeriesSource yields deliveries a page at a time, io.EOF after the last.
type SeriesSource interface {
	Next(ctx context.Context) ([]meterstore.StoredSeries, error)
}

// BackfillFrom is Backfill for history too large to hold: src yields the
// deliveries a page at a time, their rows in catalog.CompareHistoryOrder
// (each delivery within one channel's UTC month, those of one channel's month
// together, months ascending), and each page is encoded, validated and
// written as it comes — archive.Archiver.BackfillFrom — in one commit.
func (t *Table) BackfillFrom(ctx context.Context, until time.Time, src SeriesSource) (archive.Window, int, error) {
	if err := t.writable(); err != nil {
		return archive.Window{}, 0, err
	}
	return t.archiver.BackfillFrom(ctx, until, &encodedSource{t: t, src: src})
}

// encodedSource is a SeriesSource's deliveries as rows.
type encodedSource struct {
	t   *Table
	src SeriesSource
}

func (e *encodedSource) Next(ctx context.Context) ([]meterstore.Row, error) {
	for {
		series, err := e.src.Next(ctx)
		if err != nil {
			return nil, err
		}
		rows, _, err := e.t.encode(series)
		if err != nil {
			return nil, err
		}
		if err := e.t.checkSubjects(ctx, rows); err != nil {
			return nil, err
		}
		if len(rows) > 0 {
			return rows, nil
		}
	}
}
