package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// The engine's DuckDB keeps Parquet footers between statements, and a cold
// read answers the same with the footers cached as when they were read anew.
func TestParquetMetadataCached(t *testing.T) {
	w := testkit.NewWorkload(0x39)
	w.MaLos, w.Days = 4, 6
	a := newArchivedStore(t, w)
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Tables: []engine.Table{{Config: a.cfg, Hot: store.HotTierOf(a.tbl.Hot), Cold: store.ColdTierOf(a.tbl.Cold)}}})
	require.NoError(t, err)
	defer e.Close()
	var on bool
	require.NoError(t, e.DB().QueryRowContext(ctx, `SELECT current_setting('parquet_metadata_cache')`).Scan(&on))
	require.True(t, on)

	const q = `SELECT malo_id, obis_code, "from", value FROM readings WHERE "from" < $1 ORDER BY ALL`
	first, err := e.Query(ctx, q, a.cut)
	require.NoError(t, err)
	require.NotEmpty(t, first.Rows)
	require.Contains(t, first.Provenance.String(), "cold")
	again, err := e.Query(ctx, q, a.cut)
	require.NoError(t, err)
	require.Equal(t, first.Rows, again.Rows)
	_, err = e.DB().ExecContext(ctx, `SET GLOBAL parquet_metadata_cache = false`)
	require.NoError(t, err)
	uncached, err := e.Query(ctx, q, a.cut)
	require.NoError(t, err)
	require.Equal(t, first.Rows, uncached.Rows)
}
