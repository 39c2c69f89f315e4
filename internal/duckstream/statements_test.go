package duckstream

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// keptStatements is Statements over a fresh in-memory database.
func keptStatements(t *testing.T, max int) *Statements {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	kept := NewStatements(db, max)
	t.Cleanup(func() {
		require.NoError(t, kept.Close())
		db.Close()
	})
	return kept
}

// TestStatementsKeptForTheNextRun: a query's statement is given back at
// Close and taken by its next run, which answers as the first did; two runs
// of one query at once each have a statement of their own, both kept after.
func TestStatementsKeptForTheNextRun(t *testing.T) {
	ctx := context.Background()
	kept := keptStatements(t, 8)
	conn, done := sourceDBOf(t, ctx, kept)
	defer conn.Close()
	q := `SELECT sum(i)::VARCHAR FROM fed('SELECT range AS i FROM range(100000)')`
	var first, again string
	require.NoError(t, conn.QueryRowContext(ctx, q).Scan(&first))
	done()
	require.Equal(t, []string{`SELECT "i" FROM (SELECT range AS i FROM range(100000))`}, kept.Kept())
	stmt := kept.kept.idle.Front().Value.(keptEntry[string, *prepared]).v
	require.NoError(t, conn.QueryRowContext(ctx, q).Scan(&again))
	require.Equal(t, first, again)
	require.Equal(t, "4999950000", again)
	require.Len(t, kept.Kept(), 0, "the run took the kept statement and holds it until done")
	done()
	require.Same(t, stmt, kept.kept.idle.Front().Value.(keptEntry[string, *prepared]).v, "the next run used the statement kept")

	a, err := kept.Open(ctx, "SELECT 1", true)
	require.NoError(t, err)
	b, err := kept.Open(ctx, "SELECT 1", true)
	require.NoError(t, err)
	require.NotSame(t, a.stmt, b.stmt, "two runs at once share no statement")
	a.Close()
	b.Close()
	require.Equal(t, []string{"SELECT 1", "SELECT 1", `SELECT "i" FROM (SELECT range AS i FROM range(100000))`}, kept.Kept())
}

// TestStatementsBounded: beyond max, the statement given back least recently
// is closed.
func TestStatementsBounded(t *testing.T) {
	ctx := context.Background()
	kept := keptStatements(t, 2)
	for _, q := range []string{"SELECT 1", "SELECT 2", "SELECT 3", "SELECT 1"} {
		src, err := kept.Open(ctx, q, true)
		require.NoError(t, err)
		src.Close()
	}
	require.Equal(t, []string{"SELECT 1", "SELECT 3"}, kept.Kept())
}

// TestStatementsNotKeptAfterAFailure: a run that failed, or whose context
// ended, or opened not to be kept, does not give its statement back; after
// Close nothing is kept.
func TestStatementsNotKeptAfterAFailure(t *testing.T) {
	ctx := context.Background()
	kept := keptStatements(t, 8)
	conn, done := sourceDBOf(t, ctx, kept)
	defer conn.Close()
	bad := `SELECT CASE WHEN i < 5000 THEN i ELSE error('row ' || i::VARCHAR || ' is bad') END AS i FROM range(10000) t(i)`
	var n int64
	err := conn.QueryRowContext(ctx, "SELECT sum(i) FROM fed("+sqltext.String(bad)+")").Scan(&n)
	require.ErrorContains(t, err, "is bad")
	done()
	require.Empty(t, kept.Kept(), "a failed run's statement")

	once, err := kept.Open(ctx, "SELECT 1", false)
	require.NoError(t, err)
	once.Close()
	require.Empty(t, kept.Kept(), "a statement opened not to be kept")

	cctx, cancel := context.WithCancel(ctx)
	src, err := kept.Open(cctx, "SELECT 1", true)
	require.NoError(t, err)
	cancel()
	src.Close()
	require.Empty(t, kept.Kept(), "a cancelled run's statement")

	src, err = kept.Open(ctx, "SELECT 1", true)
	require.NoError(t, err)
	require.NoError(t, kept.Close())
	src.Close()
	require.Empty(t, kept.Kept(), "a statement given back after Close")
	again, err := kept.Open(ctx, "SELECT 1", true)
	require.NoError(t, err, "a closed Statements still runs queries, keeping none")
	again.Close()
	require.Empty(t, kept.Kept())
}
