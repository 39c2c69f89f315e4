package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// The memory limit holds in both of the engine's DuckDB databases — its own
// and the confined one server sessions run in — and a limit DuckDB cannot
// read fails Open naming it.
func TestMemoryLimitIsEveryDatabases(t *testing.T) {
	w := testkit.NewWorkload(0x4D)
	w.MaLos, w.Days = 2, 3
	a := newArchivedStore(t, w)
	ctx := context.Background()
	tables := []engine.Table{{Config: a.cfg, Hot: store.HotTierOf(a.tbl.Hot), Cold: store.ColdTierOf(a.tbl.Cold)}}
	e, err := engine.Open(ctx, engine.Config{Tables: tables, MemoryLimit: "300MB"})
	require.NoError(t, err)
	defer e.Close()
	var own string
	require.NoError(t, e.DB().QueryRowContext(ctx, "SELECT current_setting('memory_limit')").Scan(&own))
	require.Equal(t, "286.1 MiB", own, "300 MB in DuckDB's notation")
	// A confined session cannot read the setting (ErrSetting); the confined
	// database's limit is checked from inside the package (TestMemoryLimitConfined).
	_, err = e.Walled().Query(ctx, "SELECT current_setting('memory_limit') AS m, count(*) FROM readings")
	require.ErrorIs(t, err, engine.ErrSetting)

	_, err = engine.Open(ctx, engine.Config{Tables: tables, MemoryLimit: "lots"})
	require.ErrorContains(t, err, `memory limit "lots"`)
}
