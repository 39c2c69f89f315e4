package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

type dirCold struct {
	ColdTier
	dir string
}

func (d dirCold) DataDirectory() string { return d.dir }

// TestSecondWall: the confined database refuses, by DuckDB's own settings, what
// the planner's gate refuses first — so a gap in the gate is not a way out —
// every file included, even below the tables' own data directories.
func TestSecondWall(t *testing.T) {
	ctx := context.Background()
	data, outside := t.TempDir(), t.TempDir()
	e, err := Open(ctx, Config{Tables: []Table{{Config: testConfig(t), Cold: dirCold{dir: data}}}})
	require.NoError(t, err)
	defer e.Close()
	inFile, outFile := filepath.Join(data, "f.parquet"), filepath.Join(outside, "g.parquet")
	for _, f := range []string{inFile, outFile} {
		_, err := e.DB().ExecContext(ctx, `COPY (SELECT 1 AS x) TO '`+f+`'`)
		require.NoError(t, err, "the unrestricted handle writes anywhere")
	}
	sc, err := e.Isolated("readings")
	require.NoError(t, err)
	conn, _, err := sc.conn(ctx)
	require.NoError(t, err)
	defer conn.Close()

	var n int
	for _, q := range []string{
		`SELECT count(*) FROM read_parquet(['` + inFile + `'])`,
		`SELECT count(*) FROM read_parquet('` + data + `/*.parquet')`,
		`SELECT count(*) FROM read_parquet('` + outFile + `')`,
		`SELECT count(*) FROM read_parquet('` + data + `/../` + filepath.Base(outside) + `/g.parquet')`,
		`SELECT count(*) FROM read_csv('/etc/passwd')`,
		`SELECT count(*) FROM glob('/etc/*')`,
		`COPY (SELECT 1) TO '` + filepath.Join(outside, "h.csv") + `'`,
		`ATTACH '` + filepath.Join(outside, "x.db") + `' AS x`,
		`EXPORT DATABASE '` + filepath.Join(outside, "exp") + `'`,
		`INSTALL postgres`,
		`SET enable_external_access = true`,
		`SET allowed_directories = ['/']`,
		`RESET lock_configuration`,
		`SET GLOBAL lock_configuration = false`,
	} {
		_, err := conn.ExecContext(ctx, q)
		require.Error(t, err, q)
	}
	// The unrestricted database is unaffected.
	require.NoError(t, e.DB().QueryRowContext(ctx, `SELECT count(*) FROM read_parquet('`+outFile+`')`).Scan(&n))
}

