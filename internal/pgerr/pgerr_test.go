package pgerr_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/pgerr"
)

// TestUnavailable: a database that cannot be reached or went away is
// Unavailable however deeply the error is wrapped; a statement PostgreSQL
// refused is not.
func TestUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	_, connErr := pgx.Connect(context.Background(), "postgres://u@"+addr+"/db?connect_timeout=5")
	require.Error(t, connErr)

	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", fmt.Errorf("read watermark: load: %w", connErr), true},
		{"server shutting down", &pgconn.PgError{Code: "57P01"}, true},
		{"connection failure", fmt.Errorf("scan: %w", &pgconn.PgError{Code: "08006"}), true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"syntax error", &pgconn.PgError{Code: "42601"}, false},
		{"check violation", fmt.Errorf("write: %w", &pgconn.PgError{Code: "23514"}), false},
		{"not a database error", errors.New("parse: unexpected token"), false},
		{"nil", nil, false},
	} {
		require.Equal(t, c.want, pgerr.Unavailable(c.err), c.name)
	}
}
