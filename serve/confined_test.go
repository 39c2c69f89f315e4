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
	"github.com/meterstore/meterstore/testkit/storetest"
)

// TestConfinedCapReached: with room for one confined database, a tenant's
// statement while another tenant's runs is refused — on pgwire with SQLSTATE
// 53300 (too_many_connections) naming the cap and the settings that raise
// it, on Flight SQL with ResourceExhausted — and runs once the other ends.
func TestConfinedCapReached(t *testing.T) {
	f := servetest.NewWith(t, storetest.Options{ConfinedDatabases: 1})
	ctx := context.Background()
	users := f.Users(t,
		settings.UserSettings{Name: "alice", Password: "alice-pw", Scope: "tenant=tenant01"},
		settings.UserSettings{Name: "bob", Password: "bob-pw", Scope: "tenant=tenant02"},
	)
	srv, addr := f.StartPG(t, users)
	flightAddr := f.StartFlight(t, users)

	alice := servetest.PGConnect(t, addr, "alice", "alice-pw", pgx.QueryExecModeSimpleProtocol, nil)
	running := make(chan error, 1)
	go func() { _, err := alice.Exec(ctx, servetest.Endless); running <- err }()
	servetest.WaitOpen(t, srv, 1)

	bob := servetest.PGConnect(t, addr, "bob", "bob-pw", pgx.QueryExecModeSimpleProtocol, nil)
	var n int64
	err := bob.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n)
	require.Equal(t, "53300", servetest.PGCode(err), "%v", err)
	require.ErrorContains(t, err, "all 1 confined databases")
	require.ErrorContains(t, err, "(confined_databases)")
	require.NotContains(t, err.Error(), "engine:", "no internal stage words")

	cl, err := arrowsql.NewClient(flightAddr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cl.Close()
	fctx, err := cl.Client.AuthenticateBasicToken(ctx, "bob", "bob-pw")
	require.NoError(t, err)
	_, err = servetest.FlightRows(fctx, cl, `SELECT count(*) FROM readings`)
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	require.ErrorContains(t, err, "confined_databases")

	require.NoError(t, alice.PgConn().CancelRequest(ctx))
	require.Equal(t, "57014", servetest.PGCode(<-running))
	require.NoError(t, bob.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n), "alice's statement ended")
	require.Positive(t, n)
}
