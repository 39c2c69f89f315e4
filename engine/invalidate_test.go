package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
)

// A statement DuckDB fails with a fatal internal error invalidates the DuckDB
// database it ran in. The confined database serves every server session, so
// one client's statement must not leave it failing for everyone until a
// restart: the next statement of any confined handle runs in a fresh database,
// with the system tables the engine last refreshed.
func TestConfinedSessionsSurviveAnInvalidatedDatabase(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(7)
	w.MaLos, w.Days, w.Tenants = 3, 3, 2
	a := newArchivedStore(t, w)
	require.NoError(t, a.s.Engine.RefreshSystemTables(ctx, time.Now()))
	scoped, err := a.s.Engine.Scoped("tenant", "tenant01")
	require.NoError(t, err)
	const count = `SELECT count(*) FROM readings`
	const tables = `SELECT count(*) FROM system.config`
	before, err := scoped.Query(ctx, count)
	require.NoError(t, err)
	sys, err := scoped.Query(ctx, tables)
	require.NoError(t, err)

	// DuckDB 1.5's binder leaves a parameter typed both by typeof and by a
	// cast without a physical type: an INTERNAL error, fatal to the database.
	// The argument holds a NUL byte: the engine writes a plain string into
	// the statement it keeps as a literal, which DuckDB binds without the
	// error, and binds one with a NUL byte as a parameter.
	_, err = scoped.Query(ctx, `SELECT typeof($1), $1::VARCHAR`, "x\x00")
	require.Error(t, err)

	after, err := scoped.Query(ctx, count)
	require.NoError(t, err, "the next confined statement runs in a fresh database")
	require.Equal(t, before.Rows, after.Rows)
	other, err := a.s.Engine.Scoped("tenant", "tenant02")
	require.NoError(t, err)
	_, err = other.Query(ctx, count)
	require.NoError(t, err, "another user's confined session too")
	sysAfter, err := scoped.Query(ctx, tables)
	require.NoError(t, err)
	require.Equal(t, sys.Rows, sysAfter.Rows, "the fresh database holds the system tables last refreshed")
}

// Only an error that can have invalidated the confined database has it
// probed: a user's syntax error, an unknown column or a cancelled statement
// fails that statement alone and costs no further statement; DuckDB's
// internal error, fatal to the database, is probed once.
func TestOnlyAFatalErrorProbesTheConfinedDatabase(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(7)
	w.MaLos, w.Days, w.Tenants = 3, 3, 2
	a := newArchivedStore(t, w)
	scoped, err := a.s.Engine.Scoped("tenant", "tenant01")
	require.NoError(t, err)
	_, err = scoped.Query(ctx, `SELECT count(*) FROM readings`)
	require.NoError(t, err)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()

	probes := engine.FailureProbes(a.s.Engine)
	for _, q := range []struct {
		ctx context.Context
		sql string
	}{
		{ctx, `SELEC count(*) FROM readings`},
		{ctx, `SELECT count(nonexistent) FROM readings`},
		{ctx, `SELECT CAST('x' AS INTEGER)`},
		{cancelled, `SELECT count(*) FROM readings`},
	} {
		_, err := scoped.Query(q.ctx, q.sql)
		require.Error(t, err, q.sql)
		require.Equal(t, probes, engine.FailureProbes(a.s.Engine), "%s: %v", q.sql, err)
	}

	_, err = scoped.Query(ctx, `SELECT typeof($1), $1::VARCHAR`, "x\x00")
	require.Error(t, err)
	require.Equal(t, probes+1, engine.FailureProbes(a.s.Engine), "the internal error is probed: %v", err)
}
