package servetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/pgwire"
)

// PGConnect connects pgx to addr as user; notices, when not nil, collects
// the server's notices at the provenance's level.
func PGConnect(t *testing.T, addr, user, password string, mode pgx.QueryExecMode, notices *[]string) *pgx.Conn {
	t.Helper()
	host, port, _ := strings.Cut(addr, ":")
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=meterstore sslmode=disable", host, port, user, password))
	require.NoError(t, err)
	cfg.DefaultQueryExecMode = mode
	if notices != nil {
		cfg.RuntimeParams["client_min_messages"] = "log" // the provenance's level
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { *notices = append(*notices, n.Message) }
	}
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// PGCode is err's SQLSTATE, "" when it is not a PostgreSQL error.
func PGCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// RawPG is a pgwire client below pgx: it sends whatever bytes a test wants
// after a startup without authentication (the fixture's loopback server).
type RawPG struct {
	Conn net.Conn
	FE   *pgproto3.Frontend
}

// DialRawPG connects a RawPG to addr and completes its startup.
func DialRawPG(t testing.TB, addr string) *RawPG {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
	r := &RawPG{Conn: conn, FE: pgproto3.NewFrontend(conn, conn)}
	r.FE.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "raw", "database": "meterstore"}})
	require.NoError(t, r.FE.Flush())
	for {
		msg, err := r.FE.Receive()
		require.NoError(t, err)
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			return r
		}
	}
}

// UntilClosed returns every message the server sends until it closes the
// connection, and the error that ended the reading (io.EOF when it closed).
func (r *RawPG) UntilClosed() ([]pgproto3.BackendMessage, error) {
	var msgs []pgproto3.BackendMessage
	for {
		msg, err := r.FE.Receive()
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

// Endless is a statement that runs for hours: every reading of both tiers
// (the hot scan open in PostgreSQL) joined with a trillion numbers.
const Endless = `SELECT count(*) FROM readings, range(1000000000000) b(j) WHERE value * j < -1`

// WaitOpen waits until the server has n statements open in the engine.
func WaitOpen(t *testing.T, srv *pgwire.Server, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return srv.OpenStatements() == n }, time.Minute, 10*time.Millisecond,
		"open statements: %d, want %d", srv.OpenStatements(), n)
}

// FlightRows runs q and returns every row, or the first error.
func FlightRows(ctx context.Context, cl *flightsql.Client, q string) ([][]any, error) {
	info, err := cl.Execute(ctx, q)
	if err != nil {
		return nil, err
	}
	var out [][]any
	for _, ep := range info.Endpoint {
		rdr, err := cl.DoGet(ctx, ep.Ticket)
		if err != nil {
			return nil, err
		}
		for rdr.Next() {
			rec := rdr.RecordBatch()
			for i := 0; i < int(rec.NumRows()); i++ {
				row := make([]any, rec.NumCols())
				for j := range row {
					row[j] = rec.Column(j).GetOneForMarshal(i)
				}
				out = append(out, row)
			}
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Fetch runs a FlightInfo's endpoints and returns the schema and every row's values.
func Fetch(t *testing.T, ctx context.Context, cl *flightsql.Client, info *flight.FlightInfo) (*arrow.Schema, [][]any, int) {
	t.Helper()
	var rows [][]any
	var schema *arrow.Schema
	batches := 0
	for _, ep := range info.Endpoint {
		rdr, err := cl.DoGet(ctx, ep.Ticket)
		require.NoError(t, err)
		schema = rdr.Schema()
		for rdr.Next() {
			rec := rdr.RecordBatch()
			batches++
			for i := 0; i < int(rec.NumRows()); i++ {
				row := make([]any, rec.NumCols())
				for j := range row {
					row[j] = rec.Column(j).GetOneForMarshal(i)
				}
				rows = append(rows, row)
			}
		}
		require.NoError(t, rdr.Err())
		rdr.Release()
	}
	return schema, rows, batches
}
