package archive_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/internal/pglock"
)

// TestLeaseLostMidWindowNeverDoubles cuts archiver A's lease session (as a
// PostgreSQL restart or a cut connection would) at each step of a window;
// archiver B, another process with its own handles, takes the lease and
// archives the window; then A resumes where it was stopped. Whatever A does next, every
// row is counted once, and A's run ends in an error rather than a second
// commit of B's window or a claim under B's.
func TestLeaseLostMidWindowNeverDoubles(t *testing.T) {
	for _, step := range []archive.Step{archive.AfterDetach, archive.AfterWrite, archive.AfterCommit, archive.AfterDrop} {
		t.Run(string(step), func(t *testing.T) {
			ctx := context.Background()
			l := load(t, nil)
			now := l.first.Add(2*24*time.Hour + l.tbl.Config.SettlementLag())
			otherCold, err := l.s.Catalog.Table(ctx, l.tbl.Config)
			require.NoError(t, err)
			b := archive.New(hot.New(l.s.Pool, l.tbl.Config), otherCold, archive.Options{})
			var bOut archive.Outcome
			var bErr error
			cut := false
			a := archive.New(l.tbl.Hot, l.tbl.Cold, archive.Options{Hook: func(s archive.Step) error {
				if s != step || cut {
					return nil
				}
				cut = true
				cutLease(t, l.s.Pool, l.tbl.Hot.ArchiveLeaseName())
				bOut, bErr = b.Archive(ctx, now, 1)
				return nil
			}})
			_, aErr := a.Archive(ctx, now, 0)
			require.True(t, cut, "the step was reached")
			require.NoError(t, bErr)
			require.False(t, bOut.LeaseContended, "B took the lease A lost")
			require.Error(t, aErr, "A does not carry on as the holder")
			t.Logf("A stopped with: %v", aErr)
			if step == archive.AfterWrite {
				require.ErrorIs(t, aErr, archive.ErrFenced, "A's commit of the window B committed is refused")
			}
			checkExactlyOnce(t, l)
			out, err := b.Archive(ctx, now, 0)
			require.NoError(t, err)
			require.True(t, out.Watermark.Equal(l.first.Add(2*24*time.Hour)), "watermark %s", out.Watermark)
			det, err := l.tbl.Hot.DetachedPartitions(ctx)
			require.NoError(t, err)
			require.Empty(t, det, "no partition is left detached")
			checkExactlyOnce(t, l)
		})
	}
}

// cutLease ends the session holding the named lease and waits until
// PostgreSQL has released its lock.
func cutLease(t *testing.T, pool *pgxpool.Pool, name string) {
	t.Helper()
	ctx := context.Background()
	const holders = `FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1
		AND ((classid::bigint << 32) | objid::bigint) = $1`
	var n int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(pg_terminate_backend(pid)) "+holders, pglock.Key(name)).Scan(&n))
	require.Equal(t, 1, n, "one session held %s", name)
	require.Eventually(t, func() bool {
		err := pool.QueryRow(ctx, "SELECT count(*) "+holders, pglock.Key(name)).Scan(&n)
		return err == nil && n == 0
	}, 10*time.Second, 10*time.Millisecond, "the lock ends with its session")
}
