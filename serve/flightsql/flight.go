package flightsql

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/duckdb/duckdb-go/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/pgerr"
	"github.com/meterstore/meterstore/serve/access"
)

// Server is a read-only Arrow Flight SQL server over the unified view:
// statements (GetFlightInfo/DoGet), prepared statements with parameters,
// GetSqlInfo, GetCatalogs, GetDbSchemas, GetTables, GetTableTypes. Results are
// streamed as record batches from engine.Stream (memory bounded by one
// batch); each result's Arrow schema metadata carries its provenance
// (meterstore.watermark, meterstore.tiers, meterstore.read_mode, …).
//
// Every mutating call answers PermissionDenied naming why: a write here would
// bypass MeterStore's append, and with it the tier routing and the subject
// check (access.ReadOnlyReason). DoPut and DoAction are judged by their descriptor or
// action type before arrow-go reads their body (flightService).
//
// Authentication (when users are configured): HTTP Basic on any call, or a
// Handshake with Basic that returns a bearer token for later calls.
type Server struct {
	arrowsql.BaseServer
	Users *access.Users
	Log   *slog.Logger
	// Limits bound each statement's text, parameters and result (access.Limits).
	Limits access.Limits
	// StatementTimeout cancels a statement running longer, unless its user
	// has a [[users]] statement_timeout; 0 is none.
	StatementTimeout time.Duration
	// SessionIdle is how long a bearer token or prepared statement handle
	// lives unused; 0 is DefaultSessionIdle.
	SessionIdle time.Duration

	mu       sync.Mutex
	tokens   map[string]*flightToken // bearer token → user (flight_expiry.go)
	prepared map[string]*flightPrepared
}

type flightPrepared struct {
	user string
	sql  string
	args []any
	used time.Time // last use (flight_expiry.go)
}

type flightUserKey struct{}

const anonymous = "anonymous"

// NewServer returns a server ready for Serve.
func NewServer(users *access.Users, log *slog.Logger) (*Server, error) {
	s := &Server{Users: users, Log: log, tokens: map[string]*flightToken{}, prepared: map[string]*flightPrepared{}}
	s.Alloc = memory.DefaultAllocator
	for id, v := range map[arrowsql.SqlInfo]any{
		arrowsql.SqlInfoFlightSqlServerName:         "MeterStore",
		arrowsql.SqlInfoFlightSqlServerVersion:      access.ServerVersion,
		arrowsql.SqlInfoFlightSqlServerArrowVersion: "18",
		arrowsql.SqlInfoFlightSqlServerReadOnly:     true,
		arrowsql.SqlInfoFlightSqlServerSql:          true,
		arrowsql.SqlInfoFlightSqlServerSubstrait:    false,
		arrowsql.SqlInfoFlightSqlServerTransaction:  int32(0), // none
		arrowsql.SqlInfoFlightSqlServerCancel:       false,
	} {
		if err := s.RegisterSqlInfo(id, v); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Serve runs the gRPC server on ln until ctx ends (then stops gracefully:
// running streams finish, for at most 10 s).
func (s *Server) Serve(ctx context.Context, ln net.Listener, tlsCfg *tls.Config) error {
	opts := []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(s.recoverUnary, s.unaryAuth),
		grpc.ChainStreamInterceptor(s.recoverStream, s.streamAuth),
	}
	if tlsCfg != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsCfg)))
	}
	gs := grpc.NewServer(opts...)
	flight.RegisterFlightServiceServer(gs, flightService{arrowsql.NewFlightServer(s)})
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			t := time.AfterFunc(10*time.Second, gs.Stop)
			gs.GracefulStop()
			t.Stop()
		case <-done:
		}
	}()
	err := gs.Serve(ln)
	close(done)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (s *Server) log() *slog.Logger {
	return access.OrDiscard(s.Log)
}

