package store

import (
	"context"
	"fmt"
	"time"

	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
)

// readColdFilesInGo makes the checks read every cold file with the Go
// reader (meter_cold_scan), as files on object storage are read without
// httpfs; set by tests only (ReadColdFilesInGo).
var readColdFilesInGo = false

// rereadColdFiles runs query over the rows of the current snapshot's cold
// files that pick selects — those whose footer does not prove what a check
// looks for — from before below (zero: every row), read as the engine reads
// a cold half (engine.Engine.QueryColdFiles: DuckDB's reader where the
// engine's database opens the files, meter_cold_scan where it cannot,
// object storage without httpfs). pick also says how a file is read. No
// rows when it selects no file.
func (t *Table) rereadColdFiles(ctx context.Context, pick func(catalog.DataFile) (engine.ColdFile, bool), below time.Time, query func(rel string) string) ([][]any, error) {
	files, _, err := t.cold.PlanFiles(ctx, catalog.PlanRequest{})
	if err != nil {
		return nil, err
	}
	var picked []engine.ColdFile
	for _, f := range files {
		if cf, ok := pick(f); ok {
			picked = append(picked, cf)
		}
	}
	if len(picked) == 0 {
		return nil, nil
	}
	return t.st.eng.QueryColdFiles(ctx, engine.ColdFilesQuery{Table: t.cfg.Name(), Files: picked, Below: below, SQL: query, GoReader: readColdFilesInGo})
}

// countedSpan reads a check's row count and first and last "from" from the
// first three of vals (the times nil when it counted none).
func countedSpan(vals []any) (n int64, from, to time.Time, err error) {
	n, ok := vals[0].(int64)
	if !ok {
		return 0, from, to, fmt.Errorf("unexpected count type %T", vals[0])
	}
	from, _ = vals[1].(time.Time)
	to, _ = vals[2].(time.Time)
	return n, from, to, nil
}
