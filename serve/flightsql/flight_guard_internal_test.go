package flightsql

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A Flight call that panics, unary or streaming, ends with Internal to its
// client and its stack in the log. TestServersSurviveAPanickingRequest
// provokes a panic where a result stream is fed; no request is left that
// makes a call itself panic, so the interceptors are driven directly.
func TestFlightInterceptorsRecoverAPanic(t *testing.T) {
	var logged bytes.Buffer
	s := &Server{Log: slog.New(slog.NewTextHandler(&logged, nil))}
	check := func(t *testing.T, err error) {
		t.Helper()
		require.Equal(t, codes.Internal, status.Code(err), "%v", err)
		require.NotContains(t, err.Error(), "boom", "the panic value stays in the log")
		require.Contains(t, logged.String(), "flightsql: request panicked")
		require.Contains(t, logged.String(), "panic=boom")
		require.Contains(t, logged.String(), "runtime/debug.Stack", "the log carries the stack")
		logged.Reset()
	}
	t.Run("unary", func(t *testing.T) {
		_, err := s.recoverUnary(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/GetFlightInfo"},
			func(context.Context, any) (any, error) { panic("boom") })
		check(t, err)
	})
	t.Run("stream", func(t *testing.T) {
		err := s.recoverStream(nil, nil, &grpc.StreamServerInfo{FullMethod: "/DoGet"},
			func(any, grpc.ServerStream) error { panic("boom") })
		check(t, err)
	})
}
