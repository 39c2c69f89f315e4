package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/pgerr"
	"github.com/meterstore/meterstore/internal/sqltext"
	"github.com/meterstore/meterstore/serve/access"
)

// Server serves the unified view over the PostgreSQL wire protocol.
//
// Supported: the simple and the extended query protocol (named and unnamed
// statements and portals, $n parameters in text or binary format, binary or
// text results, Execute with a row limit → PortalSuspended), SSL negotiation
// (TLS when configured), SCRAM-SHA-256 against the configured users,
// BackendKeyData + CancelRequest, each statement's provenance at level LOG
// and in SHOW meterstore.provenance (pgmessages.go). Results stream row by
// row from engine.Rows, held back — in memory, then in a temporary file —
// until the statement has passed its boundary check, so that a statement that
// meets an archival is run again unseen; a result past the spool's limit
// (256 MiB on the wire) is sent as it comes from there on (pgretry.go).
//
// A statement's work ends with its client: a CancelRequest, its
// statement_timeout (StatementTimeout, the user's, or SET statement_timeout)
// or the client's connection closing cancels it, which interrupts DuckDB and
// the hot tier's scan (pgtimeout.go, pgclient.go).
//
// Refused with SQLSTATE 42501: everything the engine's gate refuses (anything
// but one SELECT); with 0A000 a SET TimeZone to another zone than the
// engine's (pgsettings.go). Accepted as no-ops: SET (but statement_timeout), RESET, DISCARD, DEALLOCATE, BEGIN,
// START TRANSACTION, COMMIT, ROLLBACK, END, ABORT (the session is read-only;
// SHOW answers from the reported parameters). See pgcatalog.go for the
// catalog queries answered by emulation, pgdialect.go for how a PostgreSQL
// client's statement is translated for the engine.
//
// At debug level Log records every statement as received (Query; Parse with
// its parameter types), each Execute's row limit, the statement as
// translated and every error sent: what a client really sends, which is how
// the client corpora in testdata were captured.
type Server struct {
	Users *access.Users
	TLS   *tls.Config // nil: SSLRequest is answered 'N'
	Log   *slog.Logger
	// StatementTimeout is every session's statement_timeout unless its user
	// has one ([[users]] statement_timeout) or it sets its own; 0 = none.
	StatementTimeout time.Duration
	// Limits bound each statement's text, parameters and result (access.Limits).
	Limits access.Limits

	// spoolLimit bounds the bytes of a result held back until its boundary
	// check, of which spoolMemory stay in memory (pgretry.go, pgspool.go); 0
	// is the default.
	spoolLimit  int64
	spoolMemory int

	mu       sync.Mutex
	sessions map[uint32]*pgSession
	wg       sync.WaitGroup
	open     atomic.Int64 // statements whose engine rows are open
}

// OpenStatements is the number of statements whose work in the engine has
// started and not ended: planning, running in DuckDB, or open as a portal or
// cursor. A cancelled statement leaves it only once DuckDB has stopped.
func (s *Server) OpenStatements() int { return int(s.open.Load()) }

// Serve accepts connections until ctx ends or the listener fails. On ctx's end
// it stops accepting, cancels running statements, closes the connections and
// waits for their handlers.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.Users == nil {
		return errors.New("pgwire: no users (use access.NewUsers, empty for loopback without authentication)")
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				s.wg.Wait()
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.wg.Wait()
			return err
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(ctx, c)
		}()
	}
}

func (s *Server) log() *slog.Logger {
	return access.OrDiscard(s.Log)
}

type pgSession struct {
	srv      *Server
	conn     net.Conn
	be       *pgproto3.Backend
	user     string
	database string
	appName  string
	eng      *engine.Engine
	pid      uint32
	secret   []byte
	m        *pgtype.Map
	loc      *time.Location // the session's time zone (the engine's)

	mu         sync.Mutex
	cancelStmt context.CancelCauseFunc // the running statement's (pgtimeout.go)
	armed      uint64                  // counts statement_timeout timers
	expired    error                   // set when the armed timer fired

	timeout, defaultTimeout time.Duration // statement_timeout: the session's, and what RESET restores

	started    time.Time // pg_stat_activity's backend_start (pgactivity.go)
	act        activity  // what the session runs, under mu
	describing bool      // a Describe is translating: pg_cancel_backend cancels nothing
	args       []any     // the bound parameters of the statement being translated

	minMessages, startMessages string // client_min_messages: the session's, and what RESET restores (pgmessages.go)
	startupZone                string // the TimeZone the startup message asked for ("" when none; pgsettings.go)
	lastProvenance             string // the provenance of the session's last statement

	stmts   map[string]*pgStatement
	portals map[string]*pgPortal
	inTx    bool
	tx      int  // counts BEGINs: which transaction a cursor was declared in
	failed  bool // an error in the extended protocol: skip until Sync
	cat     *pgCatalog
}

type pgStatement struct {
	sql       string
	paramOIDs []uint32
}

type pgPortal struct {
	stmt     *pgStatement
	args     []any
	formats  []int16
	rows     *engine.Rows // open once described or partly executed
	cols     []pgColumn
	static   *staticResult
	cancel   context.CancelFunc
	stop     context.CancelCauseFunc // cancel with a cause (pgtimeout.go)
	ctx      context.Context
	sent     int64
	started  time.Time
	prov     *engine.Provenance
	finished bool
	spool    spool // rows not yet sent (pgretry.go)
	flushed  bool  // rows of this portal have reached the client
	retries  int   // runs again after meeting an archival

	copy        *copyOut      // COPY … TO STDOUT (pgcopy.go)
	copyStarted bool          // its CopyOutResponse is sent
	open        *atomic.Int64 // the server's count while the rows are open
	slot        func()        // ends the statement's count against max_statements

	// A declared cursor (pgcursor.go): its DECLARE, WITH HOLD, the
	// transaction it was declared in, its scan buffer.
	declared   bool
	decl       string
	declaredAt time.Time
	hold       bool
	tx         int
	scan       []any
	// A FETCH or MOVE: its cursor and how many rows are still to go (-1: all).
	source *pgPortal
	left   int64
	move   bool
}

