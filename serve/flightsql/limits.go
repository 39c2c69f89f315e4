package flightsql

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/meterstore/meterstore/serve/access"
)

// limitStatus is a refusal by one of the server's limits as a gRPC status, or
// nil.
func limitStatus(err error) error {
	var pe *access.Refusal
	if r := access.ResourceRefusal(err); r != nil {
		pe = r
	} else if !errors.As(err, &pe) || !strings.HasPrefix(pe.Code, "53") && !strings.HasPrefix(pe.Code, "54") {
		return nil
	}
	msg := pe.Message
	if pe.Hint != "" {
		msg += " — " + pe.Hint
	}
	return status.Error(codes.ResourceExhausted, msg)
}

// peerAddr is a gRPC call's remote address, "" when unknown.
func peerAddr(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return ""
}
