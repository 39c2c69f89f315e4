package flightsql

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/meterstore/meterstore/serve/access"
)

// flightService is the gRPC service: arrow-go's Flight SQL dispatcher, with
// the calls it must not see first judged here. arrow-go reads a DoPut's body
// before it looks at the command (and dereferences a missing descriptor), so
// a DoPut is judged by its first message's descriptor and a DoAction by its
// type before the library touches either body: only the calls a read-only
// server offers reach it.
type flightService struct{ flight.FlightServer }

// Handshake answers after the interceptor authenticated the caller (and set
// the bearer token header); the base server would answer Unimplemented.
func (flightService) Handshake(stream flight.FlightService_HandshakeServer) error {
	for {
		if _, err := stream.Recv(); err != nil {
			return nil
		}
	}
}

// DoPut admits one upload, binding a prepared query's parameters; every other
// command is refused before its body is read.
func (f flightService) DoPut(stream flight.FlightService_DoPutServer) error {
	first, err := stream.Recv()
	if errors.Is(err, io.EOF) {
		return status.Error(codes.InvalidArgument, "DoPut: the stream carries no message")
	}
	if err != nil {
		return err
	}
	if err := judgePut(first.GetFlightDescriptor()); err != nil {
		return err
	}
	return f.FlightServer.DoPut(&replayedPut{FlightService_DoPutServer: stream, first: first})
}

// judgePut accepts a descriptor carrying CommandPreparedStatementQuery.
func judgePut(desc *flight.FlightDescriptor) error {
	if desc == nil || desc.GetType() != flight.DescriptorCMD {
		return status.Error(codes.InvalidArgument, "DoPut: the first message must carry a Flight SQL command descriptor")
	}
	var cmd anypb.Any
	if err := proto.Unmarshal(desc.GetCmd(), &cmd); err != nil {
		return status.Errorf(codes.InvalidArgument, "DoPut: the descriptor's command is not a Flight SQL command: %v", err)
	}
	if cmd.MessageIs(&pb.CommandPreparedStatementQuery{}) {
		return nil
	}
	name := string(cmd.MessageName().Name())
	if name == "" {
		name = cmd.GetTypeUrl()
	}
	return status.Errorf(codes.PermissionDenied,
		"read-only: DoPut %s refused, only binding a prepared query's parameters is accepted (%s)", name, access.ReadOnlyReason)
}

// replayedPut hands the library the stream with its first message, which
// judgePut already read, put back in front.
type replayedPut struct {
	flight.FlightService_DoPutServer
	first *flight.FlightData
}

func (r *replayedPut) Recv() (*flight.FlightData, error) {
	if fd := r.first; fd != nil {
		r.first = nil
		return fd, nil
	}
	return r.FlightService_DoPutServer.Recv()
}

// Flight SQL action types by what a read-only server does with them.
var (
	// offeredActions reach the library.
	offeredActions = map[string]bool{
		arrowsql.CreatePreparedStatementActionType: true,
		arrowsql.ClosePreparedStatementActionType:  true,
	}
	// mutatingActions open or end a transaction, or carry a plan that may
	// write: refused naming the read-only rule.
	mutatingActions = map[string]bool{
		arrowsql.BeginTransactionActionType:            true,
		arrowsql.EndTransactionActionType:              true,
		arrowsql.BeginSavepointActionType:              true,
		arrowsql.EndSavepointActionType:                true,
		arrowsql.CreatePreparedSubstraitPlanActionType: true,
	}
	// unofferedActions are answered Unimplemented, as the library's base
	// server would, so clients that probe them carry on.
	unofferedActions = map[string]bool{
		arrowsql.CancelQueryActionType:       true,
		flight.CancelFlightInfoActionType:    true,
		flight.RenewFlightEndpointActionType: true,
		flight.SetSessionOptionsActionType:   true,
		flight.GetSessionOptionsActionType:   true,
		flight.CloseSessionActionType:        true,
	}
)

// DoAction passes the offered actions to the library and answers every other
// one by its type alone.
func (f flightService) DoAction(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	typ := a.GetType()
	switch {
	case offeredActions[typ]:
		return f.FlightServer.DoAction(a, stream)
	case mutatingActions[typ]:
		return status.Errorf(codes.PermissionDenied, "read-only: action %s refused (%s)", typ, access.ReadOnlyReason)
	case unofferedActions[typ]:
		return status.Errorf(codes.Unimplemented, "action %s is not offered by this server", typ)
	}
	return status.Errorf(codes.InvalidArgument, "unknown action %q", typ)
}

// recoverUnary ends a unary call that panicked with an Internal error to its
// client; the server keeps serving the others.
func (s *Server) recoverUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicStatus(s.log(), p, info.FullMethod)
		}
	}()
	return h(ctx, req)
}

// recoverStream is recoverUnary for streaming calls.
func (s *Server) recoverStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicStatus(s.log(), p, info.FullMethod)
		}
	}()
	return h(srv, ss)
}

func panicStatus(log *slog.Logger, p any, method string) error {
	return status.Error(codes.Internal, access.LogPanic(log, "flightsql", p, "method", method))
}