func (s *Server) handle(ctx context.Context, c net.Conn) {
	defer c.Close()
	connCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	sess := &pgSession{srv: s, conn: c, m: pgtype.NewMap(), stmts: map[string]*pgStatement{}, portals: map[string]*pgPortal{}}
	sess.be = newBackend(c)
	defer sess.recoverPanic()
	if err := sess.startup(connCtx); err != nil {
		if !errors.Is(err, io.EOF) && !errors.Is(err, errCancelRequest) {
			s.log().Debug("pgwire: startup failed", "remote", c.RemoteAddr().String(), "err", err)
		}
		return
	}
	defer s.unregister(sess)
	defer sess.closePortals()
	sess.be = pgproto3.NewBackend(watchClient(sess.conn, func() { cancel(errClientGone) }), sess.conn)
	sess.be.SetMaxBodyLen(maxMessageBody)
	if err := sess.loop(connCtx); err != nil && !errors.Is(err, io.EOF) && connCtx.Err() == nil {
		s.log().Debug("pgwire: connection ended", "user", sess.user, "err", err)
	}
}

var errCancelRequest = errors.New("cancel request")

// recoverPanic ends a connection whose handling panicked: the stack goes to
// the log, the client gets a FATAL error, and the server keeps serving the
// other connections. The session's state is unknown after a panic, so the
// connection is not resumed.
func (sess *pgSession) recoverPanic() {
	if p := recover(); p != nil {
		msg := access.LogPanic(sess.srv.log(), "pgwire", p, "user", sess.user, "remote", sess.conn.RemoteAddr().String())
		sess.fatal("XX000", msg)
	}
}

func (s *Server) register(sess *pgSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions == nil {
		s.sessions = map[uint32]*pgSession{}
	}
	for {
		var b [8]byte
		rand.Read(b[:])
		sess.pid = binary.BigEndian.Uint32(b[:4]) & 0x7fffffff
		sess.secret = append([]byte(nil), b[4:]...)
		if _, taken := s.sessions[sess.pid]; !taken && sess.pid != 0 {
			break
		}
	}
	s.sessions[sess.pid] = sess
}

func (s *Server) unregister(sess *pgSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[sess.pid] == sess {
		delete(s.sessions, sess.pid)
	}
}

// cancel handles a CancelRequest: the key must match, then the session's
// running statement's context is cancelled.
func (s *Server) cancel(pid uint32, secret []byte) {
	s.mu.Lock()
	sess := s.sessions[pid]
	s.mu.Unlock()
	if sess == nil || subtle.ConstantTimeCompare(sess.secret, secret) != 1 {
		return
	}
	sess.mu.Lock()
	if sess.cancelStmt != nil {
		sess.cancelStmt(errUserCancel)
	}
	sess.mu.Unlock()
	s.log().Info("pgwire: statement cancelled by request", "user", sess.user)
}

func (sess *pgSession) startup(ctx context.Context) error {
	tlsDone := false
	for {
		msg, err := sess.be.ReceiveStartupMessage()
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if sess.srv.TLS == nil || tlsDone {
				if _, err := sess.conn.Write([]byte{'N'}); err != nil {
					return err
				}
				continue
			}
			if _, err := sess.conn.Write([]byte{'S'}); err != nil {
				return err
			}
			tc := tls.Server(sess.conn, sess.srv.TLS)
			if err := tc.HandshakeContext(ctx); err != nil {
				return err
			}
			sess.conn, tlsDone = tc, true
			sess.be = newBackend(tc)
		case *pgproto3.GSSEncRequest:
			if _, err := sess.conn.Write([]byte{'N'}); err != nil {
				return err
			}
		case *pgproto3.CancelRequest:
			sess.srv.cancel(m.ProcessID, m.SecretKey)
			return errCancelRequest
		case *pgproto3.StartupMessage:
			if sess.srv.TLS != nil && !tlsDone && sess.srv.Users.Enabled() && !isLoopback(sess.conn.RemoteAddr()) {
				return sess.fatal("28000", "TLS is required from a non-loopback address (sslmode=require)")
			}
			sess.user = m.Parameters["user"]
			sess.database = m.Parameters["database"]
			if sess.database == "" {
				sess.database = sess.user
			}
			sess.appName = m.Parameters["application_name"]
			level, err := startupMessageLevel(m.Parameters)
			if err != nil {
				return sess.fatal("22023", err.Error())
			}
			sess.minMessages, sess.startMessages = level, level
			sess.startupZone = startupSetting(m.Parameters, "TimeZone")
			return sess.authenticate(ctx)
		default:
			return fmt.Errorf("unexpected startup message %T", msg)
		}
	}
}

// maxMessageBody caps one frontend message's body. pgproto3 allocates the
// length a message header announces before reading the body, so without a cap
// five bytes claiming 2 GiB cost 2 GiB; the largest message a client has a
// reason to send is a statement or a Bind of its parameters.
const maxMessageBody = 64 << 20