// authenticate resolves the caller from the authorization header; on a
// Handshake with Basic credentials it also issues a bearer token.
func (s *Server) authenticate(ctx context.Context, method string) (context.Context, string, error) {
	if !s.Users.Enabled() {
		return context.WithValue(ctx, flightUserKey{}, anonymous), "", nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	var scheme, cred string
	if v := md.Get("authorization"); len(v) > 0 {
		scheme, cred, _ = strings.Cut(strings.TrimSpace(v[0]), " ")
		cred = strings.TrimSpace(cred)
	}
	switch {
	case strings.EqualFold(scheme, "basic"):
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			raw, err = base64.RawStdEncoding.DecodeString(cred)
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if err != nil || !ok || !s.Users.Login(ctx, user, pass, peerAddr(ctx)) {
			return nil, "", status.Error(codes.Unauthenticated, "invalid user name or password")
		}
		token := ""
		if strings.HasSuffix(method, "/Handshake") {
			token = s.issueToken(user)
		}
		return context.WithValue(ctx, flightUserKey{}, user), token, nil
	case strings.EqualFold(scheme, "bearer"):
		user, err := s.bearer(cred)
		if err != nil {
			return nil, "", err
		}
		return context.WithValue(ctx, flightUserKey{}, user), "", nil
	}
	return nil, "", status.Error(codes.Unauthenticated, "authentication required (Basic, or a bearer token from Handshake)")
}

func (s *Server) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	ctx, _, err := s.authenticate(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	return h(ctx, req)
}

type authedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (a *authedStream) Context() context.Context { return a.ctx }

func (s *Server) streamAuth(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx, token, err := s.authenticate(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	if token != "" {
		md := metadata.Pairs("authorization", "Bearer "+token)
		ss.SetHeader(md)
		ss.SetTrailer(md)
	}
	return h(srv, &authedStream{ServerStream: ss, ctx: ctx})
}

func userOf(ctx context.Context) string {
	u, _ := ctx.Value(flightUserKey{}).(string)
	return u
}

func (s *Server) session(ctx context.Context) (*engine.Engine, error) {
	e, err := s.Users.Session(userOf(ctx))
	if err != nil {
		return nil, status.Error(codes.PermissionDenied, err.Error())
	}
	return e, nil
}

// grpcError maps an engine error to a gRPC status. A database that cannot be
// reached is Unavailable, the code clients retry: the statement is not wrong.
func grpcError(err error) error {
	var parse *engine.ParseError
	switch {
	case err == nil:
		return nil
	case limitStatus(err) != nil:
		return limitStatus(err)
	case errors.Is(err, engine.ErrWrite):
		return status.Errorf(codes.PermissionDenied, "read-only: %v (%s)", err, access.ReadOnlyReason)
	case errors.Is(err, engine.ErrNotAQuery), errors.Is(err, engine.ErrScope):
		return status.Error(codes.PermissionDenied, err.Error())
	case errors.Is(err, engine.ErrBoundaryMoved):
		return status.Error(codes.Aborted, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case pgerr.Unavailable(err):
		return status.Error(codes.Unavailable, err.Error())
	case errors.As(err, &parse):
		return status.Error(codes.InvalidArgument, err.Error())
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codes.InvalidArgument, err.Error())
}

// describeSchema is the Arrow schema a statement will have, with the
// provenance the plan read: engine.Stream's own encoding, so the FlightInfo
// and the DoGet stream agree key for key.
func (s *Server) describeSchema(ctx context.Context, e *engine.Engine, sql string, args []any) (*arrow.Schema, error) {
	if err := s.Limits.CheckStatement(sql); err != nil {
		return nil, err
	}
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	d, err := e.Describe(ctx, sql, args...)
	if err != nil {
		return nil, s.timeoutStatus(ctx, err)
	}
	return d.ArrowSchema(), nil
}

func (s *Server) flightInfo(schema *arrow.Schema, desc *flight.FlightDescriptor, ticket []byte) *flight.FlightInfo {
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, s.Alloc),
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: ticket}}},
		TotalRecords:     -1,
		TotalBytes:       -1,
	}
}

// GetFlightInfoStatement plans the statement (refusing anything but a query)
// and returns a ticket carrying it.
func (s *Server) GetFlightInfoStatement(ctx context.Context, q arrowsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	e, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	schema, err := s.describeSchema(ctx, e, q.GetQuery(), nil)
	if err != nil {
		return nil, grpcError(err)
	}
	ticket, err := arrowsql.CreateStatementQueryTicket([]byte(q.GetQuery()))
	if err != nil {
		return nil, err
	}
	return s.flightInfo(schema, desc, ticket), nil
}

// GetSchemaStatement returns a statement's schema without running it.
func (s *Server) GetSchemaStatement(ctx context.Context, q arrowsql.StatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	e, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	schema, err := s.describeSchema(ctx, e, q.GetQuery(), nil)
	if err != nil {
		return nil, grpcError(err)
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(schema, s.Alloc)}, nil
}

