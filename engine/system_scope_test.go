package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
)

// TestSystemWallScoped: a scoped session's own DuckDB database holds only the
// system rows its scope may see — read directly, past the planner, as a
// statement that slipped through the gate would — and no row estimate of its
// catalog (pg_class.reltuples, duckdb_tables().estimated_size) counts another
// tenant's partitions, after any number of refreshes.
func TestSystemWallScoped(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(37)
	w.MaLos, w.Days, w.Tenants = 4, 3, 2
	a := newArchivedStore(t, w)
	require.NoError(t, a.s.Engine.RefreshSystemTables(ctx, time.Now()))
	res, err := a.s.Engine.Query(ctx, `SELECT count(*) FILTER (WHERE "partition" LIKE '%tenant=tenant01%'), count(*) FROM system.partitions`)
	require.NoError(t, err)
	own, all := res.Rows[0][0].(int64), res.Rows[0][1].(int64)
	require.Positive(t, own)
	require.Greater(t, all, own, "another tenant has partitions")

	scoped, err := a.s.Engine.Scoped("tenant", "tenant01")
	require.NoError(t, err)
	conn, catalog, err := engine.ConfinedConn(ctx, scoped)
	require.NoError(t, err)
	defer conn.Close()
	count := func(q string) int64 {
		t.Helper()
		var n int64
		require.NoError(t, conn.QueryRowContext(ctx, q).Scan(&n), q)
		return n
	}
	sys := meterstore.QuoteIdent(catalog) + ".system."
	for round := range 2 {
		require.Equal(t, own, count(`SELECT count(*) FROM `+sys+`partitions`), "round %d", round)
		require.Zero(t, count(`SELECT count(*) FROM `+sys+`partitions WHERE "partition" NOT LIKE '%tenant=tenant01%'`), "round %d", round)
		require.Zero(t, count(`SELECT count(*) FROM `+sys+`tables`), "system.tables counts every tenant's rows: round %d", round)
		require.Zero(t, count(`SELECT count(*) FROM `+sys+`snapshots`), "system.snapshots says when every tenant's writes were committed: round %d", round)
		require.Zero(t, count(`SELECT estimated_size FROM duckdb_tables() WHERE schema_name = 'system' AND table_name = 'snapshots'`), "round %d", round)
		for _, name := range []string{"config", "resolution"} {
			require.Zero(t, count(`SELECT count(*) FROM `+sys+name+` WHERE "table" <> 'readings'`), "%s: round %d", name, round)
		}
		require.Equal(t, own, count(`SELECT estimated_size FROM duckdb_tables() WHERE schema_name = 'system' AND table_name = 'partitions'`), "round %d", round)
		require.Equal(t, own, count(`SELECT reltuples::BIGINT FROM pg_catalog.pg_class WHERE relname = 'partitions'`), "round %d", round)
		require.Zero(t, count(`SELECT estimated_size FROM duckdb_tables() WHERE schema_name = 'system' AND table_name = 'tables'`), "round %d", round)
		require.NoError(t, a.s.Engine.RefreshSystemTables(ctx, time.Now()))
	}

	// Through the planner: the catalog's estimate counts the tenant's
	// partitions only; duckdb_tables() is refused by the gate.
	res, err = scoped.Query(ctx, `SELECT reltuples::BIGINT FROM pg_catalog.pg_class WHERE relname = 'partitions'`)
	require.NoError(t, err)
	require.Equal(t, [][]any{{own}}, res.Rows)
	_, err = scoped.Query(ctx, `SELECT estimated_size FROM duckdb_tables() WHERE schema_name = 'system' AND table_name = 'partitions'`)
	require.ErrorIs(t, err, engine.ErrNotAQuery)
}

// TestSystemWallIsolated: an isolated session's own DuckDB database holds the
// system rows of its table only, read directly past the planner.
func TestSystemWallIsolated(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(9)
	w.MaLos, w.Days, w.Tenants = 2, 3, 2
	a := newArchivedStore(t, w, w.IntervalTable("esa_typ2_versions").MustBuild())
	require.NoError(t, a.s.Engine.RefreshSystemTables(ctx, time.Now()))
	iso, err := a.s.Engine.Isolated("readings")
	require.NoError(t, err)
	conn, catalog, err := engine.ConfinedConn(ctx, iso)
	require.NoError(t, err)
	defer conn.Close()
	for _, name := range []string{"tables", "config", "resolution", "snapshots", "partitions"} {
		var own, other int64
		q := `SELECT count(*) FILTER (WHERE "table" = 'readings'), count(*) FILTER (WHERE "table" <> 'readings') FROM ` +
			meterstore.QuoteIdent(catalog) + `.system.` + name
		require.NoError(t, conn.QueryRowContext(ctx, q).Scan(&own, &other), q)
		require.Positive(t, own, name)
		require.Zero(t, other, "system.%s holds another table's rows", name)
	}
}

// TestIsolatedCatalogNamesOneTable: an isolated session's catalog views
// (information_schema, pg_catalog — readable in every session) name its
// table's two relations only: the other table's relations, and with them
// its columns, do not exist in its database.
func TestIsolatedCatalogNamesOneTable(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(9)
	w.MaLos, w.Days, w.Tenants = 2, 3, 2
	a := newArchivedStore(t, w, w.IntervalTable("esa_typ2_versions").MustBuild())
	iso, err := a.s.Engine.Isolated("readings")
	require.NoError(t, err)
	for _, q := range []string{
		`SELECT DISTINCT table_name FROM information_schema.tables`,
		`SELECT DISTINCT table_name FROM information_schema.columns`,
		`SELECT viewname FROM pg_catalog.pg_views`,
		`SELECT relname FROM pg_catalog.pg_class`,
	} {
		res, err := iso.Query(ctx, q)
		require.NoError(t, err, q)
		var names []string
		for _, r := range res.Rows {
			names = append(names, fmt.Sprint(r[0]))
		}
		require.NotEmpty(t, names, q)
		for _, n := range names {
			require.NotContains(t, n, "esa_typ2", "%s names another table's relation", q)
		}
	}
	res, err := iso.Query(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name IN ('readings', 'readings_versions')`)
	require.NoError(t, err)
	require.EqualValues(t, 2, res.Rows[0][0], "the session's own relations are listed")
}
