package flightsql_test

import (
	"context"
	"strings"
	"testing"

	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/meterstore/meterstore/serve/access"
	"github.com/meterstore/meterstore/serve/flightsql"
	"github.com/meterstore/meterstore/serve/internal/servetest"
)

// TestFlightBounds: Flight SQL refuses a statement over the text bound and a
// result over the row bound with ResourceExhausted naming the limit.
func TestFlightBounds(t *testing.T) {
	f := servetest.New(t)
	srv, err := flightsql.NewServer(f.Users(t), f.Log)
	require.NoError(t, err)
	srv.Limits = access.Limits{MaxStatementBytes: 1000, MaxResultRows: 100}
	addr := servetest.ServeFlight(t, srv)
	cl, err := arrowsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
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