func newBackend(c net.Conn) *pgproto3.Backend {
	be := pgproto3.NewBackend(c, c)
	be.SetMaxBodyLen(maxMessageBody)
	return be
}

// receive reads the next frontend message. A message over maxMessageBody ends
// the connection with an error naming the limit: its body is not read, so the
// stream cannot be resumed.
func (sess *pgSession) receive() (pgproto3.FrontendMessage, error) {
	msg, err := sess.be.Receive()
	var tooLong *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &tooLong) {
		return nil, sess.fatal("08P01", fmt.Sprintf("a message of %d bytes exceeds the server's limit of %d bytes (%d MiB) per message",
			tooLong.ActualBodyLen, maxMessageBody, maxMessageBody>>20))
	}
	return msg, err
}

func isLoopback(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	return a.Network() == "unix"
}

func (sess *pgSession) fatal(code, msg string) error {
	sess.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: code, Message: msg})
	sess.be.Flush()
	return errors.New(msg)
}

func (sess *pgSession) authenticate(ctx context.Context) error {
	users := sess.srv.Users
	if users.Enabled() {
		remote := sess.conn.RemoteAddr().String()
		if err := users.Throttle.Wait(ctx, sess.user, remote); err != nil {
			return err
		}
		us, ok := users.Lookup(sess.user)
		password := us.Password
		if !ok {
			// Run the exchange against a random password so an unknown user
			// fails the same way as a wrong password.
			password = fmt.Sprintf("%x", time.Now().UnixNano())
		}
		sc := newSCRAM(password)
		sess.be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256"}})
		if err := sess.be.Flush(); err != nil {
			return err
		}
		if err := sess.be.SetAuthType(pgproto3.AuthTypeSASL); err != nil {
			return err
		}
		msg, err := sess.receive()
		if err != nil {
			return err
		}
		init, isInit := msg.(*pgproto3.SASLInitialResponse)
		if !isInit || init.AuthMechanism != "SCRAM-SHA-256" {
			return sess.fatal("28000", "SCRAM-SHA-256 authentication is required")
		}
		sf, err := sc.first(init.Data)
		if err != nil {
			return sess.fatal("28000", err.Error())
		}
		sess.be.Send(&pgproto3.AuthenticationSASLContinue{Data: sf})
		if err := sess.be.Flush(); err != nil {
			return err
		}
		if err := sess.be.SetAuthType(pgproto3.AuthTypeSASLContinue); err != nil {
			return err
		}
		msg, err = sess.receive()
		if err != nil {
			return err
		}
		resp, isResp := msg.(*pgproto3.SASLResponse)
		if !isResp {
			return sess.fatal("28000", "unexpected message during SCRAM authentication")
		}
		final, err := sc.final(resp.Data)
		if err != nil || !ok {
			users.Throttle.Failed(sess.user, remote)
			sess.srv.log().Warn("pgwire: authentication failed", "user", sess.user, "remote", remote)
			return sess.fatal("28P01", fmt.Sprintf("password authentication failed for user %q", sess.user))
		}
		users.Throttle.Succeeded(sess.user, remote)
		sess.be.Send(&pgproto3.AuthenticationSASLFinal{Data: final})
	}
	eng, err := users.Session(sess.user)
	if err != nil {
		return sess.fatal("28000", err.Error())
	}
	sess.eng = eng
	sess.defaultTimeout = sess.srv.StatementTimeout
	if us, ok := users.Lookup(sess.user); ok && us.StatementTimeout > 0 {
		sess.defaultTimeout = us.StatementTimeout
	}
	sess.timeout = sess.defaultTimeout
	if sess.loc, err = time.LoadLocation(eng.TimeZone()); err != nil {
		return sess.fatal("XX000", fmt.Sprintf("the engine's time zone %q: %v", eng.TimeZone(), err))
	}
	sess.be.Send(&pgproto3.AuthenticationOk{})
	for k, v := range sess.parameters() {
		if reportedParameters[k] {
			sess.be.Send(&pgproto3.ParameterStatus{Name: k, Value: v})
		}
	}
	if w := sess.startupZoneWarning(sess.startupZone); w != nil && sess.sends("warning") {
		sess.be.Send(w)
	}
	sess.started = time.Now()
	sess.setActivity("idle", "")
	sess.srv.register(sess)
	sess.be.Send(&pgproto3.BackendKeyData{ProcessID: sess.pid, SecretKey: sess.secret})
	sess.be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	return sess.be.Flush()
}

var reportedParameters = map[string]bool{
	"server_version": true, "server_encoding": true, "client_encoding": true, "DateStyle": true,
	"TimeZone": true, "integer_datetimes": true, "standard_conforming_strings": true, "IntervalStyle": true,
	"is_superuser": true, "session_authorization": true, "application_name": true,
	"default_transaction_read_only": true, "in_hot_standby": true,
}

// parameters are the session's settings as SHOW and current_setting see them.
func (sess *pgSession) parameters() map[string]string {
	return map[string]string{
		"server_version": access.ServerVersion + " (MeterStore)", "server_version_num": "150000",
		"server_encoding": "UTF8", "client_encoding": "UTF8", "DateStyle": "ISO, MDY", "TimeZone": sess.eng.TimeZone(),
		"integer_datetimes": "on", "standard_conforming_strings": "on", "IntervalStyle": "postgres",
		"is_superuser": "off", "session_authorization": sess.user, "application_name": sess.appName,
		"default_transaction_read_only": "on", "transaction_read_only": "on", "in_hot_standby": "off",
		"search_path": "public", "transaction_isolation": "repeatable read",
		"default_transaction_isolation": "repeatable read", "max_identifier_length": "63",
		"lc_collate": "C", "lc_ctype": "C", "max_index_keys": "32", "block_size": "8192",
		"statement_timeout":   formatTimeout(sess.timeout),
		"client_min_messages": sess.minMessages, provenanceSetting: sess.lastProvenance,
	}
}