// DoGetStatement runs the statement of a ticket and streams its batches.
func (s *Server) DoGetStatement(ctx context.Context, t arrowsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.stream(ctx, string(t.GetStatementHandle()), nil)
}

func (s *Server) stream(ctx context.Context, sql string, args []any) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	e, err := s.session(ctx)
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	if err := s.Limits.CheckStatement(sql); err != nil {
		return nil, nil, grpcError(err)
	}
	slot, err := s.Users.TakeSlot(userOf(ctx))
	if err != nil {
		return nil, nil, grpcError(err)
	}
	sctx, cancel := s.withTimeout(ctx)
	st, err := e.Stream(sctx, sql, args...)
	if err != nil {
		slot()
		cancel()
		access.StatementLog(s.Log, "flightsql", userOf(ctx), sql, nil, 0, time.Since(start), err)
		return nil, nil, s.statusOf(sctx, err)
	}
	ch := make(chan flight.StreamChunk)
	go func() {
		defer close(ch)
		defer s.recoverChunks(ctx, ch)
		var rows int64
		var serr error
		defer func() {
			cerr := st.Close()
			slot()
			cancel()
			if serr == nil {
				serr = cerr
			}
			access.StatementLog(s.Log, "flightsql", userOf(ctx), sql, st.Provenance(), rows, time.Since(start), serr)
		}()
		for st.Next() {
			rec := st.Record()
			if err := s.Limits.CheckRows(rows + rec.NumRows() - 1); err != nil {
				serr = err // a batch that would cross the bound is not sent
				break
			}
			rec.Retain()
			select {
			case ch <- flight.StreamChunk{Data: rec}:
				rows += rec.NumRows()
			case <-ctx.Done():
				rec.Release()
				serr = ctx.Err()
				return
			}
		}
		if err := st.Err(); err != nil && serr == nil {
			serr = err
		}
		if serr != nil {
			select {
			case ch <- flight.StreamChunk{Err: s.statusOf(sctx, serr)}:
			case <-ctx.Done():
			}
		}
	}()
	return st.Schema, ch, nil
}

// recoverChunks ends a result stream whose feeding panicked with an Internal
// error to its client: the feeding runs outside the call's goroutine, where
// the interceptors cannot recover it.
func (s *Server) recoverChunks(ctx context.Context, ch chan<- flight.StreamChunk) {
	p := recover()
	if p == nil {
		return
	}
	select {
	case ch <- flight.StreamChunk{Err: panicStatus(s.log(), p, "DoGet")}:
	case <-ctx.Done():
	}
}

// CreatePreparedStatement plans the statement (refusing non-queries) and
// keeps it under a handle for this user.
func (s *Server) CreatePreparedStatement(ctx context.Context, req arrowsql.ActionCreatePreparedStatementRequest) (arrowsql.ActionCreatePreparedStatementResult, error) {
	var res arrowsql.ActionCreatePreparedStatementResult
	if len(req.GetTransactionId()) > 0 {
		return res, status.Error(codes.InvalidArgument, "transactions are not supported (read-only)")
	}
	e, err := s.session(ctx)
	if err != nil {
		return res, err
	}
	if err := s.Limits.CheckStatement(req.GetQuery()); err != nil {
		return res, grpcError(err)
	}
	n := access.ParamCount(req.GetQuery())
	schema, err := s.describeSchema(ctx, e, req.GetQuery(), make([]any, n))
	if err != nil {
		return res, grpcError(err)
	}
	handle := s.keepPrepared(&flightPrepared{user: userOf(ctx), sql: req.GetQuery()})
	params := make([]arrow.Field, n)
	for i := range params {
		params[i] = arrow.Field{Name: fmt.Sprintf("$%d", i+1), Type: arrow.BinaryTypes.String, Nullable: true}
	}
	res.Handle, res.DatasetSchema, res.ParameterSchema = []byte(handle), schema, arrow.NewSchema(params, nil)
	f := false
	res.IsUpdate = &f
	return res, nil
}

// ClosePreparedStatement forgets a handle.
func (s *Server) ClosePreparedStatement(ctx context.Context, req arrowsql.ActionClosePreparedStatementRequest) error {
	if _, err := s.preparedFor(ctx, req.GetPreparedStatementHandle()); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.prepared, string(req.GetPreparedStatementHandle()))
	s.mu.Unlock()
	return nil
}

