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
