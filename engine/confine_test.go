package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
)

// TestEscapeAttempts: a tenant-scoped session, and a list of statements trying
// to reach another tenant's rows. Each is refused, or returns only the scoped
// tenant's rows: no cell of any answer names the other tenant or one of its MaLos.
func TestEscapeAttempts(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(13)
	w.MaLos, w.Days, w.Tenants = 6, 4, 2
	a := newArchivedStore(t, w)
	a.deliverCorrections(t)
	require.NoError(t, a.s.Engine.RefreshSystemTables(ctx, time.Now()))

	other := map[string]bool{"tenant02": true}
	for _, m := range a.batch.Meters {
		if m.Tenant == "tenant02" {
			other[m.MaloID.String()] = true
		}
	}
	files, _, err := a.tbl.Cold.PlanFiles(ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	file := files[0].Path
	wh := catalog.LocalPath(a.s.Warehouse)
	tmp := t.TempDir()

	scoped, err := a.s.Engine.Scoped("tenant", "tenant01")
	require.NoError(t, err)
	_, err = scoped.Scoped("tenant", "tenant02")
	require.ErrorIs(t, err, engine.ErrScope, "a fixed column cannot be re-pointed")
	_, err = a.s.Engine.Scoped("quality", "MEASURED")
	require.ErrorIs(t, err, engine.ErrScope, "an attribute column cannot scope")
	derived := []*engine.Engine{scoped, scoped.AsKnownAt(time.Now()), scoped.AsOf(a.tbl.Cold.CurrentSnapshotID(), nil)}
	if h, err := scoped.InReadMode(engine.Historical); err == nil {
		derived = append(derived, h)
	}

	attempts := []string{
		`SELECT * FROM readings`,
		`SELECT * FROM readings WHERE tenant = 'tenant02'`,
		`SELECT * FROM readings r WHERE r.tenant <> 'tenant01'`,
		`SELECT * FROM readings_versions WHERE tenant = 'tenant02'`,
		`SELECT * FROM readings WHERE tenant = 'tenant01' OR tenant = 'tenant02'`,
		`SELECT * FROM readings UNION ALL SELECT * FROM readings_versions`,
		`SELECT * FROM (SELECT * FROM readings_versions) x WHERE x.tenant = 'tenant02'`,
		`SELECT * FROM readings WHERE malo_id IN (SELECT malo_id FROM readings_versions WHERE tenant = 'tenant02')`,
		`WITH readings AS (SELECT * FROM readings_versions) SELECT * FROM readings`,
		`WITH x AS (SELECT * FROM main.readings_versions) SELECT * FROM x`,
		`SELECT * FROM memory.main.readings_versions`,
		`SELECT * FROM "READINGS_VERSIONS"`,
		`SELECT * FROM ReAdInGs`,
		`SELECT * FROM readings AS readings_versions, readings_versions AS readings WHERE readings.tenant = 'tenant02'`,
		`SELECT * FROM readings /* tenant = 'tenant01' */ WHERE tenant = 'tenant02' -- AND tenant = 'tenant01'`,
		`FROM readings_versions SELECT *`,
		`SELECT * FROM (FROM readings_versions)`,
		`SELECT * FROM readings_versions TABLESAMPLE 100%`,
		`PIVOT readings_versions ON tenant USING sum(value)`,
		`SELECT tenant, count(*) FROM readings_versions GROUP BY ALL`,
		`SELECT * FROM read_parquet('` + wh + `/**/*.parquet')`,
		`SELECT * FROM read_parquet('` + file + `')`,
		`SELECT * FROM '` + file + `'`,
		`SELECT * FROM "` + file + `"`,
		`SELECT * FROM parquet_scan(['` + file + `'])`,
		`WITH "` + file + `" AS (SELECT * FROM "` + file + `") SELECT * FROM "` + file + `"`,
		`WITH "` + wh + `/**/*.parquet" AS (SELECT * FROM "` + wh + `/**/*.parquet") SELECT * FROM "` + wh + `/**/*.parquet"`,
		`WITH x AS (SELECT 1), "` + file + `" AS (SELECT * FROM "` + file + `") SELECT * FROM "` + file + `"`,
		`SELECT * FROM (WITH "` + file + `" AS (SELECT * FROM "` + file + `") SELECT * FROM "` + file + `")`,
		`WITH RECURSIVE "` + file + `" AS (SELECT * FROM "` + file + `") SELECT * FROM "` + file + `"`,
		`SELECT * FROM glob('` + wh + `/**')`,
		`SELECT * FROM parquet_metadata('` + file + `')`,
		`SELECT * FROM read_csv('/etc/passwd')`,
		`SELECT * FROM read_text('/etc/hostname')`,
		`SELECT * FROM read_json('/etc/hostname')`,
		`SELECT * FROM iceberg_scan('` + wh + `')`,
		`COPY (SELECT * FROM readings_versions) TO '` + tmp + `/out.parquet'`,
		`EXPORT DATABASE '` + tmp + `/export'`,
		`ATTACH '` + tmp + `/x.db' AS x`,
		`ATTACH ':memory:' AS x`,
		`INSTALL postgres`,
		`LOAD parquet`,
		`SET enable_external_access = true`,
		`RESET lock_configuration`,
		`PRAGMA enable_profiling`,
		`CREATE TABLE stolen AS SELECT * FROM readings_versions`,
		`CREATE VIEW readings2 AS SELECT * FROM readings_versions`,
		`INSERT INTO readings_versions SELECT * FROM readings_versions`,
		`DROP VIEW readings`,
		`SELECT 1; SELECT * FROM readings_versions`,
		`SELECT * FROM readings_versions; DROP VIEW readings`,
		`EXPLAIN SELECT * FROM readings_versions`,
		`EXPLAIN ANALYZE SELECT * FROM readings_versions`,
		`EXPLAIN COPY (SELECT 1) TO '` + tmp + `/e.csv'`,
		`DESCRIBE readings_versions`,
		`SUMMARIZE readings_versions`,
		`SHOW TABLES`,
		`SELECT * FROM meter_hot_scan('00000000000000000000000000000000')`,
		`SELECT * FROM meter_unplanned('readings_versions')`,
		`SELECT * FROM query_table('readings_versions')`,
		`SELECT * FROM query('SELECT * FROM readings_versions')`,
		`SELECT * FROM duckdb_settings()`,
		`SELECT * FROM duckdb_tables()`,
		`SELECT * FROM sqlite_master`,
		`SELECT * FROM temp.main.readings_versions`,
		`SELECT * FROM system.main.duckdb_settings`,
		`SELECT * FROM system.sqlite_master`,
		`SELECT * FROM information_schema.tables`,
		`SELECT * FROM information_schema.columns WHERE table_name = 'readings'`,
		`SELECT * FROM system.tables`,
		`SELECT * FROM system.snapshots`,
		`SELECT * FROM meter_completeness('2025-10-01', '2025-11-01')`,
		`SELECT * FROM meter_completeness('2025-10-01', '2025-11-01', 'readings') WHERE malo_id IN (SELECT malo_id FROM readings_versions)`,
		`SELECT current_setting('enable_external_access'), * FROM readings`,
		`SELECT * FROM readings_versions AT (VERSION => 1)`,
		`SELECT * FROM unnest((SELECT list(malo_id) FROM readings_versions))`,
		`SELECT * FROM range(3) r, LATERAL (SELECT * FROM readings_versions WHERE tenant = 'tenant02') x`,
	}
	// DuckDB's extensions, where the engine loaded them: the attached hot
	// database by name, the extensions' own table functions, their set-up
	// and their secrets are refused outright, confined or not.
	extensionAttempts := []string{
		`SELECT * FROM meterstore_hot.public.readings_versions`,
		`SELECT * FROM meterstore_hot.readings_versions`,
		`SELECT * FROM postgres_query('meterstore_hot', 'SELECT * FROM readings_versions')`,
		`SELECT * FROM postgres_scan('` + a.s.DSN + `', 'public', 'readings_versions')`,
		`CALL postgres_execute('meterstore_hot', 'DELETE FROM readings_versions')`,
		`SELECT * FROM iceberg_scan('` + a.tbl.Cold.Iceberg().MetadataLocation() + `')`,
		`SELECT * FROM iceberg_metadata('` + a.tbl.Cold.Iceberg().MetadataLocation() + `')`,
		`ATTACH '` + a.s.DSN + `' AS pg (TYPE postgres)`,
		`DETACH meterstore_hot`,
		`USE meterstore_hot`,
		`LOAD postgres_scanner`,
		`INSTALL iceberg`,
		`SELECT * FROM duckdb_secrets()`,
		`CREATE SECRET s (TYPE postgres, HOST '127.0.0.1')`,
	}
	for _, h := range append(derived, a.s.Engine) {
		for _, q := range extensionAttempts {
			_, err := h.Query(ctx, q)
			require.Error(t, err, q)
		}
	}
	require.GreaterOrEqual(t, len(attempts), 30)
	refused, answered := 0, 0
	for _, h := range derived {
		for _, q := range attempts {
			res, err := h.Query(ctx, q)
			if err != nil {
				refused++
				continue
			}
			answered++
			for _, row := range res.Rows {
				for _, cell := range row {
					s := fmt.Sprint(cell)
					for o := range other {
						require.NotContains(t, s, o, "leak through %q", q)
					}
				}
			}
		}
	}
	t.Logf("%d attempts × %d handles: %d refused, %d answered with the scoped tenant's rows only", len(attempts), len(derived), refused, answered)
	// Arguments are bound: a parameter naming the other tenant finds nothing.
	res, err := scoped.Query(ctx, `SELECT count(*) FROM readings WHERE tenant = $1`, "tenant02")
	require.NoError(t, err)
	require.EqualValues(t, 0, res.Rows[0][0])
	// And the scoped answer is the tenant's whole answer.
	res, err = scoped.Query(ctx, `SELECT sum(value) FROM readings`)
	require.NoError(t, err)
	want := decimal.Zero
	for k, v := range a.oracle.SumBy(time.Time{}, time.Time{}, func(r meterstore.Row) string { return *r.Extra[0] }) {
		if k == "tenant01" {
			want = v
		}
	}
	require.True(t, want.Equal(sumOf(t, res)), "scoped %s want %s", sumOf(t, res), want)
	// Nothing was written where COPY or EXPORT pointed.
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, entries)
	_, err = os.Stat(filepath.Join(tmp, "out.parquet"))
	require.True(t, os.IsNotExist(err))
	// The unrestricted handle still exports (in-process callers only).
	_, err = a.s.Engine.DB().ExecContext(ctx, `COPY (SELECT 42 AS x) TO '`+tmp+`/ok.parquet'`)
	require.NoError(t, err)
}

