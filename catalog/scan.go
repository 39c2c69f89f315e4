package catalog

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// planTasks plans every file of a snapshot, refusing a snapshot whose scan
// tasks carry delete files (ErrDeleteFiles): MeterStore never deletes a row
// (a correction is a new version), and its readers — DuckDB's read_parquet
// over the planned files, the writer's own statistics — read data files
// whole, so a position or equality delete written by Spark or PyIceberg would
// be counted as live rows.
func (t *Table) planTasks(ctx context.Context, tbl *table.Table, snapID int64) ([]table.FileScanTask, error) {
	tasks, err := tbl.Scan(table.WithSnapshotID(snapID)).PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("cold table %s: plan files: %w", t.cfg.Name(), err)
	}
	var with []string
	for _, task := range tasks {
		var dels []string
		for _, d := range task.DeleteFiles {
			dels = append(dels, LocalPath(d.FilePath())+" (position deletes)")
		}
		for _, d := range task.EqualityDeleteFiles {
			dels = append(dels, LocalPath(d.FilePath())+" (equality deletes)")
		}
		if len(dels) > 0 {
			with = append(with, LocalPath(task.File.FilePath())+": "+strings.Join(dels, ", "))
		}
	}
	if len(with) == 0 {
		return tasks, nil
	}
	const show = 5
	more := ""
	if len(with) > show {
		more = fmt.Sprintf(" and %d more", len(with)-show)
		with = with[:show]
	}
	return nil, fmt.Errorf("cold table %s: snapshot %d: %w: %s%s. MeterStore reads data files whole and would count deleted rows as live; "+
		"MeterStore itself never deletes (a correction is a new version): rewrite the affected data files with the deletes applied, "+
		"e.g. Spark's rewrite_data_files with delete-file-threshold=1 or PyIceberg's overwrite, then expire the snapshots that carried the deletes",
		t.cfg.Name(), snapID, ErrDeleteFiles, strings.Join(with, "; "), more)
}