// DoPutPreparedStatementQuery binds parameters: the first row of the batch,
// one column per $n.
func (s *Server) DoPutPreparedStatementQuery(ctx context.Context, cmd arrowsql.PreparedStatementQuery, r flight.MessageReader, _ flight.MetadataWriter) ([]byte, error) {
	p, err := s.preparedFor(ctx, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	var args []any
	for r.Next() {
		rec := r.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		if args != nil || rec.NumRows() > 1 {
			return nil, status.Error(codes.InvalidArgument, "bind one row of parameters per execution")
		}
		for i := 0; i < int(rec.NumCols()); i++ {
			args = append(args, arrowValue(rec.Column(i), 0))
		}
	}
	if err := r.Err(); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "read the parameters (an Arrow IPC stream): %v", err)
	}
	s.mu.Lock()
	p.args = args
	s.mu.Unlock()
	return cmd.GetPreparedStatementHandle(), nil
}

func arrowValue(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch c := a.(type) {
	case *array.String:
		return c.Value(i)
	case *array.Int64:
		return c.Value(i)
	case *array.Int32:
		return c.Value(i)
	case *array.Float64:
		return c.Value(i)
	case *array.Boolean:
		return c.Value(i)
	case *array.Timestamp:
		return timestampParam(c, i)
	case *array.Date32:
		return c.Value(i).ToTime()
	case *array.Decimal128:
		dt := c.DataType().(*arrow.Decimal128Type)
		return c.Value(i).ToString(dt.Scale)
	}
	return a.ValueStr(i)
}

// timestampParam reads an Arrow timestamp parameter as the Arrow format
// defines it: with a time zone it is an instant; without one it is a wall
// time (what ADBC binds a naive datetime as), which the engine reads in the
// session's zone exactly as it reads the same literal, as pgwire reads a
// timestamp parameter (OID 1114). Read as UTC, a naive window would shift by
// the zone's offset in a deployment whose time_zone is not UTC.
func timestampParam(c *array.Timestamp, i int) any {
	typ := c.DataType().(*arrow.TimestampType)
	t := c.Value(i).ToTime(typ.Unit)
	if typ.TimeZone == "" {
		return duckdb.Typed(t, duckdb.TYPE_TIMESTAMP)
	}
	return t.UTC()
}

// GetFlightInfoPreparedStatement returns a ticket for the bound statement.
func (s *Server) GetFlightInfoPreparedStatement(ctx context.Context, cmd arrowsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	p, err := s.preparedFor(ctx, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	e, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	args := p.args
	if args == nil {
		args = make([]any, access.ParamCount(p.sql))
	}
	schema, err := s.describeSchema(ctx, e, p.sql, args)
	if err != nil {
		return nil, grpcError(err)
	}
	return s.flightInfo(schema, desc, desc.Cmd), nil
}

// DoGetPreparedStatement runs the bound statement.
func (s *Server) DoGetPreparedStatement(ctx context.Context, cmd arrowsql.PreparedStatementQuery) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	p, err := s.preparedFor(ctx, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	args := append([]any(nil), p.args...)
	s.mu.Unlock()
	return s.stream(ctx, p.sql, args)
}

// catalogName is what GetCatalogs/GetTables report.
const catalogName = "meterstore"

func (s *Server) GetFlightInfoCatalogs(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.flightInfo(schema_ref.Catalogs, desc, desc.Cmd), nil
}

func (s *Server) DoGetCatalogs(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(s.Alloc, schema_ref.Catalogs)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(catalogName)
	return oneBatch(schema_ref.Catalogs, b.NewRecordBatch())
}

func (s *Server) GetFlightInfoSchemas(_ context.Context, _ arrowsql.GetDBSchemas, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.flightInfo(schema_ref.DBSchemas, desc, desc.Cmd), nil
}

func (s *Server) DoGetDBSchemas(_ context.Context, cmd arrowsql.GetDBSchemas) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(s.Alloc, schema_ref.DBSchemas)
	defer b.Release()
	if catalogMatches(cmd.GetCatalog()) && likeMatch(cmd.GetDBSchemaFilterPattern(), "main") {
		b.Field(0).(*array.StringBuilder).Append(catalogName)
		b.Field(1).(*array.StringBuilder).Append("main")
	}
	return oneBatch(schema_ref.DBSchemas, b.NewRecordBatch())
}

func (s *Server) GetFlightInfoTableTypes(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.flightInfo(schema_ref.TableTypes, desc, desc.Cmd), nil
}

