package store

import (
	"context"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine/plan"
)

// onObjectStorage is whether a check reads the cold file at path with the
// Go reader (foldFiles) rather than the engine's database; a variable so a
// test can read local files as files on object storage are read.
var onObjectStorage = plan.IsRemote

// foldFiles hands each row of the cold files at paths, read by the Go
// reader (by field id or name, as the cold tier reads a file), to fn. A
// check reads files on object storage so: the engine's database opens them
// only through httpfs, an extension a deployment may not have.
func (t *Table) foldFiles(ctx context.Context, paths []string, fn func(*meterstore.Row)) error {
	for _, p := range paths {
		in, err := t.cold.FileRows(ctx, p)
		if err != nil {
			return err
		}
		for {
			rows, err := in.Next(ctx, nil)
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				break
			}
			for i := range rows {
				fn(&rows[i])
			}
		}
	}
	return nil
}
