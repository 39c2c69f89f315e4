package pgwire_test

import (
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
)

// A message header announcing ~2 GiB is refused naming the limit, before the
// server allocates the body, and the connection ends.
func TestPGWireRefusesAnOversizedMessage(t *testing.T) {
	f := servetest.New(t)
	_, addr := f.StartPG(t, f.Users(t))
	r := servetest.DialRawPG(t, addr)
	header := []byte{'Q', 0, 0, 0, 0}
	binary.BigEndian.PutUint32(header[1:], 0x7ffffff0)
	_, err := r.Conn.Write(header)
	require.NoError(t, err)
	require.NoError(t, r.Conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	msgs, err := r.UntilClosed()
	require.ErrorIs(t, err, io.EOF, "the server must answer and close, not wait for the body")
	require.Len(t, msgs, 1)
	e, ok := msgs[0].(*pgproto3.ErrorResponse)
	require.True(t, ok, "%T", msgs[0])
	require.Equal(t, "08P01", e.Code)
	require.Contains(t, e.Message, "64 MiB")
	require.Contains(t, e.Message, "2147483628")
}