// TestSecondWallScoped: a scoped handle's database, called directly as a gap
// in the gate would let a statement through, opens no file — not even one of
// its own tenant's partition directory, which holds every version of its
// rows, unresolved — and writes none; it has no extension, attached database
// or secret, and its configuration cannot be changed.
func TestSecondWallScoped(t *testing.T) {
	ctx := context.Background()
	x, err := ExtensionsFromEnv()
	require.NoError(t, err)
	// This engine has no PostgreSQL to attach: its hot half cannot be
	// required to take the extension path (MSQL_PATHS=extension).
	x.Hot = PathDefault
	data := t.TempDir()
	e, err := Open(ctx, Config{Extensions: x, Tables: []Table{{Config: testConfig(t), Cold: dirCold{dir: data}}}})
	require.NoError(t, err)
	defer e.Close()
	file := func(tenant string) string {
		return filepath.Join(data, "data", "tenant="+tenant, "from_month=2025-10", "f.parquet")
	}
	for _, f := range []string{file("t1"), file("t2"), file("t10"), filepath.Join(data, "metadata", "m.parquet")} {
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
		_, err := e.DB().ExecContext(ctx, `COPY (SELECT 1 AS x) TO '`+f+`'`)
		require.NoError(t, err)
	}
	sc, err := e.Scoped("tenant", "t1")
	require.NoError(t, err)
	conn, _, err := sc.conn(ctx)
	require.NoError(t, err)
	defer conn.Close()

	var n int
	for _, q := range []string{
		`SELECT count(*) FROM read_parquet('` + file("t1") + `')`,
		`SELECT count(*) FROM read_parquet('` + filepath.Join(data, "data", "tenant=t1") + `/**/*.parquet')`,
		`SELECT count(*) FROM '` + file("t1") + `'`,
		`SELECT count(*) FROM glob('` + filepath.Join(data, "data", "tenant=t1") + `/**')`,
		`COPY (SELECT 1 AS x) TO '` + filepath.Join(data, "data", "tenant=t1", "out.parquet") + `'`,
		`COPY (SELECT 1 AS x) TO '` + filepath.Join(t.TempDir(), "out.csv") + `'`,
		`SELECT count(*) FROM read_parquet('` + file("t2") + `')`,
		`SELECT count(*) FROM read_parquet('` + file("t10") + `')`,
		`SELECT count(*) FROM read_parquet('` + data + `/**/*.parquet')`,
		`SELECT count(*) FROM read_parquet('` + filepath.Join(data, "data", "tenant=t1", "..", "tenant=t2", "from_month=2025-10", "f.parquet") + `')`,
		`SELECT count(*) FROM read_parquet('` + filepath.Join(data, "metadata", "m.parquet") + `')`,
		`SELECT count(*) FROM '` + file("t2") + `'`,
		`SELECT count(*) FROM glob('` + data + `/**')`,
		`SELECT count(*) FROM read_csv('/etc/passwd')`,
		`SELECT count(*) FROM read_text('/etc/hostname')`,
		`ATTACH 'host=127.0.0.1 dbname=postgres' AS pg (TYPE postgres, READ_ONLY)`,
		`ATTACH '` + filepath.Join(data, "x.db") + `' AS x`,
		`INSTALL postgres`,
		`LOAD postgres_scanner`,
		`LOAD iceberg`,
		`LOAD httpfs`,
		`SELECT count(*) FROM read_parquet('s3://bucket/x.parquet')`,
		`SELECT count(*) FROM read_parquet('https://example.com/x.parquet')`,
		`CREATE SECRET s (TYPE s3, KEY_ID 'k', SECRET 's')`,
		`SET enable_external_access = true`,
		`SET allowed_directories = ['/']`,
		`SET GLOBAL lock_configuration = false`,
		`RESET lock_configuration`,
	} {
		_, err := conn.ExecContext(ctx, q)
		require.Error(t, err, q)
	}
	for _, fn := range []string{"postgres_query('meterstore_hot', 'SELECT 1')", "iceberg_scan('" + data + "')", "postgres_scan('', 'public', 'x')"} {
		_, err := conn.ExecContext(ctx, "SELECT * FROM "+fn)
		require.ErrorContains(t, err, "is not in the catalog", "no extension is loaded in a confined database: %s", fn)
	}
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_databases() WHERE NOT internal AND database_name <> current_database()`).Scan(&n))
	require.Zero(t, n, "no attached database")

	// Another tenant's database is another database.
	sc2, err := e.Scoped("tenant", "t2")
	require.NoError(t, err)
	conn2, _, err := sc2.conn(ctx)
	require.NoError(t, err)
	defer conn2.Close()
	for _, f := range []string{file("t1"), file("t2")} {
		_, err = conn2.ExecContext(ctx, `SELECT count(*) FROM read_parquet('`+f+`')`)
		require.ErrorContains(t, err, "file system operations are disabled by configuration", f)
	}
}

// TestMemoryLimitConfined: a confined database holds its share of the
// memory limit: 300 MB over the default cap of 4 confined databases + 1.
func TestMemoryLimitConfined(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, Config{MemoryLimit: "300MB", Tables: []Table{{Config: testConfig(t), Cold: dirCold{dir: t.TempDir()}}}})
	require.NoError(t, err)
	defer e.Close()
	conn, _, err := e.Walled().conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	var limit string
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT current_setting('memory_limit')").Scan(&limit))
	require.Equal(t, "57.2 MiB", limit, "300 MB / 5")
}
