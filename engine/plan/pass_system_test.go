package plan

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSystemReferences: a system table is the session catalog's, and an
// isolated handle sees only its table's rows of it.
func TestSystemReferences(t *testing.T) {
	ctx := context.Background()
	e := testSession(t, nil)
	pl, err := planThrough(t, e, `SELECT * FROM system.tables t`, "system references")
	require.NoError(t, err)
	require.Equal(t, "system", pl.system[0].n.SchemaName)
	require.Equal(t, pl.in.Catalog, pl.system[0].n.CatalogName)

	iso, err := e.Isolated("readings_versions")
	require.NoError(t, err)
	pl, err = planThrough(t, iso, `SELECT * FROM system.config`, "system references")
	require.NoError(t, err)
	sql, err := deserialize(ctx, pl.conn, pl.root)
	require.NoError(t, err)
	require.Contains(t, sql, `WHERE ("table" IN ('readings'))) AS config`)
}
