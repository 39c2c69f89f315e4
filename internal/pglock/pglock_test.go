package pglock_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/pglock"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// terminateHolder ends the session holding the named lease, as a restart of
// PostgreSQL or a cut connection would.
func terminateHolder(t *testing.T, pool *pgxpool.Pool, name string) {
	t.Helper()
	var n int
	err := pool.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = $1`,
		pglock.Key(name)).Scan(&n)
	require.NoError(t, err)
	require.Equal(t, 1, n, "one session holds %s", name)
}

// TestCheckFencesOffAnEndedLease: a holder whose session ended has lost the
// lease even before anyone else takes it, and a later holder's token is
// higher, so the first cannot pass Check or CheckIn again.
func TestCheckFencesOffAnEndedLease(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.Database(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	const name = "archive:readings"

	a, err := pglock.Acquire(ctx, pool, name, time.Second)
	require.NoError(t, err)
	defer a.Release()
	require.NoError(t, a.Check(ctx))
	_, ok, err := pglock.TryAcquire(ctx, pool, name)
	require.NoError(t, err)
	require.False(t, ok, "a held lease is not granted twice")

	terminateHolder(t, pool, name)
	require.ErrorIs(t, a.Check(ctx), pglock.ErrLeaseLost, "the holder's session ended")

	b, err := pglock.Acquire(ctx, pool, name, 5*time.Second)
	require.NoError(t, err)
	defer b.Release()
	require.Greater(t, b.Token(), a.Token())
	require.NoError(t, b.Check(ctx))

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	require.ErrorIs(t, a.CheckIn(ctx, tx), pglock.ErrLeaseLost, "the token moved")
	require.NoError(t, b.CheckIn(ctx, tx))
	require.NoError(t, tx.Rollback(ctx))

	b.Release()
	require.ErrorIs(t, b.Check(ctx), pglock.ErrLeaseLost, "a released lease is not held")
	c, err := pglock.Acquire(ctx, pool, name, time.Second)
	require.NoError(t, err)
	defer c.Release()
	require.Equal(t, b.Token()+1, c.Token())
}
