package pgtest_test

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestClusterRunsBtreeGist(t *testing.T) {
	conn := pgtest.Connect(t, pgtest.Database(t))
	pgtest.Exec(t, conn, "CREATE EXTENSION IF NOT EXISTS btree_gist")
	var n int
	require.NoError(t, conn.QueryRow(context.Background(),
		"SELECT count(*) FROM pg_extension WHERE extname = 'btree_gist'").Scan(&n))
	require.Equal(t, 1, n)
	var major int
	require.NoError(t, conn.QueryRow(context.Background(),
		"SELECT current_setting('server_version_num')::int / 10000").Scan(&major))
	require.GreaterOrEqual(t, major, 14)
}

func TestDatabasesAreIsolated(t *testing.T) {
	a := pgtest.Connect(t, pgtest.Database(t))
	b := pgtest.Connect(t, pgtest.Database(t))
	pgtest.Exec(t, a, "CREATE TABLE only_in_a (x int)")
	var n int
	require.NoError(t, b.QueryRow(context.Background(),
		"SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'").Scan(&n))
	require.Zero(t, n)
}

// TestTwoBinariesAtOnce runs this test binary twice concurrently, each child
// starting its own cluster: they must not collide on port or directory.
func TestTwoBinariesAtOnce(t *testing.T) {
	if os.Getenv("PGTEST_CHILD") != "" || os.Getenv("MSQL_TEST_DATABASE_URL") != "" {
		t.Skip("child run, or an external server: nothing to start twice")
	}
	var wg sync.WaitGroup
	outs := make([][]byte, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestClusterRunsBtreeGist$", "-test.count=1")
			cmd.Env = append(os.Environ(), "PGTEST_CHILD=1")
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range 2 {
		require.NoError(t, errs[i], "child %d: %s", i, outs[i])
		require.Contains(t, string(outs[i]), "PASS")
	}
}