func (sess *pgSession) closePortals() {
	for name, p := range sess.portals {
		p.close()
		delete(sess.portals, name)
	}
}

func (sess *pgSession) txStatus() byte {
	if sess.inTx {
		return 'T'
	}
	return 'I'
}

func (sess *pgSession) loop(ctx context.Context) error {
	for {
		msg, err := sess.receive()
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.Query:
			sess.srv.log().Debug("pgwire: query", "user", sess.user, "sql", m.String)
			sess.failed = false
			sess.setActivity("active", m.String)
			sess.simpleQuery(ctx, m.String)
			sess.setActivity("idle", "")
			sess.be.Send(&pgproto3.ReadyForQuery{TxStatus: sess.txStatus()})
		case *pgproto3.Parse:
			sess.srv.log().Debug("pgwire: parse", "user", sess.user, "name", m.Name, "param_oids", m.ParameterOIDs, "sql", m.Query)
			if sess.failed {
				continue
			}
			if err := checkParse(sess.srv.Limits, m); err != nil {
				sess.extError(err)
				continue
			}
			if m.Name != "" {
				if _, exists := sess.stmts[m.Name]; exists {
					sess.extError(&pgError{code: "42P05", msg: fmt.Sprintf("prepared statement %q already exists", m.Name)})
					continue
				}
			}
			sess.stmts[m.Name] = &pgStatement{sql: m.Query, paramOIDs: m.ParameterOIDs}
			sess.be.Send(&pgproto3.ParseComplete{})
		case *pgproto3.Bind:
			if sess.failed {
				continue
			}
			if err := sess.bind(m); err != nil {
				sess.extError(err)
				continue
			}
			sess.be.Send(&pgproto3.BindComplete{})
		case *pgproto3.Describe:
			if sess.failed {
				continue
			}
			disarm := sess.armTimeout()
			if err := sess.describe(ctx, m); err != nil {
				sess.extError(err)
			}
			disarm()
		case *pgproto3.Execute:
			sess.srv.log().Debug("pgwire: execute", "user", sess.user, "portal", m.Portal, "max_rows", m.MaxRows)
			if sess.failed {
				continue
			}
			if p := sess.portals[m.Portal]; p != nil {
				sess.setActivity("active", p.stmt.sql)
			}
			disarm := sess.armTimeout()
			if err := sess.execute(ctx, m); err != nil {
				sess.extError(err)
			}
			disarm()
		case *pgproto3.Close:
			if m.ObjectType == 'S' {
				delete(sess.stmts, m.Name)
			} else if p := sess.portals[m.Name]; p != nil {
				p.close()
				delete(sess.portals, m.Name)
			}
			if !sess.failed {
				sess.be.Send(&pgproto3.CloseComplete{})
			}
		case *pgproto3.Sync:
			sess.failed = false
			sess.setActivity("idle", "")
			if p := sess.portals[""]; p != nil && !sess.inTx {
				p.close()
				delete(sess.portals, "")
			}
			sess.be.Send(&pgproto3.ReadyForQuery{TxStatus: sess.txStatus()})
		case *pgproto3.Flush:
		case *pgproto3.Terminate:
			return nil
		default:
			sess.be.Send(sess.errorResponse(&pgError{code: "08P01", msg: fmt.Sprintf("unsupported message %T", msg)}))
		}
		if err := sess.be.Flush(); err != nil {
			return err
		}
	}
}

func (sess *pgSession) extError(err error) {
	sess.be.Send(sess.errorResponse(err))
	sess.failed = true
}

// unavailableHint goes with 57P03: the statement was not wrong, the hot
// tier's PostgreSQL could not be reached.
const unavailableHint = "PostgreSQL, which holds the hot tier and the catalog, cannot be reached now; msql serve reconnects by itself — run the statement again (GET /readyz says when it is back)"

// pgError is an error with its SQLSTATE.
type pgError struct {
	code, msg, hint string
}

func (e *pgError) Error() string { return e.msg }

func (sess *pgSession) errorResponse(err error) *pgproto3.ErrorResponse {
	if r := access.ResourceRefusal(err); r != nil {
		err = r
	}
	code, msg, hint := "XX000", err.Error(), ""
	var pe *pgError
	var refusal *access.Refusal
	var parse *engine.ParseError
	switch {
	case errors.As(err, &pe):
		code, msg, hint = pe.code, pe.msg, pe.hint
	case errors.As(err, &refusal):
		code, msg, hint = refusal.Code, refusal.Message, refusal.Hint
	case errors.Is(err, engine.ErrUnknownRelation):
		code, msg = "42P01", strings.TrimPrefix(msg, engine.ErrNotAQuery.Error()+": ")
	case errors.Is(err, engine.ErrWrite):
		code, hint = "42501", access.ReadOnlyReason
		msg = "read-only: " + err.Error()
	case errors.Is(err, engine.ErrNotAQuery):
		code = "42501"
	case errors.Is(err, engine.ErrScope):
		code = "42501"
	case errors.Is(err, engine.ErrBoundaryMoved):
		code = "40001"
	case errors.Is(err, engine.ErrIntegerForText):
		code = "42883" // PostgreSQL's "operator does not exist: text = bigint"
	case pgerr.Unavailable(err):
		code, hint = "57P03", unavailableHint
	case errors.Is(err, context.Canceled):
		code, msg = "57014", "canceling statement due to user request"
	case errors.As(err, &parse):
		code = "42601"
	case isArithRefusal(msg):
		code, msg, _ = arithRefusal(msg)
	case strings.Contains(msg, "Binder Error") || strings.Contains(msg, "Catalog Error"):
		code = "42703"
		if strings.Contains(msg, "Table with name") || strings.Contains(msg, "does not exist") {
			code = "42P01"
		}
	case strings.Contains(msg, `Invalid Input Error: relation "`): // a name cast to regclass (regParam)
		code = "42P01"
	case strings.Contains(msg, `Invalid Input Error: type "`):
		code = "42704"
	case strings.Contains(msg, "division by zero"):
		code, msg = "22012", "division by zero"
	case strings.Contains(msg, "Conversion Error") || strings.Contains(msg, "Invalid Input Error"):
		code = "22P02"
	}
	msg = wireMessage(msg)
	sess.srv.log().Debug("pgwire: error", "user", sess.user, "code", code, "err", msg)
	return &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: code, Message: msg, Hint: hint}
}

