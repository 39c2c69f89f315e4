package flightsql_test

import (
	"context"
	"testing"
	"time"

	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// TestFlightRefusalsSayWhy: a query a scoped session may not run is refused
// with its own reason, not as a write; a write is refused as a write.
func TestFlightRefusalsSayWhy(t *testing.T) {
	f := servetest.New(t)
	bg := context.Background()
	require.NoError(t, f.Store.Engine.RefreshSystemTables(bg, time.Now()))
	users := f.Users(t, settings.UserSettings{Name: "alice", Password: "alice-pw", Scope: "tenant=tenant01"})
	addr := f.StartFlight(t, users)
	cl, err := arrowsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cl.Close()
	ctx, err := cl.Client.AuthenticateBasicToken(bg, "alice", "alice-pw")
	require.NoError(t, err)

	for _, q := range []string{`SELECT * FROM system.tables`, `SELECT current_setting('memory_limit')`} {
		_, err := servetest.FlightRows(ctx, cl, q)
		require.Equal(t, codes.PermissionDenied, status.Code(err), "%q: %v", q, err)
		require.NotContains(t, err.Error(), "a write here would bypass", "%q is a query, not a write: %v", q, err)
	}
	_, err = servetest.FlightRows(ctx, cl, `DELETE FROM readings_versions`)
	require.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	require.Contains(t, err.Error(), "a write here would bypass")
}