// TestStream: the description first, then Arrow batches bounded by BatchRows,
// decimals as decimal128, provenance in the schema metadata.
func TestStream(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(17)
	w.MaLos, w.Days = 4, 4
	a := newArchivedStore(t, w)
	s, err := a.s.Engine.Stream(ctx, `SELECT malo_id, "from", value, version, balancing_day, quality FROM readings ORDER BY malo_id, obis_code, "from"`)
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, []string{"malo_id", "from", "value", "version", "balancing_day", "quality"}, s.Description.Columns)
	require.Equal(t, &arrow.Decimal128Type{Precision: 18, Scale: 6}, s.Schema.Field(2).Type)
	require.Equal(t, &arrow.Decimal128Type{Precision: 20, Scale: 0}, s.Schema.Field(3).Type)
	require.Equal(t, arrow.FixedWidthTypes.Date32, s.Schema.Field(4).Type)
	md := s.Schema.Metadata()
	wm, ok := md.GetValue("meterstore.watermark")
	require.True(t, ok)
	require.Equal(t, a.cut.Format(time.RFC3339Nano), wm)
	tiers, _ := md.GetValue("meterstore.tiers")
	require.Equal(t, "cold+hot", tiers)
	mode, _ := md.GetValue("meterstore.read_mode")
	require.Equal(t, "unified", mode)

	s.BatchRows = 1000
	var rows, batches int64
	sum := decimal.Zero
	for s.Next() {
		rec := s.Record()
		require.LessOrEqual(t, rec.NumRows(), int64(1000))
		vals := rec.Column(2).(*array.Decimal128)
		for i := 0; i < vals.Len(); i++ {
			sum = sum.Add(decimal.NewFromBigInt(vals.Value(i).BigInt(), -6))
		}
		rows += rec.NumRows()
		batches++
	}
	require.NoError(t, s.Err())
	require.EqualValues(t, a.oracle.RowCount(time.Time{}, time.Time{}), rows)
	require.Greater(t, batches, int64(1))
	require.True(t, a.oracle.Sum(time.Time{}, time.Time{}).Equal(sum), "stream %s oracle %s", sum, a.oracle.Sum(time.Time{}, time.Time{}))

	// A statement that is not a query is refused before anything runs.
	_, err = a.s.Engine.Stream(ctx, `COPY (SELECT 1) TO '/tmp/x.csv'`)
	require.ErrorIs(t, err, engine.ErrNotAQuery)

}
