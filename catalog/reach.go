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
	rows, err := t.readFiltered(ctx, tbl, nil, iceberg.NewAnd(
		iceberg.IsIn(iceberg.Reference("malo_id"), malos...),
		iceberg.LessThan(iceberg.Reference("from"), iceberg.Timestamp(hi.UnixMicro())),
		iceberg.GreaterThan(iceberg.Reference("to"), iceberg.Timestamp(lo.UnixMicro()))))
	return w, rows, err
}
