package serve_test

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
)

// rawPG is a pgwire client below pgx: it sends whatever bytes a test wants
// after a startup without authentication (the fixture's loopback server).
type rawPG struct {
	conn net.Conn
	fe   *pgproto3.Frontend
}

func dialRawPG(t testing.TB, addr string) *rawPG {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
	r := &rawPG{conn: conn, fe: pgproto3.NewFrontend(conn, conn)}
	r.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "raw", "database": "meterstore"}})
	require.NoError(t, r.fe.Flush())
	for {
		msg, err := r.fe.Receive()
		require.NoError(t, err)
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			return r
		}
	}
}

// untilClosed returns every message the server sends until it closes the
// connection, and the error that ended the reading (io.EOF when it closed).
func (r *rawPG) untilClosed() ([]pgproto3.BackendMessage, error) {
	var msgs []pgproto3.BackendMessage
	for {
		msg, err := r.fe.Receive()
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = io.EOF
			}
			return msgs, err
		}
		if e, ok := msg.(*pgproto3.ErrorResponse); ok {
			c := *e
			msg = &c
		}
		msgs = append(msgs, msg)
	}
}

// A message header announcing ~2 GiB is refused naming the limit, before the
// server allocates the body, and the connection ends.
func TestPGWireRefusesAnOversizedMessage(t *testing.T) {
	f := newFixture(t)
	_, addr := f.startPG(t, f.users(t))
	r := dialRawPG(t, addr)
	header := []byte{'Q', 0, 0, 0, 0}
	binary.BigEndian.PutUint32(header[1:], 0x7ffffff0)
	_, err := r.conn.Write(header)
	require.NoError(t, err)
	require.NoError(t, r.conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	msgs, err := r.untilClosed()
	require.ErrorIs(t, err, io.EOF, "the server must answer and close, not wait for the body")
	require.Len(t, msgs, 1)
	e, ok := msgs[0].(*pgproto3.ErrorResponse)
	require.True(t, ok, "%T", msgs[0])
	require.Equal(t, "08P01", e.Code)
	require.Contains(t, e.Message, "64 MiB")
	require.Contains(t, e.Message, "2147483628")
}
