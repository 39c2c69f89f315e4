package flightsql

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DefaultSessionIdle is how long a Flight SQL bearer token or prepared
// statement handle lives unused when Server.SessionIdle is unset.
const DefaultSessionIdle = 30 * time.Minute

// flightToken is a bearer token's user and when it was last used.
type flightToken struct {
	user string
	used time.Time
}

func (s *Server) idle() time.Duration {
	if s.SessionIdle > 0 {
		return s.SessionIdle
	}
	return DefaultSessionIdle
}

// issueToken returns a new bearer token for user, and forgets every token
// and prepared statement that has been idle too long: what a server holds
// is bounded by what its clients used lately.
func (s *Server) issueToken(user string) string {
	b := make([]byte, 24)
	rand.Read(b)
	token := hex.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(time.Now())
	s.tokens[token] = &flightToken{user: user, used: time.Now()}
	return token
}

// sweep forgets what has been idle longer than the limit; the caller holds mu.
func (s *Server) sweep(now time.Time) {
	for k, t := range s.tokens {
		if now.Sub(t.used) > s.idle() {
			delete(s.tokens, k)
		}
	}
	for k, p := range s.prepared {
		if now.Sub(p.used) > s.idle() {
			delete(s.prepared, k)
		}
	}
}

// bearer is the user of a bearer token still alive, which its use keeps alive.
func (s *Server) bearer(token string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[token]
	now := time.Now()
	if ok && now.Sub(t.used) > s.idle() {
		delete(s.tokens, token)
		return "", status.Error(codes.Unauthenticated, fmt.Sprintf("bearer token expired: unused for more than %s; authenticate again (Handshake)", s.idle()))
	}
	if !ok {
		return "", status.Error(codes.Unauthenticated, "unknown bearer token")
	}
	t.used = now
	return t.user, nil
}

// keepPrepared stores a prepared statement under a new handle.
func (s *Server) keepPrepared(p *flightPrepared) string {
	b := make([]byte, 16)
	rand.Read(b)
	handle := hex.EncodeToString(b)
	p.used = time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(p.used)
	s.prepared[handle] = p
	return handle
}

// preparedFor is the caller's prepared statement of handle, still alive,
// which its use keeps alive.
func (s *Server) preparedFor(ctx context.Context, handle []byte) (*flightPrepared, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.prepared[string(handle)]
	if !ok || p.user != userOf(ctx) {
		return nil, status.Error(codes.NotFound, "no such prepared statement")
	}
	now := time.Now()
	if now.Sub(p.used) > s.idle() {
		delete(s.prepared, string(handle))
		return nil, status.Error(codes.NotFound, fmt.Sprintf("prepared statement expired: unused for more than %s; prepare it again", s.idle()))
	}
	p.used = now
	return p, nil
}

// errFlightTimeout is the cause of a Flight statement stopped by its
// statement_timeout.
var errFlightTimeout = errors.New("canceling statement due to statement timeout")

// statementTimeout is the Flight SQL statement_timeout of ctx's user: the
// user's [[users]] statement_timeout, else the server's.
func (s *Server) statementTimeout(ctx context.Context) time.Duration {
	if us, ok := s.Users.Lookup(userOf(ctx)); ok && us.StatementTimeout > 0 {
		return us.StatementTimeout
	}
	return s.StatementTimeout
}

// withTimeout bounds a statement's context by the user's statement_timeout.
func (s *Server) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	d := s.statementTimeout(ctx)
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, d, errFlightTimeout)
}

// timeoutStatus is DeadlineExceeded naming the limit when ctx ended by its
// statement_timeout, else err.
func (s *Server) timeoutStatus(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), errFlightTimeout) {
		return status.Error(codes.DeadlineExceeded, fmt.Sprintf("%v (statement_timeout %s)", errFlightTimeout, s.statementTimeout(ctx)))
	}
	return err
}

// statusOf is a failed statement's gRPC status: its timeout, or grpcError.
func (s *Server) statusOf(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errFlightTimeout) {
		return s.timeoutStatus(ctx, err)
	}
	return grpcError(err)
}
