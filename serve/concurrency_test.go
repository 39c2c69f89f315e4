package serve_test

import (
	"context"
	"testing"

	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// TestStatementsPerUser: a user with max_statements = 1 running a statement
// is refused a second one — on pgwire with SQLSTATE 53300 naming the limit,
// on Flight SQL with ResourceExhausted — while another user is not; once the
// first ends the user runs again.
func TestStatementsPerUser(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	users := f.Users(t,
		settings.UserSettings{Name: "busy", Password: "busy-pw", MaxStatements: 1},
		settings.UserSettings{Name: "admin", Password: "s3cret"},
	)
	srv, addr := f.StartPG(t, users)
	flightAddr := f.StartFlight(t, users)

	first := servetest.PGConnect(t, addr, "busy", "busy-pw", pgx.QueryExecModeSimpleProtocol, nil)
	running := make(chan error, 1)
	go func() { _, err := first.Exec(ctx, servetest.Endless); running <- err }()
	servetest.WaitOpen(t, srv, 1)

	second := servetest.PGConnect(t, addr, "busy", "busy-pw", pgx.QueryExecModeCacheStatement, nil)
	var n int64
	err := second.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n)
	require.Equal(t, "53300", servetest.PGCode(err), "%v", err)
	require.ErrorContains(t, err, `too many statements running for user "busy": 1 at once is the limit (max_statements)`)

	cl, err := arrowsql.NewClient(flightAddr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cl.Close()
	fctx, err := cl.Client.AuthenticateBasicToken(ctx, "busy", "busy-pw")
	require.NoError(t, err)
	info, err := cl.Execute(fctx, `SELECT count(*) FROM readings`)
	require.NoError(t, err, "planning is not a running statement")
	rdr, err := cl.DoGet(fctx, info.Endpoint[0].Ticket)
	if err == nil {
		for rdr.Next() {
		}
		err = rdr.Err()
		rdr.Release()
	}
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	require.ErrorContains(t, err, "max_statements")

	admin := servetest.PGConnect(t, addr, "admin", "s3cret", pgx.QueryExecModeSimpleProtocol, nil)
	require.NoError(t, admin.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n), "another user")

	require.NoError(t, first.PgConn().CancelRequest(ctx))
	require.Equal(t, "57014", servetest.PGCode(<-running))
	require.NoError(t, second.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n), "the first statement ended")
	require.Positive(t, n)
}
