package ingest

import (
	"context"
	"strings"

	"github.com/meterstore/meterstore/store"
)

// Query imports the rows a query returns, run on the unrestricted in-process
// DuckDB (Options.DB), as if they were a CSV or Parquet file: its columns
// named as the tabular layout names them (Columns; Options.Map renames), its
// rows batched and checked as a file's are, written by the same paths with
// the same report. It is the shell's INSERT INTO readings_versions SELECT …
// FROM read_csv(…): the SELECT reads files, the rows go through the store's
// write paths. name names the rows in refusals ("INSERT … SELECT").
func Query(ctx context.Context, st *store.Store, opt Options, name, query string) (Report, error) {
	if opt.System == "" {
		opt.System = "sql"
	}
	im, err := newImporter(st, opt)
	if err != nil {
		return Report{}, err
	}
	im.prog.FilesTotal = 1
	q := strings.TrimRight(strings.TrimSpace(query), ";")
	if err := im.done(ctx, name)(im.readTabular(ctx, "("+q+"\n)", name, "query", false)); err != nil {
		return im.finish(), err
	}
	err = im.flush(ctx, name)
	return im.finish(), err
}
