package catalog

// Totals are the current snapshot's data files, their bytes and their rows
// (every version), read from the snapshot summary Iceberg writers keep: no
// manifest is opened. A table without a snapshot holds nothing (zeros, true);
// a summary without the totals (a foreign writer's) gives false.
func (t *Table) Totals() (files, bytes, rows int64, ok bool) {
	snap := t.Iceberg().CurrentSnapshot()
	if snap == nil {
		return 0, 0, 0, true
	}
	if snap.Summary == nil {
		return 0, 0, 0, false
	}
	p := snap.Summary.Properties
	files, bytes, rows = p.GetInt64("total-data-files", -1), p.GetInt64("total-files-size", -1), p.GetInt64("total-records", -1)
	return files, bytes, rows, files >= 0 && bytes >= 0 && rows >= 0
}
