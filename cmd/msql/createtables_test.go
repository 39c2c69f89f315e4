package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/testkit/pgtest"
)

func TestCreateTablesCommand(t *testing.T) {
	dep := deploymentArgs(t)
	r := msql(t, "", append([]string{"create-tables"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "readings_versions (resolved as readings): created; merge key malo_id, obis_code, from, tenant; watermark none (nothing archived)\n", r.stdout)
	r = msql(t, "", append([]string{"create-tables"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, ": exists;")
}

// A column declared in the configuration is added by create-tables; a change
// that narrows the stored schema quarantines the table — create-tables,
// archive and verify name each reason and exit 4 — while the other table
// archives on; undoing the configuration lifts it.
func TestCreateTablesAppliesAndQuarantinesSchemaChanges(t *testing.T) {
	dsn, wh := pgtest.Database(t), "file://"+t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "meterstore.toml")
	write := func(readingsColumns string) {
		require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`[hot]
url = %q
[cold]
warehouse = %q
[[tables]]
name = "readings_versions"
extra_columns = [%s]
[[tables]]
name = "other_versions"
`, dsn, wh, readingsColumns)), 0o644))
	}
	write(`{ name = "tenant", identity = true }`)
	r := msql(t, "", "create-tables", "--config", cfgPath)
	require.Equal(t, 0, r.code, r.stderr)

	added := `{ name = "tenant", identity = true }, { name = "region", values = ["NORD", "SUED"] }`
	write(added)
	r = msql(t, "", "create-tables", "--config", cfgPath)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "readings_versions: added columns region (Iceberg and PostgreSQL)\n")
	r = msql(t, "", "create-tables", "--config", cfgPath)
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, "added", "idempotent")

	write(`{ name = "tenant", identity = true }`)
	r = msql(t, "", "create-tables", "--config", cfgPath)
	require.Equal(t, 4, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "readings_versions: quarantined, nothing changed: drop column region: field id 102 is in the table but not configured")
	require.Contains(t, r.stderr, "Try: undo the configuration change")
	r = msql(t, "", "archive", "--config", cfgPath)
	require.Equal(t, 4, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "readings_versions: quarantined, archival halted at watermark none (nothing archived): drop column region")
	require.Contains(t, r.stdout, "other_versions: nothing archived yet", "the other table archives on")
	r = msql(t, "", "verify", "--config", cfgPath)
	require.Equal(t, 4, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "readings_versions: healthy, watermark")
	require.Contains(t, r.stdout, "; quarantined, archival halted: drop column region")

	write(added)
	r = msql(t, "", "verify", "--config", cfgPath)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
}
