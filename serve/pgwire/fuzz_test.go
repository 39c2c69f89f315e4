package pgwire_test

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
)

// frontendBytes encodes messages as a client sends them.
func frontendBytes(t testing.TB, msgs ...pgproto3.FrontendMessage) []byte {
	t.Helper()
	var b []byte
	for _, m := range msgs {
		var err error
		b, err = m.Encode(b)
		require.NoError(t, err)
	}
	return b
}

// FuzzPGWire sends arbitrary bytes to the pgwire server, after a startup or
// from the connection's first byte: the server answers or closes, never
// hangs, and never panics (a recovered panic is logged and counted).
func FuzzPGWire(f *testing.F) {
	fx := servetest.New(f)
	_, addr := fx.StartPG(f, fx.Users(f))
	text, binary := []int16{0}, []int16{1}
	for _, msgs := range [][]pgproto3.FrontendMessage{
		{&pgproto3.Query{String: "SELECT count(*) FROM readings"}},
		{&pgproto3.Query{String: "BEGIN; DECLARE c CURSOR FOR SELECT * FROM readings; FETCH 2 c; CLOSE c; COMMIT"}},
		{&pgproto3.Query{String: "SHOW TimeZone; SET TimeZone = 'Europe/Berlin'; SELECT version()"}},
		{&pgproto3.Parse{Name: "s", Query: "SELECT * FROM readings WHERE tenant = $1 LIMIT $2", ParameterOIDs: []uint32{25, 23}},
			&pgproto3.Describe{ObjectType: 'S', Name: "s"},
			&pgproto3.Bind{PreparedStatement: "s", ParameterFormatCodes: []int16{0, 1}, Parameters: [][]byte{[]byte("tenant01"), {0, 0, 0, 3}}, ResultFormatCodes: binary},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{MaxRows: 2}, &pgproto3.Execute{}, &pgproto3.Sync{}},
		{&pgproto3.Parse{Query: "SELECT $1::int"}, &pgproto3.Bind{ParameterFormatCodes: []int16{1, 1, 0}, Parameters: [][]byte{{1}}, ResultFormatCodes: text},
			&pgproto3.Execute{}, &pgproto3.Sync{}},
		{&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "missing"}, &pgproto3.Execute{Portal: "p"}, &pgproto3.Close{ObjectType: 'P', Name: "p"}, &pgproto3.Sync{}},
		{&pgproto3.FunctionCall{Function: 1}, &pgproto3.CopyData{Data: []byte("x")}, &pgproto3.Flush{}, &pgproto3.Terminate{}},
	} {
		f.Add(true, frontendBytes(f, msgs...))
	}
	f.Add(true, []byte{'Q', 0, 0, 0, 3})
	f.Add(true, []byte{'P', 0x7f, 0xff, 0xff, 0xf0})
	f.Add(false, frontendBytes(f, &pgproto3.SSLRequest{}, &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": "u"}}, &pgproto3.Query{String: "SELECT 1"}))
	f.Add(false, frontendBytes(f, &pgproto3.CancelRequest{ProcessID: 1, SecretKey: []byte{1, 2, 3, 4}}))
	f.Add(false, frontendBytes(f, &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion32, Parameters: map[string]string{}}))
	f.Fuzz(func(t *testing.T, afterStartup bool, stream []byte) {
		before := fx.Panics.Load()
		var conn net.Conn
		if afterStartup {
			conn = servetest.DialRawPG(t, addr).Conn
		} else {
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer c.Close()
			conn = c
		}
		require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
		if _, err := conn.Write(stream); err != nil && !isReset(err) {
			require.NoError(t, err)
		}
		require.NoError(t, conn.(*net.TCPConn).CloseWrite())
		_, err := io.Copy(io.Discard, conn)
		if err != nil && !isReset(err) {
			require.NoError(t, err, "the server must answer and close the connection")
		}
		require.Equal(t, before, fx.Panics.Load(), "a request panicked (see the log)")
	})
}

// isReset reports a connection the server closed with input still unread.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