// statementKind classifies a statement before the engine sees it.
type statementKind int

const (
	kindQuery statementKind = iota
	kindEmpty
	kindNoop
	kindShow
	kindTxBegin
	kindTxEnd
	kindDeclare
	kindFetch
	kindClose
	kindCopy
)

func classify(q string) (statementKind, string) {
	switch w := firstWord(q); w {
	case "":
		return kindEmpty, ""
	case "SET", "RESET", "DISCARD", "DEALLOCATE", "UNLISTEN", "SAVEPOINT", "RELEASE":
		return kindNoop, w
	case "SHOW":
		return kindShow, "SHOW"
	case "BEGIN", "START":
		return kindTxBegin, "BEGIN"
	case "DECLARE":
		return kindDeclare, "DECLARE CURSOR"
	case "FETCH", "MOVE":
		return kindFetch, w
	case "CLOSE":
		return kindClose, "CLOSE CURSOR"
	case "COPY":
		return kindCopy, "COPY"
	case "COMMIT", "END":
		return kindTxEnd, "COMMIT"
	case "ROLLBACK", "ABORT":
		if strings.Contains(strings.ToUpper(codeOnly(q)), " TO ") {
			return kindNoop, "ROLLBACK"
		}
		return kindTxEnd, "ROLLBACK"
	}
	return kindQuery, ""
}

func (sess *pgSession) simpleQuery(ctx context.Context, q string) {
	if err := sess.srv.Limits.CheckStatement(q); err != nil {
		sess.be.Send(sess.errorResponse(err))
		return
	}
	stmts := splitStatements(q)
	if len(stmts) == 0 {
		sess.be.Send(&pgproto3.EmptyQueryResponse{})
		return
	}
	for _, st := range stmts {
		if err := sess.simpleStatement(ctx, st); err != nil {
			sess.be.Send(sess.errorResponse(err))
			return
		}
	}
}

// simpleStatement runs one statement of a simple query, under its own
// statement_timeout.
func (sess *pgSession) simpleStatement(ctx context.Context, st string) error {
	defer sess.armTimeout()()
	p := &pgPortal{stmt: &pgStatement{sql: st}}
	if err := sess.prepare(ctx, p); err != nil {
		return err
	}
	if p.cols != nil && p.copy == nil {
		sess.be.Send(rowDescription(p.cols, p.formats))
	}
	err := sess.run(ctx, p, 0)
	p.close()
	return err
}

func (sess *pgSession) bind(m *pgproto3.Bind) error {
	st, ok := sess.stmts[m.PreparedStatement]
	if !ok {
		return &pgError{code: "26000", msg: fmt.Sprintf("prepared statement %q does not exist", m.PreparedStatement)}
	}
	if err := sess.srv.Limits.CheckParameters(len(m.Parameters)); err != nil {
		return err
	}
	if n := len(m.ParameterFormatCodes); n > 1 && n != len(m.Parameters) {
		return &pgError{code: "08P01", msg: fmt.Sprintf("bind message has %d parameter formats but %d parameters", n, len(m.Parameters))}
	}
	if want := max(access.ParamCount(st.sql), len(st.paramOIDs)); len(m.Parameters) != want {
		return &pgError{code: "08P01", msg: fmt.Sprintf("bind message supplies %d parameters, but prepared statement %q requires %d", len(m.Parameters), m.PreparedStatement, want)}
	}
	for _, f := range append(m.ParameterFormatCodes, m.ResultFormatCodes...) {
		if f != pgtype.TextFormatCode && f != pgtype.BinaryFormatCode {
			return &pgError{code: "22023", msg: fmt.Sprintf("unsupported format code: %d", f)}
		}
	}
	args := make([]any, len(m.Parameters))
	for i, raw := range m.Parameters {
		var oid uint32
		if i < len(st.paramOIDs) {
			oid = st.paramOIDs[i]
		}
		format := int16(0)
		switch {
		case len(m.ParameterFormatCodes) == 1:
			format = m.ParameterFormatCodes[0]
		case i < len(m.ParameterFormatCodes):
			format = m.ParameterFormatCodes[i]
		}
		v, err := decodeParam(sess.m, sess.loc, oid, format, raw)
		if err != nil {
			return &pgError{code: "22P03", msg: fmt.Sprintf("parameter $%d: %v", i+1, err)}
		}
		args[i] = v
	}
	if old := sess.portals[m.DestinationPortal]; old != nil {
		if m.DestinationPortal != "" {
			return &pgError{code: "42P03", msg: fmt.Sprintf("portal %q already exists", m.DestinationPortal)}
		}
		old.close()
	}
	sess.portals[m.DestinationPortal] = &pgPortal{stmt: st, args: args, formats: m.ResultFormatCodes}
	return nil
}

