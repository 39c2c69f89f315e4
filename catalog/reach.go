package catalog

import (
	"context"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/meterstore/meterstore"
)

// Reaching returns the watermark of the current snapshot and the rows of the
// given MaLos that start before hi and end after lo. With lo at or above the
// watermark these are the intervals an archival took with their "from" below
// the watermark and their "to" above it: the only cold rows a hot row can
// overlap. Only files whose bounds of malo_id, "from" and "to" admit such a
// row are opened — for a grid that never crosses the watermark, none. The
// caller refreshes the handle first.
func (t *Table) Reaching(ctx context.Context, malos []string, lo, hi time.Time) (_ time.Time, _ []meterstore.Row, err error) {
	defer t.explainObjectStore(&err)
	tbl := t.Iceberg()
	w, err := t.watermarkFrom(ctx, tbl, tbl.CurrentSnapshot())
	if err != nil || len(malos) == 0 {
		return w, nil, err
	}
	rows, err := t.readFiltered(ctx, tbl, nil, iceberg.NewAnd(iceberg.IsIn(iceberg.Reference("malo_id"), malos...), overlapping(lo, hi)))
	return w, rows, err
}

// Straddling returns the watermark of the current snapshot and every row
// whose interval starts below it and ends above it: the cold rows a hot row
// can overlap, of all MaLos (for a check of the whole table, msql verify).
// Only files whose "from" and "to" bounds admit such a row are opened. The
// caller refreshes the handle first.
func (t *Table) Straddling(ctx context.Context) (_ time.Time, _ []meterstore.Row, err error) {
	defer t.explainObjectStore(&err)
	tbl := t.Iceberg()
	w, err := t.watermarkFrom(ctx, tbl, tbl.CurrentSnapshot())
	if err != nil || w.IsZero() {
		return w, nil, err
	}
	rows, err := t.readFiltered(ctx, tbl, nil, overlapping(w, w.Add(time.Microsecond)))
	return w, rows, err
}

// overlapping admits the rows starting before hi and ending after lo.
func overlapping(lo, hi time.Time) iceberg.BooleanExpression {
	return iceberg.NewAnd(
		iceberg.LessThan(iceberg.Reference("from"), iceberg.Timestamp(hi.UnixMicro())),
		iceberg.GreaterThan(iceberg.Reference("to"), iceberg.Timestamp(lo.UnixMicro())))
}
