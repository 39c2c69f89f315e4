package serve_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/meterstore/meterstore/serve"
)

// errorOf reads a raw client's messages up to ReadyForQuery and returns the
// error among them.
func (r *rawPG) errorOf(t *testing.T) *pgproto3.ErrorResponse {
	t.Helper()
	var e *pgproto3.ErrorResponse
	for {
		msg, err := r.fe.Receive()
		require.NoError(t, err)
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			c := *m
			e = &c
		case *pgproto3.ReadyForQuery:
			require.NotNil(t, e, "the server answered without an error")
			return e
		}
	}
}

// TestPGWireBoundsBeforeParsing: a 30 MB `SELECT 1+1+…` is refused with the
// limit named (54000) before the dialect layer tokenizes it — the server
// allocates a few bytes per byte of statement (reading the message), not the
// ~100 it took to translate — and deep nesting (54001), too many parameters
// (54000) and a result over the server's row bound (54000) are refused the
// same way; each session goes on.
func TestPGWireBoundsBeforeParsing(t *testing.T) {
	f := newFixture(t)
	addr := servePGOn(t, &serve.PGServer{Users: f.users(t), Log: f.log, Limits: serve.Limits{MaxResultRows: 10}}, "127.0.0.1:0")
	ctx := context.Background()

	t.Run("30 MB statement", func(t *testing.T) {
		r := dialRawPG(t, addr)
		huge := "SELECT 1" + strings.Repeat("+1", 15_000_000)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r.fe.Send(&pgproto3.Query{String: huge})
		require.NoError(t, r.fe.Flush())
		e := r.errorOf(t)
		runtime.ReadMemStats(&after)
		require.Equal(t, "54000", e.Code, e.Message)
		require.Contains(t, e.Message, "statement of 30000008 bytes exceeds the server's limit of 1048576 bytes per statement (max_statement_bytes)")
		perByte := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(huge))
		t.Logf("allocated %.1f bytes per byte of statement (client and server)", perByte)
		require.Less(t, perByte, 25.0, "the statement was read, not processed")
	})

	t.Run("nesting, parameters", func(t *testing.T) {
		r := dialRawPG(t, addr)
		deep := "SELECT " + strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000)
		r.fe.Send(&pgproto3.Query{String: deep})
		require.NoError(t, r.fe.Flush())
		e := r.errorOf(t)
		require.Equal(t, "54001", e.Code, e.Message)
		require.Contains(t, e.Message, "parentheses nested more than 1000 deep (max_nesting)")

		r.fe.Send(&pgproto3.Parse{Query: "SELECT $70000::int"})
		r.fe.Send(&pgproto3.Sync{})
		require.NoError(t, r.fe.Flush())
		e = r.errorOf(t)
		require.Equal(t, "54000", e.Code, e.Message)
		require.Contains(t, e.Message, "statement has 70000 parameters, more than the server's limit of 65535 (max_parameters)")

		r.fe.Send(&pgproto3.Query{String: "SELECT '((((' AS \"(((\", $$((($$ AS x -- ((((\n"})
		require.NoError(t, r.fe.Flush())
		for {
			msg, err := r.fe.Receive()
			require.NoError(t, err)
			_, failed := msg.(*pgproto3.ErrorResponse)
			require.False(t, failed, "parentheses in literals do not nest: %+v", msg)
			if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
				break
			}
		}
	})

	t.Run("result rows", func(t *testing.T) {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
			c := pgConnect(t, addr, "raw", "x", mode, nil)
			rows, err := c.Query(ctx, `SELECT * FROM readings`)
			require.NoError(t, err)
			n := 0
			for rows.Next() {
				n++
			}
			err = rows.Err()
			require.Equal(t, "54000", pgCode(err), "%v", err)
			require.ErrorContains(t, err, "the result exceeds the server's limit of 10 rows per statement (max_result_rows)")
			require.Equal(t, 10, n)
			var k int
			require.NoError(t, c.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&k), "the session goes on")
			require.Greater(t, k, 10)
		}
	})
}

// TestFlightBounds: Flight SQL refuses a statement over the text bound and a
// result over the row bound with ResourceExhausted naming the limit.
func TestFlightBounds(t *testing.T) {
	f := newFixture(t)
	srv, err := serve.NewFlightServer(f.users(t), f.log)
	require.NoError(t, err)
	srv.Limits = serve.Limits{MaxStatementBytes: 1000, MaxResultRows: 100}
	addr := serveFlight(t, srv)
	cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cl.Close()
	ctx := context.Background()

	_, err = cl.Execute(ctx, "SELECT 1"+strings.Repeat("+1", 1000))
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	require.ErrorContains(t, err, "exceeds the server's limit of 1000 bytes per statement (max_statement_bytes)")

	info, err := cl.Execute(ctx, `SELECT i FROM range(100000) r(i)`)
	require.NoError(t, err)
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	require.NoError(t, err)
	defer rdr.Release()
	n := int64(0)
	for rdr.Next() {
		n += rdr.RecordBatch().NumRows()
	}
	require.Equal(t, codes.ResourceExhausted, status.Code(rdr.Err()), "%v", rdr.Err())
	require.ErrorContains(t, rdr.Err(), "the result exceeds the server's limit of 100 rows per statement (max_result_rows)")
	require.LessOrEqual(t, n, int64(100))
}
