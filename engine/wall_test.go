package engine

import (
	"context"
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
// while the cold scans below the tables' data directories still work.
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
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT count(*) FROM read_parquet(['`+inFile+`'])`).Scan(&n))
	require.Equal(t, 1, n)
	for _, q := range []string{
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

// TestMemoryLimitConfined: the memory limit holds in a confined database too.
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
	require.Equal(t, "286.1 MiB", limit)
}
