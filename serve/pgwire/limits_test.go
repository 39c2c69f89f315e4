package pgwire_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// The scoped cross join of the two relations, sorted by every column: 1.4 M
// rows that DuckDB sorts by spilling to its temp directory.
const crossSorted = `SELECT count(*) FROM (SELECT readings.*, readings_versions.malo_id || 'abcdefghijklmnopqrstuvwxyz0123456789'
	FROM readings_versions AS readings, readings AS readings_versions ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9 DESC)`

// The same cross join gathered into one string: nothing DuckDB can spill.
const crossGathered = `SELECT length(string_agg(readings.malo_id || readings_versions.malo_id, ','))
	FROM readings_versions AS readings, readings AS readings_versions`

// TestPGWireMemoryBudget: under a small memory_limit a statement that can
// spill does, into a directory of its own below the system's temporary
// directory; one that cannot fit is refused with SQLSTATE 53200 naming the
// budget, and the server, another client and the refused session go on.
func TestPGWireMemoryBudget(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// alice is scoped: her statements run in a confined database, which
	// holds a fifth of the budget (engine.DefaultConfinedDatabases + 1): 64 MB.
	f := servetest.NewWith(t, storetest.Options{MemoryLimit: "320MB"})
	users := f.Users(t,
		settings.UserSettings{Name: "alice", Password: "alice-pw", Scope: "tenant=tenant01"},
		settings.UserSettings{Name: "admin", Password: "s3cret"},
	)
	_, addr := f.StartPG(t, users)
	ctx := context.Background()
	alice := servetest.PGConnect(t, addr, "alice", "alice-pw", pgx.QueryExecModeSimpleProtocol, nil)
	admin := servetest.PGConnect(t, addr, "admin", "s3cret", pgx.QueryExecModeCacheStatement, nil)

	var sorted int64
	require.NoError(t, alice.QueryRow(ctx, crossSorted).Scan(&sorted))
	require.Positive(t, sorted)
	spilled, err := filepath.Glob(filepath.Join(tmp, "meterstore-duckdb-*"))
	require.NoError(t, err)
	require.NotEmpty(t, spilled, "the sort spilled below TMPDIR")

	// The budget is the server's, shared by the statements running at once
	// (DuckDB has no per-statement limit): another client's statement that
	// needs memory while the gathering holds it may be refused the same way,
	// and nothing worse.
	others := make(chan error, 1)
	go func() {
		var err error
		for range 5 {
			var n int64
			if err = admin.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n); err != nil && servetest.PGCode(err) != "53200" {
				break
			}
			err = nil
		}
		others <- err
	}()
	var n int64
	err = alice.QueryRow(ctx, crossGathered).Scan(&n)
	require.Equal(t, "53200", servetest.PGCode(err), "%v", err)
	require.ErrorContains(t, err, "out of memory: the statement needs more than the server's memory budget")
	require.ErrorContains(t, err, "MiB used")
	require.NoError(t, <-others, "another client's statements")
	require.NoError(t, admin.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n), "another client after the refusal")

	require.NoError(t, alice.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n), "the refused session goes on")
	require.Positive(t, n)
}
