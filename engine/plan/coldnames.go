package plan

import (
	"fmt"

	"github.com/meterstore/meterstore"
)

// renamedColumn says which of cfg's columns the table's current schema names
// otherwise (stored: field id → name), "" when none. iceberg_scan matches
// columns by the schema's names, so it would miss a renamed column — or, two
// names swapped, read one as the other; read_parquet reads by field id.
func renamedColumn(cfg meterstore.TableConfig, stored map[int]string) string {
	for _, c := range cfg.Columns() {
		if n, ok := stored[c.FieldID]; ok && n != c.Name {
			return fmt.Sprintf("the cold table names field id %d %q, configured %q, and iceberg_scan matches columns by name", c.FieldID, n, c.Name)
		}
	}
	return ""
}
