package catalog

import (
	"context"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"meterstore"
)

// ReadRows reads the rows matching req (row-level filtered, not just file-pruned)
// through iceberg-go's reader. For corrections, checks and tests; the engine
// reads the planned files with DuckDB instead.
func (t *Table) ReadRows(ctx context.Context, req PlanRequest) ([]meterstore.Row, error) {
	tbl := t.Iceberg()
	filter, err := t.rowFilter(req.From, req.To, req.Eq)
	if err != nil {
		return nil, err
	}
	return t.readFiltered(ctx, tbl, req.SnapshotID, filter)
}

func (t *Table) readFiltered(ctx context.Context, tbl *table.Table, snapID *int64, filter iceberg.BooleanExpression) ([]meterstore.Row, error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	opts := []table.ScanOption{table.WithRowFilter(filter)}
	if snapID != nil {
		if tbl.SnapshotByID(*snapID) == nil {
			return nil, fmt.Errorf("cold table %s: snapshot %d: %w", t.cfg.Name(), *snapID, ErrNoSnapshot)
		}
		opts = append(opts, table.WithSnapshotID(*snapID))
	}
	scan := tbl.Scan(opts...)
	defer scan.Close()
	_, itr, err := scan.ToArrowRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("cold table %s: read: %w", t.cfg.Name(), err)
	}
	return t.collect(itr)
}

type arrowRecord = arrow.RecordBatch

func (t *Table) collect(itr func(func(arrowRecord, error) bool)) ([]meterstore.Row, error) {
	var out []meterstore.Row
	for rec, err := range itr {
		if err != nil {
			return nil, fmt.Errorf("cold table %s: read: %w", t.cfg.Name(), err)
		}
		rows, err := RecordToRows(t.cfg, rec)
		rec.Release()
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// readTasks reads exactly the given files (compaction).
func (t *Table) readTasks(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask) ([]meterstore.Row, error) {
	scan := tbl.Scan()
	defer scan.Close()
	_, itr, err := scan.ReadTasks(ctx, tasks)
	if err != nil {
		return nil, fmt.Errorf("cold table %s: read files: %w", t.cfg.Name(), err)
	}
	return t.collect(itr)
}
