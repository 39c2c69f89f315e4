package hot_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/internal/pglock"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

// TestWritePriorStateFollowsTheLock: a write's prior-state read must see what
// the writer that held the readings' locks before it committed, even where the
// role or database defaults to REPEATABLE READ — there the transaction's
// snapshot would be taken by the lock statement, before the lock is granted,
// and a correction would be reported superseding a version that is no longer
// current.
func TestWritePriorStateFollowsTheLock(t *testing.T) {
	ctx := context.Background()
	pcfg, err := pgxpool.ParseConfig(pgtest.Database(t))
	require.NoError(t, err)
	pcfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = "repeatable read"
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st := storeOn(t, pool, meterstore.TableSpec{Name: "readings_versions"})
	_, err = st.Write(ctx, []meterstore.Row{qh(maloA, obisImport, day10, "1", 1)})
	require.NoError(t, err)

	// Another writer holds every bucket of the table and stores version 2.
	holder, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer holder.Rollback(ctx) //nolint:errcheck
	_, err = holder.Exec(ctx, `SELECT count(pg_advisory_xact_lock($1::int4, b)) FROM generate_series(0, 63) AS b`,
		int32(pglock.Key("readings:readings_versions")))
	require.NoError(t, err)
	_, err = holder.Exec(ctx, `CREATE TEMP TABLE v2 ON COMMIT DROP AS SELECT * FROM readings_versions WHERE version = 1;
		UPDATE v2 SET version = 2, value = 2; INSERT INTO readings_versions SELECT * FROM v2`)
	require.NoError(t, err)

	type result struct {
		ds  []meterstore.Displacement
		err error
	}
	done := make(chan result, 1)
	go func() {
		ds, err := st.Write(ctx, []meterstore.Row{qh(maloA, obisImport, day10, "3", 3)})
		done <- result{ds, err}
	}()
	waiting := func() bool {
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n))
		return n > 0
	}
	require.Eventually(t, waiting, time.Minute, 10*time.Millisecond, "the write waits for the holder's locks")
	require.NoError(t, holder.Commit(ctx))

	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, meterstore.Superseded, r.ds[0].Effect)
	require.Equal(t, uint64(2), r.ds[0].Superseded.Version, "version 2 was current when the write took the lock")
}

// TestLockBucketIsTheBucketWriteWaitsOn: LockBucket names the advisory lock a
// write of the channel takes — a write of maloA's channel waits for a
// transaction holding that bucket alone, and a write of a channel in another
// bucket goes through while it is held. Callers that split their writes by
// LockBucket so that they run side by side rely on exactly this.
func TestLockBucketIsTheBucketWriteWaitsOn(t *testing.T) {
	ctx := context.Background()
	st, pool := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	bucketA, bucketB := hot.LockBucket(maloA, obisImport), hot.LockBucket(maloB, obisImport)
	require.NotEqual(t, bucketA, bucketB, "the two channels must fall in different buckets for this test")

	holder, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer holder.Rollback(ctx) //nolint:errcheck
	_, err = holder.Exec(ctx, `SELECT pg_advisory_xact_lock($1::int4, $2::int4)`,
		int32(pglock.Key("readings:readings_versions")), int32(bucketA))
	require.NoError(t, err)

	ds, err := st.Write(ctx, []meterstore.Row{qh(maloB, obisImport, day10, "1", 1)})
	require.NoError(t, err, "a channel in another bucket does not wait")
	require.Equal(t, meterstore.Inserted, ds[0].Effect)

	done := make(chan error, 1)
	go func() {
		_, err := st.Write(ctx, []meterstore.Row{qh(maloA, obisImport, day10, "1", 1)})
		done <- err
	}()
	waiting := func() bool {
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n))
		return n > 0
	}
	require.Eventually(t, waiting, time.Minute, 10*time.Millisecond, "the write of maloA's channel waits for its bucket")
	select {
	case err := <-done:
		t.Fatalf("the write went through while its bucket was held: %v", err)
	default:
	}
	require.NoError(t, holder.Rollback(ctx))
	require.NoError(t, <-done)
}
