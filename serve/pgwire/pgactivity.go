package pgwire

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// pg_stat_activity lists the server's pgwire sessions and what each runs: a
// user sees its own sessions, a user without a scope (who may read
// everything) sees every session. pg_cancel_backend(pid) cancels the running
// statement of a session of the caller's own user, as PostgreSQL lets a role
// cancel its own backends; another user's is refused (42501).

// activity is what a session is doing, as pg_stat_activity shows it.
type activity struct {
	state, query            string
	queryStart, stateChange time.Time
}

// vactivity is a row of pg_stat_activity.
type vactivity struct {
	pid                       uint32
	user, database, app, addr string
	port                      int
	backendStart              time.Time
	state, query              string
	queryStart, stateChange   time.Time
}

// setActivity records that the session is active with query, or idle (its
// last query stays, as PostgreSQL shows it).
func (sess *pgSession) setActivity(state, query string) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	now := time.Now()
	if state == "active" {
		sess.act.query, sess.act.queryStart = query, now
	}
	if sess.act.state != state {
		sess.act.state, sess.act.stateChange = state, now
	}
}

// unscoped reports whether the session's user reads without a scope.
func (sess *pgSession) unscoped() bool {
	us, _ := sess.srv.Users.Lookup(sess.user)
	return us.Scope == ""
}

// activity lists the sessions viewer may see, by pid.
func (s *Server) activity(viewer *pgSession) []vactivity {
	s.mu.Lock()
	sessions := make([]*pgSession, 0, len(s.sessions))
	for _, o := range s.sessions {
		sessions = append(sessions, o)
	}
	s.mu.Unlock()
	all := viewer.unscoped()
	var out []vactivity
	for _, o := range sessions {
		if !all && o.user != viewer.user {
			continue
		}
		row := vactivity{pid: o.pid, user: o.user, database: o.database, app: o.appName, backendStart: o.started}
		if a, ok := o.conn.RemoteAddr().(*net.TCPAddr); ok {
			row.addr, row.port = a.IP.String(), a.Port
		}
		o.mu.Lock()
		row.state, row.query, row.queryStart, row.stateChange = o.act.state, o.act.query, o.act.queryStart, o.act.stateChange
		o.mu.Unlock()
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b vactivity) int { return int(int64(a.pid) - int64(b.pid)) })
	return out
}

// cancelBackend is pg_cancel_backend(pid) called by caller: false if no
// session has the pid, an error if it is another user's.
func (s *Server) cancelBackend(caller *pgSession, pid uint32) (bool, error) {
	s.mu.Lock()
	target := s.sessions[pid]
	s.mu.Unlock()
	if target == nil {
		return false, nil
	}
	if target.user != caller.user {
		return false, &pgError{code: "42501", msg: "permission denied to cancel process " + strconv.FormatUint(uint64(pid), 10),
			hint: fmt.Sprintf("Only the statements of user %q's own sessions can be cancelled by it.", caller.user)}
	}
	target.mu.Lock()
	if target.cancelStmt != nil {
		target.cancelStmt(errUserCancel)
	}
	target.mu.Unlock()
	s.log().Info("pgwire: statement cancelled by pg_cancel_backend", "user", caller.user, "pid", pid)
	return true, nil
}

// cancelBackendCall translates pg_cancel_backend(pid) with a literal pid or
// a bound parameter: the cancel happens as the statement is translated, which
// answers whether it did. While a statement is only described, nothing is
// cancelled.
func (t *translator) cancelBackendCall(arg string) (string, bool) {
	if t.sess.describing {
		return "false", true
	}
	arg = strings.TrimSpace(arg)
	if n, err := strconv.Atoi(strings.TrimPrefix(arg, "$")); err == nil && strings.HasPrefix(arg, "$") && n >= 1 && n <= len(t.sess.args) {
		arg = fmt.Sprint(t.sess.args[n-1])
	}
	pid, err := strconv.ParseUint(arg, 10, 32)
	if err != nil {
		t.fail(&pgError{code: "0A000", msg: fmt.Sprintf("pg_cancel_backend(%s): the process id must be a number here, as pg_stat_activity.pid shows it", arg)})
		return "", true
	}
	ok, err := t.sess.srv.cancelBackend(t.sess, uint32(pid))
	if err != nil {
		t.fail(err)
		return "", true
	}
	return strconv.FormatBool(ok), true
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// statActivity is pg_stat_activity's relation (PostgreSQL 15's columns).
func statActivity(s vsession) vrelation {
	v := vrelation{cols: cols(`datid INTEGER, datname VARCHAR, pid INTEGER, leader_pid INTEGER, usesysid INTEGER,
		usename VARCHAR, application_name VARCHAR, client_addr VARCHAR, client_hostname VARCHAR, client_port INTEGER,
		backend_start TIMESTAMPTZ, xact_start TIMESTAMPTZ, query_start TIMESTAMPTZ, state_change TIMESTAMPTZ,
		wait_event_type VARCHAR, wait_event VARCHAR, state VARCHAR, backend_xid VARCHAR, backend_xmin VARCHAR,
		query_id BIGINT, query VARCHAR, backend_type VARCHAR`)}
	for _, a := range s.activity {
		var addr, port any
		if a.addr != "" {
			addr, port = a.addr, a.port
		}
		v.rows = append(v.rows, []any{16383, a.database, a.pid, nil, oidBootstrapSuperuser, a.user, a.app, addr, nil, port,
			timeOrNil(a.backendStart), nil, timeOrNil(a.queryStart), timeOrNil(a.stateChange), nil, nil, a.state, nil, nil,
			nil, a.query, "client backend"})
	}
	return v
}