func (sess *pgSession) describe(ctx context.Context, m *pgproto3.Describe) error {
	if m.ObjectType == 'S' {
		st, ok := sess.stmts[m.Name]
		if !ok {
			return &pgError{code: "26000", msg: fmt.Sprintf("prepared statement %q does not exist", m.Name)}
		}
		n := max(access.ParamCount(st.sql), len(st.paramOIDs))
		oids := make([]uint32, n)
		for i := range oids {
			oids[i] = 0 // unspecified: the client sends text (or its own choice) and DuckDB casts
			if i < len(st.paramOIDs) && st.paramOIDs[i] != 0 {
				oids[i] = st.paramOIDs[i]
			}
		}
		cols, err := sess.describeStatement(ctx, st, n)
		if err != nil {
			return err
		}
		sess.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: oids})
		if cols == nil {
			sess.be.Send(&pgproto3.NoData{})
		} else {
			sess.be.Send(rowDescription(cols, nil))
		}
		return nil
	}
	p, ok := sess.portals[m.Name]
	if !ok {
		return &pgError{code: "34000", msg: fmt.Sprintf("portal %q does not exist", m.Name)}
	}
	if err := sess.prepareFormats(ctx, p); err != nil {
		return err
	}
	if p.cols == nil || p.copy != nil {
		sess.be.Send(&pgproto3.NoData{})
	} else {
		sess.be.Send(rowDescription(p.cols, p.formats))
	}
	return nil
}

// describeStatement returns the columns of a statement without its parameters
// (bound as NULL for planning); nil for a statement that returns no rows.
func (sess *pgSession) describeStatement(ctx context.Context, st *pgStatement, nParams int) ([]pgColumn, error) {
	sess.describing = true
	defer func() { sess.describing = false }()
	kind, _ := classify(st.sql)
	switch kind {
	case kindEmpty, kindNoop, kindTxBegin, kindTxEnd, kindDeclare, kindClose, kindCopy:
		return nil, nil
	case kindShow:
		return []pgColumn{showColumn(st.sql)}, nil
	case kindFetch:
		p := &pgPortal{stmt: st}
		if err := sess.readyFetch(p); err != nil {
			return nil, err
		}
		return p.cols, nil
	}
	if _, _, ok := explainPrefix(st.sql); ok {
		return []pgColumn{explainColumn}, nil
	}
	if r, ok, err := sess.emulate(ctx, st.sql); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return r.cols, nil
	}
	q, err := sess.translate(ctx, st.sql)
	if err != nil {
		return nil, err
	}
	d, err := sess.eng.Describe(ctx, q, make([]any, nParams)...)
	if err != nil {
		return nil, err
	}
	cols := make([]pgColumn, len(d.Columns))
	for i := range d.Columns {
		oid, size, mod := pgTypeOf(d.Types[i])
		cols[i] = pgColumn{name: d.Columns[i], oid: oid, size: size, typmod: mod, duck: d.Types[i]}
	}
	return pgColumnNames(st.sql, cols), nil
}

// prepare readies a portal to run: a no-op, SHOW, an emulated catalog query, or
// an engine statement (started: the rows are open, the columns known).
func (sess *pgSession) prepare(ctx context.Context, p *pgPortal) error {
	if p.rows != nil || p.static != nil || p.source != nil || p.finished {
		return nil
	}
	q := p.stmt.sql
	kind, tag := classify(q)
	switch kind {
	case kindEmpty:
		p.static = &staticResult{empty: true}
		return nil
	case kindNoop, kindTxBegin, kindTxEnd:
		if err := sess.checkSet(q); err != nil {
			return err
		}
		if err := sess.setStatementTimeout(q); err != nil {
			return err
		}
		if err := sess.setMessageLevel(q); err != nil {
			return err
		}
		if kind == kindTxBegin {
			sess.inTx = true
			sess.tx++
		} else if kind == kindTxEnd {
			sess.endTransaction(tag == "ROLLBACK")
		}
		p.static = &staticResult{tag: tag}
		return nil
	case kindDeclare, kindClose:
		var err error
		if kind == kindDeclare {
			err = sess.declare(ctx, q, p.args)
		} else {
			err = sess.closeCursor(q)
		}
		if err != nil {
			return err
		}
		p.static = &staticResult{tag: tag}
		return nil
	case kindFetch:
		return sess.readyFetch(p)
	case kindShow:
		col := showColumn(q)
		v := sess.parameters()[col.name]
		if col.name == "transaction_isolation" || strings.EqualFold(col.name, "transaction isolation level") {
			v = sess.parameters()["transaction_isolation"]
		}
		for k, val := range sess.parameters() {
			if strings.EqualFold(k, col.name) {
				v = val
			}
		}
		p.static = &staticResult{cols: []pgColumn{col}, rows: [][]any{{v}}, tag: "SHOW"}
		p.cols = p.static.cols
		return nil
	case kindCopy:
		c, ok, err := parseCopy(q)
		if err != nil {
			return err
		}
		if ok {
			p.copy, p.formats, q = c, nil, c.query
		}
	}
	if prefix, rest, ok := explainPrefix(q); ok {
		return sess.explain(ctx, p, prefix, rest)
	}
	if r, ok, err := sess.emulate(ctx, q); ok || err != nil {
		if err != nil {
			return err
		}
		p.static, p.cols = r, r.cols
		return nil
	}
	p.started = time.Now()
	sess.args = p.args
	tq, err := sess.translate(ctx, q)
	sess.args = nil
	if err != nil {
		access.StatementLog(sess.srv.Log, "pgwire", sess.user, q, nil, 0, time.Since(p.started), err)
		return err
	}
	if tq != q {
		sess.srv.log().Debug("pgwire: translated", "user", sess.user, "sql", tq)
	}
	slot, err := sess.srv.Users.TakeSlot(sess.user)
	if err != nil {
		access.StatementLog(sess.srv.Log, "pgwire", sess.user, q, nil, 0, time.Since(p.started), err)
		return err
	}
	sctx, stop := context.WithCancelCause(ctx)
	cancel := func() { stop(nil) }
	sess.startStatement(stop)
	p.slot = slot
	p.open = &sess.srv.open
	p.open.Add(1)
	rows, err := sess.startRows(sctx, tq, p)
	if err != nil {
		p.closed()
		err = cancelCause(sctx, ctx, err)
		cancel()
		access.StatementLog(sess.srv.Log, "pgwire", sess.user, q, nil, 0, time.Since(p.started), err)
		return err
	}
	cts, err := rows.ColumnTypes()
	if err != nil {
		rows.Close()
		p.closed()
		cancel()
		return err
	}
	p.rows, p.cancel, p.stop, p.ctx, p.prov = rows, cancel, stop, sctx, rows.Provenance
	p.cols = pgColumnNames(q, columnsOf(cts))
	return nil
}

