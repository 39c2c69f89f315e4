package flightsql_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/meterstore/meterstore/serve/flightsql"
	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// TestFlightSessionsExpire: a bearer token and a prepared statement handle
// left unused longer than SessionIdle are refused naming why (a used one
// lives on), and a Flight statement is cancelled by its user's
// statement_timeout with DeadlineExceeded.
func TestFlightSessionsExpire(t *testing.T) {
	f := servetest.New(t)
	users := f.Users(t,
		settings.UserSettings{Name: "admin", Password: "s3cret"},
		settings.UserSettings{Name: "hasty", Password: "hasty-pw", StatementTimeout: 200 * time.Millisecond},
	)
	srv, err := flightsql.NewServer(users, f.Log)
	require.NoError(t, err)
	const idle = 600 * time.Millisecond
	srv.SessionIdle = idle
	addr := servetest.ServeFlight(t, srv)
	cl, err := arrowsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cl.Close()
	bg := context.Background()

	t.Run("bearer token", func(t *testing.T) {
		ctx, err := cl.Client.AuthenticateBasicToken(bg, "admin", "s3cret")
		require.NoError(t, err)
		_, err = cl.Execute(ctx, `SELECT 1`)
		require.NoError(t, err)
		time.Sleep(idle + 200*time.Millisecond)
		_, err = cl.Execute(ctx, `SELECT 1`)
		require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
		require.ErrorContains(t, err, "bearer token expired: unused for more than 600ms")
	})

	t.Run("prepared statement", func(t *testing.T) {
		ctx, err := cl.Client.AuthenticateBasicToken(bg, "admin", "s3cret")
		require.NoError(t, err)
		ps, err := cl.Prepare(ctx, `SELECT count(*) FROM readings`)
		require.NoError(t, err)
		_, err = ps.Execute(ctx)
		require.NoError(t, err, "fresh")
		for range 4 { // the token is used, the handle is not
			time.Sleep(idle / 3)
			_, err = cl.Execute(ctx, `SELECT 1`)
			require.NoError(t, err)
		}
		_, err = ps.Execute(ctx)
		require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
		require.ErrorContains(t, err, "prepared statement expired: unused for more than 600ms; prepare it again")
	})

	t.Run("statement_timeout", func(t *testing.T) {
		ctx, err := cl.Client.AuthenticateBasicToken(bg, "hasty", "hasty-pw")
		require.NoError(t, err)
		start := time.Now()
		// Planning counts against the timeout too: on a loaded machine the
		// deadline may pass in GetFlightInfo, before any ticket exists.
		info, err := cl.Execute(ctx, servetest.Endless)
		var rdr *flight.Reader
		if err == nil {
			rdr, err = cl.DoGet(ctx, info.Endpoint[0].Ticket)
		}
		if err == nil {
			for rdr.Next() {
			}
			err = rdr.Err()
			rdr.Release()
		}
		require.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
		require.ErrorContains(t, err, "canceling statement due to statement timeout (statement_timeout 200ms)")
		require.Less(t, time.Since(start), time.Minute)
	})
}
