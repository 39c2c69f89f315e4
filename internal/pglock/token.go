package pglock

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// tokensDDL creates the table of lease tokens: per lease name, how many times
// it was acquired.
const tokensDDL = `CREATE TABLE IF NOT EXISTS meterstore_lease_tokens (
	name  text PRIMARY KEY,
	token bigint NOT NULL
)`

// nextToken increments the lease's token on the holder's connection, creating
// the table on first use.
func nextToken(ctx context.Context, conn *pgxpool.Conn, name string) (int64, error) {
	const bump = `INSERT INTO meterstore_lease_tokens (name, token) VALUES ($1, 1)
		ON CONFLICT (name) DO UPDATE SET token = meterstore_lease_tokens.token + 1 RETURNING token`
	var token int64
	err := conn.QueryRow(ctx, bump, name).Scan(&token)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
		if err := createTokens(ctx, conn); err != nil {
			return 0, err
		}
		err = conn.QueryRow(ctx, bump, name).Scan(&token)
	}
	return token, err
}

// createTokens creates the tokens table under a transaction-scoped advisory
// lock: concurrent CREATE TABLE IF NOT EXISTS can otherwise fail on the
// catalogue's unique index.
func createTokens(ctx context.Context, conn *pgxpool.Conn) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", Key("lease-tokens")); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, tokensDDL)
		return err
	})
}

// Token is the lease's fencing token: it increases with every acquisition of
// the lease, so a holder whose token is no longer the stored one has lost it.
func (l *Lease) Token() int64 { return l.token }

// Check returns ErrLeaseLost unless the lease is still held: its session
// answers (a live session holds its advisory lock until Release) and the
// stored token is still its own. A holder calls it before an effect that must
// not happen twice; what happens between Check and the effect is fenced by the
// effect itself (a compare-and-swap, or CheckIn inside the transaction).
func (l *Lease) Check(ctx context.Context) error {
	if l == nil || l.conn == nil {
		return fmt.Errorf("lease: %w (released)", ErrLeaseLost)
	}
	var token int64
	err := l.conn.QueryRow(ctx, "SELECT token FROM meterstore_lease_tokens WHERE name = $1", l.name).Scan(&token)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("lease %s (token %d): %w: the holder's session does not answer: %v", l.name, l.token, ErrLeaseLost, err)
	}
	return l.compare(token)
}

// CheckIn checks the lease's token inside tx (on any connection) and holds the
// token row until tx ends: an acquisition by another process, which increments
// the token, waits for tx, so nothing tx does can follow another holder's
// acquisition. ErrLeaseLost when the token moved.
func (l *Lease) CheckIn(ctx context.Context, tx pgx.Tx) error {
	if l == nil || l.conn == nil {
		return fmt.Errorf("lease: %w (released)", ErrLeaseLost)
	}
	var token int64
	err := tx.QueryRow(ctx, "SELECT token FROM meterstore_lease_tokens WHERE name = $1 FOR SHARE", l.name).Scan(&token)
	if err != nil {
		return fmt.Errorf("lease %s: read token: %w", l.name, err)
	}
	return l.compare(token)
}

func (l *Lease) compare(stored int64) error {
	if stored != l.token {
		return fmt.Errorf("lease %s: %w: held with token %d, acquired since with token %d", l.name, ErrLeaseLost, l.token, stored)
	}
	return nil
}
