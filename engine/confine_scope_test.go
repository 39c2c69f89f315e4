package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
)

// TestSettingsUnreadable: a scoped session reads no setting that reveals a
// path or the database's configuration (the warehouse's data directory is one
// of allowed_directories); the session time zone and calendar stay readable,
// and the unrestricted handle still reads them all.
func TestSettingsUnreadable(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(31)
	w.MaLos, w.Days, w.Tenants = 4, 3, 2
	a := newArchivedStore(t, w)
	wh := catalog.LocalPath(a.s.Warehouse)
	scoped, err := a.s.Engine.Scoped("tenant", "tenant01")
	require.NoError(t, err)
	iso, err := a.s.Engine.Isolated("readings")
	require.NoError(t, err)
	for _, h := range []*engine.Engine{scoped, iso} {
		for _, q := range []string{
			`SELECT setting FROM pg_catalog.pg_settings WHERE name = 'allowed_directories'`,
			`SELECT name, setting FROM pg_catalog.pg_settings`,
			`SELECT * FROM pg_settings WHERE name = 'allowed_directories'`,
			`SELECT current_setting('allowed_directories')`,
			`SELECT current_setting('extension_directory')`,
			`SELECT pg_catalog.current_setting('temp_directory')`,
			`SELECT current_setting(name) FROM (SELECT 'allowed_directories' AS name)`,
			`SELECT getvariable('x')`,
			`SELECT which_secret('s3://bucket/x', 's3')`,
			`SELECT * FROM duckdb_settings()`,
			`SELECT * FROM duckdb_secrets()`,
			`SELECT * FROM duckdb_extensions()`,
			`SELECT * FROM duckdb_databases()`,
		} {
			res, err := h.Query(ctx, q)
			if err == nil {
				require.Failf(t, "a setting was readable", "%q answered %v", q, res.Rows)
			}
			require.ErrorIs(t, err, engine.ErrNotAQuery, q)
			require.ErrorIs(t, err, engine.ErrSetting, q)
			require.NotContains(t, err.Error(), wh, q)
		}
		res, err := h.Query(ctx, `SELECT current_setting('TimeZone'), current_setting('calendar')`)
		require.NoError(t, err)
		require.Equal(t, []any{a.s.Engine.TimeZone(), "gregorian"}, res.Rows[0])
	}
	res, err := a.s.Engine.Query(ctx, `SELECT count(*) FROM pg_catalog.pg_settings WHERE name = 'allowed_directories'`)
	require.NoError(t, err)
	require.EqualValues(t, 1, res.Rows[0][0], "the operator's session reads every setting")
}

// TestSystemScoped: system.* in a scoped session shows the scoped tenant's
// partitions only and refuses what spans tenants.
func TestSystemScoped(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(37)
	w.MaLos, w.Days, w.Tenants = 4, 3, 2
	a := newArchivedStore(t, w)
	require.NoError(t, a.s.Engine.RefreshSystemTables(ctx, time.Now()))
	res, err := a.s.Engine.Query(ctx, `SELECT "partition" FROM system.partitions ORDER BY 1`)
	require.NoError(t, err)
	all := fmt.Sprint(res.Rows)
	require.Contains(t, all, "tenant=tenant02", "the operator sees every tenant's partitions")

	scoped, err := a.s.Engine.Scoped("tenant", "tenant01")
	require.NoError(t, err)
	res, err = scoped.Query(ctx, `SELECT "partition", "rows" FROM system.partitions ORDER BY 1`)
	require.NoError(t, err)
	require.NotEmpty(t, res.Rows)
	for _, r := range res.Rows {
		require.Contains(t, r[0], "tenant=tenant01", "a scoped session lists its own tenant's partitions only: %v", res.Rows)
	}
	res, err = scoped.Query(ctx, `SELECT count(*) FROM system.partitions p WHERE p."partition" LIKE '%tenant02%'`)
	require.NoError(t, err)
	require.EqualValues(t, 0, res.Rows[0][0])
	_, err = scoped.Query(ctx, `SELECT invariant_violations FROM system.tables`)
	require.ErrorIs(t, err, engine.ErrSystemScope)
	require.ErrorContains(t, err, "system.tables")
	_, err = scoped.Query(ctx, `SELECT committed_at, operation FROM system.snapshots`)
	require.ErrorIs(t, err, engine.ErrSystemScope, "system.snapshots says when every tenant's writes were committed")
	require.ErrorContains(t, err, "system.snapshots")
	for _, q := range []string{`SELECT * FROM system.config`, `SELECT * FROM system.resolution`} {
		_, err = scoped.Query(ctx, q)
		require.NoError(t, err, q)
	}
}

// TestConfinedExplain: EXPLAIN in a scoped session says the session is
// confined and how each half is read: the cold files by the engine's database,
// fed to the confined one, the hot tier through meter_hot_scan; and the answer
// is the tenant's whole answer.
func TestConfinedExplain(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(41)
	w.MaLos, w.Days, w.Tenants = 4, 4, 2
	a := newArchivedStore(t, w)
	scoped, err := a.s.Engine.Scoped("tenant", "tenant01")
	require.NoError(t, err)
	out, err := scoped.Explain(ctx, `SELECT sum(value) FROM readings`)
	require.NoError(t, err)
	require.Contains(t, out, "session: confined (scope tenant=tenant01)")
	require.Contains(t, out, "no file readable")
	require.Contains(t, out, "cold tier read by the engine's database and fed through meter_fed_scan")
	// The engine's database reads the cold half by its own path (read_parquet,
	// iceberg_scan with the extensions, meter_cold_scan on object storage):
	// the one its unscoped plan of the statement names.
	unscoped, err := a.s.Engine.Explain(ctx, `SELECT sum(value) FROM readings`)
	require.NoError(t, err)
	require.NotEmpty(t, coldThrough(unscoped))
	require.Equal(t, coldThrough(unscoped), coldThrough(out))
	require.Contains(t, out, "through meter_hot_scan")
	for _, q := range []string{`SELECT sum(value), count(*) FROM readings`, `SELECT count(*) FROM readings_versions`} {
		got, err := scoped.Query(ctx, q)
		require.NoError(t, err)
		want, err := a.s.Engine.Query(ctx, q+` WHERE tenant = 'tenant01'`)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint(want.Rows), fmt.Sprint(got.Rows), q)
	}
	// A scope on a column that is not a partition: the same path, the same
	// answer.
	malo := a.batch.Meters[0].MaloID.String()
	byMeter, err := a.s.Engine.Scoped("malo_id", malo)
	require.NoError(t, err)
	out, err = byMeter.Explain(ctx, `SELECT sum(value) FROM readings`)
	require.NoError(t, err)
	require.Equal(t, coldThrough(unscoped), coldThrough(out))
	got, err := byMeter.Query(ctx, `SELECT sum(value), count(*) FROM readings`)
	require.NoError(t, err)
	want, err := a.s.Engine.Query(ctx, `SELECT sum(value), count(*) FROM readings WHERE malo_id = '`+malo+`'`)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprint(want.Rows), fmt.Sprint(got.Rows))
}

// coldThrough is the reader an EXPLAIN's cold line names ("through X").
func coldThrough(explain string) string {
	for _, l := range strings.Split(explain, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "cold:") {
			if _, path, ok := strings.Cut(l, "; through "); ok {
				path, _, _ = strings.Cut(path, ";") // a fed half's note follows
				return path
			}
		}
	}
	return ""
}