func showColumn(q string) pgColumn {
	t := strings.TrimSpace(sqltext.StripComments(q))
	t = strings.TrimRight(strings.TrimSpace(t[4:]), ";")
	name := strings.Trim(strings.ToLower(strings.TrimSpace(t)), `"`)
	if name == "transaction isolation level" {
		name = "transaction_isolation"
	}
	return pgColumn{name: name, oid: oidText, size: -1, typmod: -1}
}

func (sess *pgSession) execute(ctx context.Context, m *pgproto3.Execute) error {
	p, ok := sess.portals[m.Portal]
	if !ok {
		return &pgError{code: "34000", msg: fmt.Sprintf("portal %q does not exist", m.Portal)}
	}
	if p.finished {
		return &pgError{code: "34000", msg: fmt.Sprintf("portal %q has been run to completion", m.Portal)}
	}
	if err := sess.prepareFormats(ctx, p); err != nil {
		return err
	}
	return sess.run(ctx, p, int64(m.MaxRows))
}

// prepareFormats prepares a bound portal and checks its result format codes
// against its columns, as PostgreSQL does at Bind: one code per column, one
// for all, or none.
func (sess *pgSession) prepareFormats(ctx context.Context, p *pgPortal) error {
	if err := sess.prepare(ctx, p); err != nil {
		return err
	}
	if n := len(p.formats); p.cols != nil && n > 1 && n != len(p.cols) {
		p.close()
		return &pgError{code: "08P01", msg: fmt.Sprintf("bind message has %d result formats but query has %d columns", n, len(p.cols))}
	}
	return nil
}

// run sends a prepared portal's rows (all of them, or maxRows then
// PortalSuspended) and its completion.
func (sess *pgSession) run(ctx context.Context, p *pgPortal, maxRows int64) error {
	if p.source != nil {
		return sess.fetch(ctx, p, maxRows)
	}
	if st := p.static; st != nil {
		if st.empty {
			sess.be.Send(&pgproto3.EmptyQueryResponse{})
			p.finished = true
			return nil
		}
		if p.copy != nil {
			maxRows = 0
			for _, m := range sess.beginCopy(p) {
				sess.be.Send(m)
			}
		}
		for _, r := range st.rows[min(int(p.sent), len(st.rows)):] {
			if maxRows > 0 && p.sent >= maxRows {
				sess.be.Send(&pgproto3.PortalSuspended{})
				return nil
			}
			msg, err := sess.appendRow(nil, p, r)
			if err != nil {
				return err
			}
			sess.be.Send(rawMessages(msg))
			p.sent++
		}
		tag := st.tag
		if tag == "" {
			tag = fmt.Sprintf("SELECT %d", len(st.rows))
		}
		sess.be.Send(sess.completion(p, tag))
		p.finished = true
		return nil
	}
	return sess.streamRows(ctx, p, maxRows)
}

// flushRows is how many rows are sent between flushes of a result that is
// no longer held back (pgretry.go) and of a declared cursor's FETCH.
const flushRows = 512

// finish completes a portal's query and reports its completion.
func (sess *pgSession) finish(ctx context.Context, p *pgPortal, err error) error {
	if err := sess.complete(ctx, p, err); err != nil {
		return err
	}
	sess.be.Send(sess.completion(p, fmt.Sprintf("SELECT %d", p.sent)))
	return nil
}

// complete closes a portal's rows, logs the statement, sends the rows held
// back and reports the provenance (pgmessages.go).
func (sess *pgSession) complete(ctx context.Context, p *pgPortal, err error) error {
	cerr := p.rows.Close()
	p.closed()
	if err == nil {
		err = cerr
	}
	if !errors.Is(err, engine.ErrBoundaryMoved) {
		err = cancelCause(p.ctx, ctx, err)
	}
	p.finished = true
	sess.clearCancel(p)
	access.StatementLog(sess.srv.Log, "pgwire", sess.user, p.stmt.sql, p.prov, p.sent, time.Since(p.started), err)
	if err != nil {
		p.spool.discard()
		return err
	}
	if err := sess.release(p); err != nil {
		return err
	}
	sess.provenance(p.prov)
	return nil
}

