package store

import (
	"context"
	"fmt"

	"github.com/meterstore/meterstore"
)

// AppendReadings writes register readings (Zählerstandsgänge) to a point table,
// routed exactly like Append: the same watermark, the same two boundary reads,
// the same displacements. Every delivery must name its Messlokation — a point
// table identifies a reading by melo_id, because two meters under one
// Marktlokation carry the same register at the same instants — and every row
// is stored with "to" null. It is refused on an interval table (use Append).
func (t *Table) AppendReadings(ctx context.Context, series ...meterstore.StoredSeries) (out AppendOutcome, err error) {
	m := t.writeMetrics()
	defer func() { m.add(out); m.done(ctx, err) }()
	if t.cfg.TimeModel() != meterstore.Point {
		return AppendOutcome{}, fmt.Errorf("append readings to %s: %w: it holds intervals (a Lastgang); use Append, or AppendReadings on a point table",
			t.cfg.Name(), ErrWrongTimeModel)
	}
	rows, stamps, err := t.encode(series)
	if err != nil {
		return AppendOutcome{}, err
	}
	if err := t.checkSubjects(ctx, rows); err != nil {
		return AppendOutcome{}, err
	}
	out, err = t.appendRows(ctx, rows, t.HotBatchRows())
	out.Stamps = stamps
	return out, err
}
