package flightsql_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// flightCmd is a Flight SQL command packed as the descriptor and action
// bodies carry it.
func flightCmd(t testing.TB, m proto.Message) []byte {
	t.Helper()
	a, err := anypb.New(m)
	require.NoError(t, err)
	b, err := proto.Marshal(a)
	require.NoError(t, err)
	return b
}

// put sends DoPut messages and returns the server's answer.
func put(ctx context.Context, cl flight.Client, msgs ...*flight.FlightData) error {
	stream, err := cl.DoPut(ctx)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		// A server that refused the call may have closed the stream: its
		// answer comes from Recv.
		if err := stream.Send(m); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	return drain(stream.Recv)
}

// act runs one DoAction and returns the server's answer.
func act(ctx context.Context, cl flight.Client, a *flight.Action) error {
	stream, err := cl.DoAction(ctx, a)
	if err != nil {
		return err
	}
	return drain(stream.Recv)
}

// drain reads a stream to its end; its end of file is no error.
func drain[T any](recv func() (T, error)) error {
	for {
		if _, err := recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// A DoPut or DoAction is judged by its descriptor or type before anything
// reads its body: a malformed or missing one is an error to that client, a
// write is refused naming the read-only rule, and the server keeps answering.
func TestFlightMalformedPutsAndActionsAreRefused(t *testing.T) {
	f := servetest.New(t)
	users := f.Users(t, settings.UserSettings{Name: "alice", Password: "alice-pw", Scope: "tenant=tenant01"})
	cl, err := arrowsql.NewClient(f.StartFlight(t, users), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cl.Close()
	ctx, err := cl.Client.AuthenticateBasicToken(context.Background(), "alice", "alice-pw")
	require.NoError(t, err)
	garbage := []byte{0xff, 0xff, 0xff, 0x7f, 0x01, 0x02, 0x03}
	cmdDesc := func(m proto.Message) *flight.FlightDescriptor {
		return &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: flightCmd(t, m)}
	}
	ps, err := cl.Prepare(ctx, `SELECT count(*) FROM readings WHERE tenant = $1`)
	require.NoError(t, err)
	defer ps.Close(ctx)

	t.Run("DoPut without a message", func(t *testing.T) {
		err := put(ctx, cl.Client)
		require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	})
	for _, tc := range []struct {
		name string
		fd   *flight.FlightData
		want codes.Code
	}{
		{"no descriptor", &flight.FlightData{DataHeader: garbage, DataBody: garbage}, codes.InvalidArgument},
		{"a path descriptor", &flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"readings"}}}, codes.InvalidArgument},
		{"a command that is not one", &flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: garbage}}, codes.InvalidArgument},
		{"an update", &flight.FlightData{FlightDescriptor: cmdDesc(&pb.CommandStatementUpdate{Query: "DELETE FROM readings_versions"}), DataHeader: garbage}, codes.PermissionDenied},
		{"an ingest", &flight.FlightData{FlightDescriptor: cmdDesc(&pb.CommandStatementIngest{Table: "readings_versions"}), DataHeader: garbage, DataBody: garbage}, codes.PermissionDenied},
		{"a prepared update", &flight.FlightData{FlightDescriptor: cmdDesc(&pb.CommandPreparedStatementUpdate{PreparedStatementHandle: ps.Handle()}), DataHeader: garbage}, codes.PermissionDenied},
		{"a substrait plan", &flight.FlightData{FlightDescriptor: cmdDesc(&pb.CommandStatementSubstraitPlan{})}, codes.PermissionDenied},
		{"a query command", &flight.FlightData{FlightDescriptor: cmdDesc(&pb.CommandStatementQuery{Query: "SELECT 1"})}, codes.PermissionDenied},
		{"parameters that are not Arrow", &flight.FlightData{FlightDescriptor: cmdDesc(&pb.CommandPreparedStatementQuery{PreparedStatementHandle: ps.Handle()}), DataHeader: garbage, DataBody: garbage}, codes.InvalidArgument},
	} {
		t.Run("DoPut "+tc.name, func(t *testing.T) {
			err := put(ctx, cl.Client, tc.fd)
			require.Equal(t, tc.want, status.Code(err), "%v", err)
			if tc.want == codes.PermissionDenied {
				require.Contains(t, err.Error(), "tier routing")
			}
		})
	}

	for _, tc := range []struct {
		typ  string
		want codes.Code
	}{
		{arrowsql.BeginTransactionActionType, codes.PermissionDenied},
		{arrowsql.EndTransactionActionType, codes.PermissionDenied},
		{arrowsql.BeginSavepointActionType, codes.PermissionDenied},
		{arrowsql.EndSavepointActionType, codes.PermissionDenied},
		{arrowsql.CreatePreparedSubstraitPlanActionType, codes.PermissionDenied},
		{arrowsql.CancelQueryActionType, codes.Unimplemented},
		{flight.CancelFlightInfoActionType, codes.Unimplemented},
		{flight.SetSessionOptionsActionType, codes.Unimplemented},
		{flight.CloseSessionActionType, codes.Unimplemented},
		{"DropEverything", codes.InvalidArgument},
	} {
		t.Run("DoAction "+tc.typ, func(t *testing.T) {
			err := act(ctx, cl.Client, &flight.Action{Type: tc.typ, Body: garbage})
			require.Equal(t, tc.want, status.Code(err), "%v", err)
			require.Contains(t, err.Error(), tc.typ)
			if tc.want == codes.PermissionDenied {
				require.Contains(t, err.Error(), "tier routing")
			}
		})
	}
	t.Run("DoAction with a malformed body", func(t *testing.T) {
		err := act(ctx, cl.Client, &flight.Action{Type: arrowsql.CreatePreparedStatementActionType, Body: garbage})
		require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	})

	t.Run("the server still answers", func(t *testing.T) {
		info, err := cl.Execute(ctx, `SELECT count(DISTINCT tenant) FROM readings`)
		require.NoError(t, err)
		_, rows, _ := servetest.Fetch(t, ctx, cl, info)
		require.EqualValues(t, [][]any{{int64(1)}}, rows)
	})
}
