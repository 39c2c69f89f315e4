package pgwire

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// A statement ends early for one of three reasons, each its context's cause:
// the client asked (CancelRequest), statement_timeout passed, or the client
// went away (nobody is told; the work stops).
var (
	errUserCancel       = &pgError{code: "57014", msg: "canceling statement due to user request"}
	errStatementTimeout = &pgError{code: "57014", msg: "canceling statement due to statement timeout"}
	errClientGone       = errors.New("client disconnected")
)

// cancelCause is what a statement whose context ended reports: its context's
// cause (errUserCancel, errStatementTimeout) when the statement itself was
// stopped, else err — also when the whole connection ended (conn done).
func cancelCause(stmt, conn context.Context, err error) error {
	if err == nil || stmt == nil || stmt.Err() == nil || conn.Err() != nil {
		return err
	}
	var pe *pgError
	if cause := context.Cause(stmt); errors.As(cause, &pe) {
		return cause
	}
	return context.Canceled
}

// cancelRunning stops the session's running statement with cause. A timeout
// that fires before the statement has its context (while it is classified or
// translated) is kept, and the statement is stopped as soon as it starts.
func (sess *pgSession) cancelRunning(cause error, gen uint64) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if gen != sess.armed {
		return // the timer of a statement that has ended
	}
	sess.expired = cause
	if sess.cancelStmt != nil {
		sess.cancelStmt(cause)
	}
}

// startStatement makes stop the running statement's cancellation.
func (sess *pgSession) startStatement(stop context.CancelCauseFunc) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.cancelStmt = stop
	if sess.expired != nil {
		stop(sess.expired)
	}
}

// armTimeout starts the session's statement_timeout for the work of one
// message (one statement of a simple query, a Describe, an Execute), as
// PostgreSQL applies it; disarm ends it.
func (sess *pgSession) armTimeout() (disarm func()) {
	sess.mu.Lock()
	sess.armed++
	gen := sess.armed
	sess.expired = nil
	sess.mu.Unlock()
	if sess.timeout <= 0 {
		return func() {}
	}
	t := time.AfterFunc(sess.timeout, func() { sess.cancelRunning(errStatementTimeout, gen) })
	return func() {
		t.Stop()
		sess.mu.Lock()
		sess.armed++
		sess.expired = nil
		sess.mu.Unlock()
	}
}

// setStatementTimeout applies SET statement_timeout and RESET
// statement_timeout / RESET ALL / DISCARD ALL; other statements pass.
func (sess *pgSession) setStatementTimeout(q string) error {
	words := strings.Fields(strings.NewReplacer("=", " = ", ";", " ").Replace(sqltext.StripComments(q)))
	if len(words) >= 2 && (strings.EqualFold(words[0], "RESET") || strings.EqualFold(words[0], "DISCARD")) {
		if strings.EqualFold(words[1], "ALL") || strings.EqualFold(words[1], "statement_timeout") {
			sess.timeout = sess.defaultTimeout
		}
		return nil
	}
	if len(words) < 4 || !strings.EqualFold(words[0], "SET") {
		return nil
	}
	words = words[1:]
	if strings.EqualFold(words[0], "SESSION") || strings.EqualFold(words[0], "LOCAL") {
		words = words[1:]
	}
	if len(words) < 3 || !strings.EqualFold(strings.Trim(words[0], `"`), "statement_timeout") ||
		!(strings.EqualFold(words[1], "TO") || words[1] == "=") {
		return nil
	}
	v := strings.Join(words[2:], " ")
	if strings.EqualFold(v, "DEFAULT") {
		sess.timeout = sess.defaultTimeout
		return nil
	}
	d, err := parseTimeout(strings.Trim(v, `'`))
	if err != nil {
		return err
	}
	sess.timeout = d
	return nil
}

// timeoutUnits are PostgreSQL's units of a time setting, largest first.
var timeoutUnits = []struct {
	name string
	d    time.Duration
}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"min", time.Minute}, {"s", time.Second}, {"ms", time.Millisecond}, {"us", time.Microsecond}}

// parseTimeout reads a statement_timeout as PostgreSQL does: a number of
// milliseconds, or a number with a unit (us, ms, s, min, h, d).
func parseTimeout(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	num, unit, suffix := v, time.Millisecond, ""
	for _, u := range timeoutUnits {
		if n, ok := strings.CutSuffix(v, u.name); ok && len(u.name) > len(suffix) {
			num, unit, suffix = strings.TrimSpace(n), u.d, u.name // "ms", not "s"
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, &pgError{code: "22023", msg: fmt.Sprintf("invalid value for parameter \"statement_timeout\": %q", v),
			hint: `Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".`}
	}
	ms := f * float64(unit) / float64(time.Millisecond)
	if ms < 0 || ms > (1<<31-1) {
		return 0, &pgError{code: "22023", msg: fmt.Sprintf("%s ms is outside the valid range for parameter \"statement_timeout\" (0 .. 2147483647)", strconv.FormatFloat(ms, 'f', -1, 64))}
	}
	return time.Duration(ms+0.5) * time.Millisecond, nil
}

// formatTimeout is SHOW statement_timeout: "0", or the value in the largest
// unit that divides it ("1s", "1500ms", "2min").
func formatTimeout(d time.Duration) string {
	if d <= 0 {
		return "0"
	}
	for _, u := range timeoutUnits[:5] {
		if d%u.d == 0 {
			return fmt.Sprintf("%d%s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("%dms", d/time.Millisecond)
}
