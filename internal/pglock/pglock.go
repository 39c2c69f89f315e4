// Package pglock provides leases on PostgreSQL session-scoped advisory locks: one
// archiver per table, one cold appender per table. A lease is held on a dedicated
// connection, so it ends when the holder's session ends — also when the process dies.
//
// A session can end without its holder noticing (a restart of PostgreSQL, a cut
// connection, pg_terminate_backend): another process then takes the lease while
// the first still believes it holds it. Each acquisition therefore increments the
// lease's token (the table meterstore_lease_tokens), and a holder proves it still
// holds the lease before an effect that must not happen twice (Check, CheckIn):
// a token that moved means someone acquired the lease since.
package pglock

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrLockTimeout is returned when a bounded wait for a lease ran out. Nothing was
// changed; the operation is safe to retry.
var ErrLockTimeout = errors.New("lease wait timed out; nothing was changed, retry later")

// ErrLeaseLost means a lease's session ended or another process acquired the
// lease since: its holder must not act on it any more. What it did so far is
// for the next holder to finish or undo.
var ErrLeaseLost = errors.New("lease lost: its session ended or another process acquired it since")

// Lease is a held advisory lock. Release it exactly once.
type Lease struct {
	conn  *pgxpool.Conn
	key   int64
	name  string
	token int64
}

// Key maps a lease name (e.g. "archive:readings_versions") to an advisory-lock key.
func Key(name string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("meterstore:" + name))
	return int64(h.Sum64())
}

// TryAcquire takes the lease if it is free and increments its token. A held
// lease is a normal outcome: (nil, false, nil).
func TryAcquire(ctx context.Context, pool *pgxpool.Pool, name string) (*Lease, bool, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("lease %s: acquire connection: %w", name, err)
	}
	key := Key(name)
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&ok); err != nil {
		conn.Release()
		return nil, false, fmt.Errorf("lease %s: %w", name, err)
	}
	if !ok {
		conn.Release()
		return nil, false, nil
	}
	l := &Lease{conn: conn, key: key, name: name}
	if l.token, err = nextToken(ctx, conn, name); err != nil {
		l.Release()
		return nil, false, fmt.Errorf("lease %s: token: %w", name, err)
	}
	return l, true, nil
}

// Acquire waits up to wait for the lease, backing off between attempts, then
// returns ErrLockTimeout.
func Acquire(ctx context.Context, pool *pgxpool.Pool, name string, wait time.Duration) (*Lease, error) {
	deadline := time.Now().Add(wait)
	backoff := 10 * time.Millisecond
	for {
		l, ok, err := TryAcquire(ctx, pool, name)
		if err != nil {
			return nil, err
		}
		if ok {
			return l, nil
		}
		if time.Now().Add(backoff).After(deadline) {
			return nil, fmt.Errorf("lease %s after %s: %w", name, wait, ErrLockTimeout)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
		if backoff < 500*time.Millisecond {
			backoff *= 2
		}
	}
}

// Release unlocks and returns the connection. If the unlock fails the connection
// is destroyed, which ends the session and so the lock.
func (l *Lease) Release() {
	if l == nil || l.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := l.conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", l.key); err != nil {
		_ = l.conn.Conn().Close(ctx)
	}
	l.conn.Release()
	l.conn = nil
}

// Name is the lease's name.
func (l *Lease) Name() string { return l.name }
