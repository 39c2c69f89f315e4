// Package pgerr classifies errors from PostgreSQL connections the way callers
// branch on them.
package pgerr

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err says the server could not be reached or
// ended the connection — nothing about the statement was wrong, and running it
// again may succeed: a connection that could not be made, SQLSTATE class 08
// (connection exception) or 57P (operator intervention: shutdown, crash, a
// server not yet accepting connections), 53300 (too many connections), the
// driver's bad-connection signal, a network error, a connection that ended
// mid-message (a pooled connection the server dropped: io.ErrUnexpectedEOF),
// or an error pgconn marks safe to retry.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var connect *pgconn.ConnectError
	var netErr net.Error
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &connect) || errors.As(err, &netErr) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return strings.HasPrefix(pg.Code, "08") || strings.HasPrefix(pg.Code, "57P") || pg.Code == "53300"
	}
	return pgconn.SafeToRetry(err)
}