func (s *Server) DoGetTableTypes(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(s.Alloc, schema_ref.TableTypes)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append("VIEW")
	return oneBatch(schema_ref.TableTypes, b.NewRecordBatch())
}

func (s *Server) GetFlightInfoTables(_ context.Context, cmd arrowsql.GetTables, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	sc := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		sc = schema_ref.TablesWithIncludedSchema
	}
	return s.flightInfo(sc, desc, desc.Cmd), nil
}

// DoGetTables lists the session's relations (both names of every table) as views.
func (s *Server) DoGetTables(ctx context.Context, cmd arrowsql.GetTables) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	e, err := s.session(ctx)
	if err != nil {
		return nil, nil, err
	}
	sc := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		sc = schema_ref.TablesWithIncludedSchema
	}
	typeOK := len(cmd.GetTableTypes()) == 0
	for _, t := range cmd.GetTableTypes() {
		typeOK = typeOK || strings.EqualFold(t, "VIEW")
	}
	b := array.NewRecordBuilder(s.Alloc, sc)
	defer b.Release()
	if typeOK && catalogMatches(cmd.GetCatalog()) && likeMatch(cmd.GetDBSchemaFilterPattern(), "main") {
		for _, t := range e.Tables() {
			for _, name := range []string{t.ResolvedName(), t.Name()} {
				if !likeMatch(cmd.GetTableNameFilterPattern(), name) {
					continue
				}
				b.Field(0).(*array.StringBuilder).Append(catalogName)
				b.Field(1).(*array.StringBuilder).Append("main")
				b.Field(2).(*array.StringBuilder).Append(name)
				b.Field(3).(*array.StringBuilder).Append("VIEW")
				if cmd.GetIncludeSchema() {
					ts, err := s.describeSchema(ctx, e, "SELECT * FROM "+meterstore.QuoteIdent(name), nil)
					if err != nil {
						return nil, nil, grpcError(err)
					}
					b.Field(4).(*array.BinaryBuilder).Append(flight.SerializeSchema(ts, s.Alloc))
				}
			}
		}
	}
	return oneBatch(sc, b.NewRecordBatch())
}

func catalogMatches(c *string) bool { return c == nil || *c == "" || *c == catalogName }

// likeMatch applies a Flight SQL filter pattern (SQL LIKE: % and _).
func likeMatch(pattern *string, s string) bool {
	if pattern == nil {
		return true
	}
	return like(*pattern, s)
}

func like(p, s string) bool {
	if p == "" {
		return s == ""
	}
	switch p[0] {
	case '%':
		for i := 0; i <= len(s); i++ {
			if like(p[1:], s[i:]) {
				return true
			}
		}
		return false
	case '_':
		return s != "" && like(p[1:], s[1:])
	}
	return s != "" && strings.EqualFold(p[:1], s[:1]) && like(p[1:], s[1:])
}

func oneBatch(sc *arrow.Schema, rec arrow.RecordBatch) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	ch := make(chan flight.StreamChunk, 1)
	ch <- flight.StreamChunk{Data: rec}
	close(ch)
	return sc, ch, nil
}

var errReadOnly = status.Error(codes.PermissionDenied, "read-only: "+access.ReadOnlyReason)

// The mutating calls: refused, naming why.

func (s *Server) DoPutCommandStatementUpdate(context.Context, arrowsql.StatementUpdate) (int64, error) {
	return 0, errReadOnly
}

func (s *Server) DoPutCommandSubstraitPlan(context.Context, arrowsql.StatementSubstraitPlan) (int64, error) {
	return 0, errReadOnly
}

func (s *Server) DoPutPreparedStatementUpdate(context.Context, arrowsql.PreparedStatementUpdate, flight.MessageReader) (int64, error) {
	return 0, errReadOnly
}

func (s *Server) DoPutCommandStatementIngest(context.Context, arrowsql.StatementIngest, flight.MessageReader) (int64, error) {
	return 0, errReadOnly
}

func (s *Server) BeginTransaction(context.Context, arrowsql.ActionBeginTransactionRequest) ([]byte, error) {
	return nil, status.Error(codes.PermissionDenied, "transactions are not offered: "+access.ReadOnlyReason)
}

func (s *Server) BeginSavepoint(context.Context, arrowsql.ActionBeginSavepointRequest) ([]byte, error) {
	return nil, status.Error(codes.PermissionDenied, "savepoints are not offered: "+access.ReadOnlyReason)
}
