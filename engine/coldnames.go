package engine

import (
	"errors"
	"fmt"

	"meterstore"
)

// ErrRenamedColumn: iceberg_scan was to read a table whose current schema
// names a column otherwise than the configuration. It matches columns by the
// schema's names, so a renamed column would be missing — or, names swapped,
// read as another column; read_parquet reads by field id and is unaffected.
var ErrRenamedColumn = errors.New("iceberg_scan: a cold column is renamed")

// namedAsConfigured refuses stored names (field id → name) that differ from
// cfg's for one of its columns.
func namedAsConfigured(cfg meterstore.TableConfig, stored map[int]string) error {
	for _, c := range cfg.Columns() {
		if n, ok := stored[c.FieldID]; ok && n != c.Name {
			return fmt.Errorf("%w: field id %d is %q in table %s, configured %q; read its cold half through read_parquet (extensions.cold)",
				ErrRenamedColumn, c.FieldID, n, cfg.Name(), c.Name)
		}
	}
	return nil
}