func provenanceDetail(p *engine.Provenance) string {
	var parts []string
	if len(p.Tables) > 0 {
		parts = append(parts, "tables "+strings.Join(p.Tables, ","))
	}
	if p.ColdFiles > 0 {
		parts = append(parts, fmt.Sprintf("cold files %d", p.ColdFiles))
	}
	if len(p.Scope) > 0 {
		parts = append(parts, "scope "+strings.Join(p.Scope, ","))
	}
	return strings.Join(parts, " · ")
}

func (sess *pgSession) clearCancel(p *pgPortal) {
	if p.cancel != nil {
		p.cancel()
	}
	sess.mu.Lock()
	sess.cancelStmt = nil
	sess.mu.Unlock()
}

func (p *pgPortal) close() {
	if p.rows != nil && !p.finished {
		p.rows.Close()
	}
	p.closed()
	if p.cancel != nil {
		p.cancel()
	}
	p.finished = true
}

// closed records that the portal's engine rows are closed.
func (p *pgPortal) closed() {
	if p.slot != nil {
		p.slot()
		p.slot = nil
	}
	if p.open != nil {
		p.open.Add(-1)
		p.open = nil
	}
}

func resultFormat(formats []int16, i int) int16 {
	switch {
	case len(formats) == 0:
		return pgtype.TextFormatCode
	case len(formats) == 1:
		return formats[0]
	case i < len(formats):
		return formats[i]
	}
	return pgtype.TextFormatCode
}

func rowDescription(cols []pgColumn, formats []int16) *pgproto3.RowDescription {
	rd := &pgproto3.RowDescription{Fields: make([]pgproto3.FieldDescription, len(cols))}
	for i, c := range cols {
		rd.Fields[i] = pgproto3.FieldDescription{Name: []byte(c.name), DataTypeOID: c.oid, DataTypeSize: c.size,
			TypeModifier: c.typmod, Format: resultFormat(formats, i)}
	}
	return rd
}

// dataRow is a row's DataRow message (appendDataRow), its values apart.
func (sess *pgSession) dataRow(p *pgPortal, vals []any) (*pgproto3.DataRow, error) {
	buf, err := sess.appendDataRow(nil, p, vals)
	if err != nil {
		return nil, err
	}
	dr := &pgproto3.DataRow{}
	if err := dr.Decode(buf[dataRowHeader:]); err != nil {
		return nil, fmt.Errorf("encode a result row: %w", err)
	}
	return dr, nil
}

const (
	// dataRowHeader is a DataRow's type byte and length.
	dataRowHeader = 5
	// maxRowBody is the largest DataRow body a PostgreSQL client reads
	// (PostgreSQL's MaxAllocSize less one, as pgproto3 bounds a message).
	maxRowBody = 0x3fffffff - 1
)

// appendDataRow appends a row's values, in the portal's result formats, to
// buf as a DataRow message as it goes on the wire. Every row of a result is
// encoded here, straight into the spool's (or the connection's) buffer:
// there is no message value, per-row buffer or per-value slice to allocate
// and copy. On an error buf is returned as it was.
func (sess *pgSession) appendDataRow(buf []byte, p *pgPortal, vals []any) ([]byte, error) {
	if len(vals) > math.MaxUint16 {
		return buf, fmt.Errorf("encode a result row: %d columns, the wire's limit is %d", len(vals), math.MaxUint16)
	}
	start := len(buf)
	buf = append(buf, 'D', 0, 0, 0, 0)
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(vals)))
	for i, v := range vals {
		if v == nil {
			buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32) // -1: NULL
			continue
		}
		at := len(buf)
		out, err := sess.appendValue(append(buf, 0, 0, 0, 0), p.cols[i], resultFormat(p.formats, i), v)
		if err != nil {
			return buf[:start], err
		}
		buf = out
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	body := len(buf) - start - 1
	if body > maxRowBody {
		return buf[:start], fmt.Errorf("encode a result row: %d bytes, the wire's limit is %d", body, maxRowBody)
	}
	binary.BigEndian.PutUint32(buf[start+1:], uint32(body))
	return buf, nil
}

// appendValue appends one non-NULL value of column c to buf in format.
func (sess *pgSession) appendValue(buf []byte, c pgColumn, format int16, v any) ([]byte, error) {
	out, done, err := appendTime(buf, sess.m, c.oid, format, v, sess.loc)
	if !done && err == nil {
		out, done = appendFloat(buf, c.oid, format, v)
	}
	if !done && err == nil {
		out, done = appendText(buf, c.oid, v)
	}
	if !done && err == nil {
		out, done = appendDecimal(buf, c.oid, format, v)
	}
	if !done && err == nil {
		out, done = appendDecimalBinary(buf, c.oid, format, v)
	}
	if !done && err == nil {
		out, err = sess.m.Encode(c.oid, format, pgValue(c.oid, v), buf)
		if out == nil && err == nil { // pgtype's NULL for a value that is there: sent empty, as before
			out = buf
		}
	}
	if err != nil {
		return nil, fmt.Errorf("column %s (%s): %w", c.name, c.duck, err)
	}
	return out, nil
}

// checkParse refuses a Parse message whose statement or declared parameter
// types exceed a bound.
func checkParse(l access.Limits, m *pgproto3.Parse) error {
	if err := l.CheckParameters(len(m.ParameterOIDs)); err != nil {
		return err
	}
	return l.CheckStatement(m.Query)
}
