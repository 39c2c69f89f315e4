package engine

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine/plan"
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
	_, err = conn.ExecContext(ctx, "SELECT * FROM meter_cold_scan('00000000000000000000000000000000')")
	require.ErrorContains(t, err, "does not exist", "a confined database reads no file, not even through the Go reader")
	// DuckDB's own arrow_scan cannot be removed from a database, but it takes
	// POINTER arguments, which no SQL type, cast or parameter produces, and
	// refuses NULL ones.
	for _, q := range []string{
		`SELECT * FROM arrow_scan(NULL, NULL, NULL)`,
		`SELECT * FROM arrow_scan_dumb(NULL, NULL, NULL)`,
		`SELECT * FROM arrow_scan(4096::UBIGINT, 4096::UBIGINT, 4096::UBIGINT)`,
		`SELECT * FROM arrow_scan(CAST(4096 AS POINTER), NULL, NULL)`,
	} {
		_, err := conn.ExecContext(ctx, q)
		require.Error(t, err, q)
	}
	_, err = conn.ExecContext(ctx, `SELECT * FROM arrow_scan($1, $2, $3)`, uint64(4096), uint64(4096), uint64(4096))
	require.Error(t, err, "arrow_scan with parameters")

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

// TestConfinedTokensBoundToScope: the scans and fed relations a confined
// statement is planned with are readable by its own confined database only:
// a token of another scope's statement, seen or guessed, binds nothing.
func TestConfinedTokensBoundToScope(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	e, err := Open(ctx, Config{Tables: []Table{{Config: cfg, Cold: dirCold{dir: t.TempDir()}}}})
	require.NoError(t, err)
	defer e.Close()
	conns := map[string]*sql.Conn{}
	keys := map[string]string{}
	for _, tenant := range []string{"t1", "t2"} {
		sc, err := e.Scoped("tenant", tenant)
		require.NoError(t, err)
		c, _, err := sc.conn(ctx)
		require.NoError(t, err)
		defer c.Close()
		conns[tenant], keys[tenant] = c, sc.confinedKey()
	}
	hot := e.scans.add(&plan.Scan{Ctx: ctx, Config: cfg}, keys["t2"])
	defer e.scans.Remove(hot)
	fed := e.fed.add(&fedRelation{e: e, ctx: ctx, cfg: cfg, parts: []string{"SELECT 1"}, scope: keys["t2"]})
	defer e.fed.remove(fed)
	for _, q := range []string{"SELECT * FROM meter_hot_scan('" + hot + "')", "SELECT * FROM meter_fed_scan('" + fed + "')"} {
		_, err := conns["t1"].PrepareContext(ctx, q)
		require.ErrorContains(t, err, "unknown or expired", "another scope's token: %s", q)
		st, err := conns["t2"].PrepareContext(ctx, q)
		require.NoError(t, err, "its own scope's token: %s", q)
		st.Close()
	}
}

// TestConfinedSpillDirectoryIsItsOwn: the one directory a confined database
// may open — its spill directory, which DuckDB allows itself once external
// access is off — is a fresh one of its own: not the unrestricted database's,
// not another scope's, and nothing written there is readable from another
// scope's database, nor any file beside it or reached through "..".
func TestConfinedSpillDirectoryIsItsOwn(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, Config{Tables: []Table{{Config: testConfig(t), Cold: dirCold{dir: t.TempDir()}}}})
	require.NoError(t, err)
	defer e.Close()
	confinedConn := func(tenant string) *sql.Conn {
		t.Helper()
		sc, err := e.Scoped("tenant", tenant)
		require.NoError(t, err)
		conn, _, err := sc.conn(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	setting := func(db interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}, name string) string {
		t.Helper()
		var v string
		require.NoError(t, db.QueryRowContext(ctx, `SELECT current_setting('`+name+`')::VARCHAR`).Scan(&v))
		return v
	}
	c1, c2 := confinedConn("t1"), confinedConn("t2")
	spill1, spill2, unrestricted := setting(c1, "temp_directory"), setting(c2, "temp_directory"), setting(e.DB(), "temp_directory")
	require.NotEmpty(t, spill1)
	require.Equal(t, "["+spill1+"/]", setting(c1, "allowed_directories"), "the spill directory is the only one")
	require.NotEqual(t, spill1, spill2, "each confined database spills into a directory of its own")
	require.NotEqual(t, spill1, unrestricted)
	require.NotContains(t, spill1, unrestricted)

	// What DuckDB would do when it spills: create the directory. A file
	// written there is readable by its own database only.
	require.NoError(t, os.MkdirAll(spill1, 0o700))
	beside := spill1 + "-beside"
	require.NoError(t, os.MkdirAll(beside, 0o700))
	t.Cleanup(func() { os.RemoveAll(beside) })
	require.NoError(t, os.WriteFile(filepath.Join(beside, "f.csv"), []byte("x\n1\n"), 0o600))
	own := filepath.Join(spill1, "f.parquet")
	_, err = c1.ExecContext(ctx, `COPY (SELECT 42 AS x) TO '`+own+`'`)
	require.NoError(t, err)
	var n int
	require.NoError(t, c1.QueryRowContext(ctx, `SELECT x FROM read_parquet('`+own+`')`).Scan(&n))
	require.Equal(t, 42, n)
	for _, q := range []string{
		`SELECT count(*) FROM read_csv('` + filepath.Join(beside, "f.csv") + `')`,
		`SELECT count(*) FROM read_csv('` + spill1 + `/../` + filepath.Base(beside) + `/f.csv')`,
		`SELECT count(*) FROM glob('` + filepath.Dir(spill1) + `/*')`,
	} {
		_, err := c1.ExecContext(ctx, q)
		require.ErrorContains(t, err, "file system operations are disabled by configuration", q)
	}
	_, err = c2.ExecContext(ctx, `SELECT count(*) FROM read_parquet('`+own+`')`)
	require.ErrorContains(t, err, "file system operations are disabled by configuration", "another scope's database reads no file of this one's")
}
