// Package serve exposes MeterStore's unified view to other tools, read-only:
//
//   - the PostgreSQL wire protocol (psql, BI tools, JDBC, pgx, Grafana),
//   - Arrow Flight SQL (ADBC, the Flight SQL JDBC/ODBC drivers, pyarrow),
//   - a read-only Iceberg REST catalog façade over the cold tables, so Spark,
//     Trino, PyIceberg or DuckDB read history straight from object storage.
//
// Only queries run (the seeds' rule): every statement goes through the
// engine's Rows/Stream/Describe gate, which refuses anything but one SELECT;
// the servers never hold the engine's unrestricted DuckDB handle. A user bound
// to a scope ("tenant=X") gets a confined handle (engine.Scoped) for the whole
// session, and a confined handle only ever yields confined handles.
//
// Writes are refused by design, not disabled: a write through any of these
// surfaces would bypass MeterStore's append, and with it the tier routing (a
// correction below the watermark written to PostgreSQL is silently invisible)
// and the subject-reference check (a replay re-linking an erased subject).
//
// One client cannot stop the service: a request that panics ends with an
// error to its own client and its stack in the log, and the server keeps
// serving the others; malformed input is refused before a library reads it
// (a Flight DoPut by its descriptor, a pgwire message by its length).
package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"time"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/telemetry"
	"github.com/meterstore/meterstore/settings"
)

// ReadOnlyReason is the rule every refused write names.
const ReadOnlyReason = "MeterStore serves queries only: a write here would bypass MeterStore's append, " +
	"and with it the tier routing (a correction below the watermark written to the hot tier is silently invisible) " +
	"and the subject-reference check (a replay could re-link an erased subject); " +
	"deliveries go in with msql import, or .import and INSERT … SELECT in msql's local shell"

// Users authenticates the accounts of the configuration file and opens each
// one's session handle.
type Users struct {
	base  *engine.Engine
	users map[string]settings.UserSettings
	// MaxStatementsPerUser is how many statements a user without
	// max_statements may run at once (concurrency.go); 0 is no bound.
	MaxStatementsPerUser int
	// Throttle slows failed logins per user and per address (throttle.go).
	Throttle LoginThrottle
	slots    statementSlots
}

// NewUsers checks every user's scope against the engine now, so a typo in the
// configuration fails at start-up rather than at a user's first login.
func NewUsers(base *engine.Engine, users []settings.UserSettings) (*Users, error) {
	u := &Users{base: base, users: map[string]settings.UserSettings{}}
	for _, us := range users {
		if us.Name == "" {
			return nil, errors.New("serve: a [[users]] entry has no name")
		}
		if _, dup := u.users[us.Name]; dup {
			return nil, fmt.Errorf("serve: user %q is declared twice", us.Name)
		}
		if us.Password == "" {
			return nil, fmt.Errorf("serve: user %q has no password", us.Name)
		}
		if _, err := sessionEngine(base, us.Scope); err != nil {
			return nil, fmt.Errorf("serve: user %q: %w", us.Name, err)
		}
		u.users[us.Name] = us
	}
	return u, nil
}

// Enabled reports whether authentication is configured.
func (u *Users) Enabled() bool { return u != nil && len(u.users) > 0 }

// Lookup returns a user's settings.
func (u *Users) Lookup(name string) (settings.UserSettings, bool) {
	if u == nil {
		return settings.UserSettings{}, false
	}
	us, ok := u.users[name]
	return us, ok
}

// Check verifies a plain password (basic auth on Flight SQL and REST).
func (u *Users) Check(name, password string) bool {
	us, ok := u.Lookup(name)
	if !ok {
		// Compare anyway so timing says nothing about which names exist.
		subtle.ConstantTimeCompare([]byte(password), []byte("\x00never"))
		return false
	}
	return subtle.ConstantTimeCompare([]byte(password), []byte(us.Password)) == 1
}

// Session returns the engine handle a user's statements run on. Without
// authentication configured (loopback only) the name is ignored.
func (u *Users) Session(name string) (*engine.Engine, error) {
	if !u.Enabled() {
		return sessionEngine(u.base, "")
	}
	us, ok := u.users[name]
	if !ok {
		return nil, fmt.Errorf("no user %q", name)
	}
	return sessionEngine(u.base, us.Scope)
}

// sessionEngine derives a session's handle from the server's: the user's
// scope, and always the engine's walled DuckDB database (no file access
// outside the warehouse, locked configuration) — a server never runs a
// statement where the shell's unrestricted handle lives.
func sessionEngine(base *engine.Engine, scope string) (*engine.Engine, error) {
	e := base.Walled()
	scope = strings.TrimSpace(scope)
	if scope == "" {
		return e, nil
	}
	for _, part := range strings.Split(scope, ",") {
		col, val, ok := strings.Cut(part, "=")
		col, val = strings.TrimSpace(col), strings.Trim(strings.TrimSpace(val), `'"`)
		if !ok || col == "" || val == "" {
			return nil, fmt.Errorf("scope %q: want column=value", scope)
		}
		var err error
		if e, err = e.Scoped(col, val); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// CheckListen refuses a non-loopback address when no user is configured.
func CheckListen(addr string, users *Users) error {
	if users.Enabled() {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("refusing to listen on %s without authentication: declare [[users]] in the configuration, or listen on 127.0.0.1", addr)
	}
	return nil
}

// StatementLog ends a statement: its metrics record (the proto names the
// surface) and its one log line, which carries the provenance's fields — never
// a row value, never a bound parameter (the SQL text is the client's own).
func StatementLog(log *slog.Logger, proto, user, sql string, prov *engine.Provenance, rows int64, d time.Duration, err error) {
	telemetry.RecordStatement(context.Background(), engine.StatementRecord(proto, prov, rows, d, err))
	if log == nil {
		return
	}
	attrs := []any{"proto", proto, "user", user, "outcome", engine.Outcome(err), "duration_ms", float64(d.Microseconds()) / 1000,
		"rows", rows, "sql", truncate(strings.Join(strings.Fields(sql), " "), 500)}
	attrs = append(attrs, ProvenanceAttrs(prov)...)
	if err != nil {
		log.Warn("statement failed", append(attrs, "err", err.Error())...)
		return
	}
	log.Info("statement", attrs...)
}

// ProvenanceAttrs are a provenance's fields as log attributes: the boundary
// the statement ran against, the tiers and files it read, its ceilings, its scope.
func ProvenanceAttrs(prov *engine.Provenance) []any {
	if prov == nil {
		return nil
	}
	attrs := []any{"watermark", prov.Watermark.UTC().Format(time.RFC3339), "tiers", prov.Tiers.String(), "mode", prov.Mode.String()}
	if prov.TimeZone != "" {
		attrs = append(attrs, "time_zone", prov.TimeZone)
	}
	if len(prov.Tables) > 0 {
		attrs = append(attrs, "tables", strings.Join(prov.Tables, ","))
	}
	if len(prov.Watermarks) > 1 {
		var parts []string
		for _, t := range prov.Tables {
			parts = append(parts, t+"="+prov.Watermarks[t].UTC().Format(time.RFC3339))
		}
		attrs = append(attrs, "watermarks", strings.Join(parts, ","))
	}
	if len(prov.SnapshotIDs) > 0 {
		attrs = append(attrs, "snapshot", prov.SnapshotIDs[0])
	}
	if prov.ColdFiles > 0 {
		attrs = append(attrs, "cold_files", prov.ColdFiles, "resolved_files", prov.ResolvedFiles)
	}
	if prov.KnownAt != nil {
		attrs = append(attrs, "known_at", prov.KnownAt.UTC().Format(time.RFC3339))
	}
	if prov.MaxVersion != nil {
		attrs = append(attrs, "max_version", *prov.MaxVersion)
	}
	if len(prov.Scope) > 0 {
		attrs = append(attrs, "scope", strings.Join(prov.Scope, ","))
	}
	return attrs
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// logPanic records a panic that ended one request — with its stack, at error
// level — and returns what that request's client is told: the value stays in
// the log, which the client may not read.
func logPanic(log *slog.Logger, surface string, p any, attrs ...any) string {
	stack := strings.TrimSpace(string(debug.Stack()))
	log.Error(surface+": request panicked", append(attrs, "panic", p, "stack", stack)...)
	return "internal error: the server failed on this request and logged it; it keeps serving"
}

// orDiscard is log, or a logger that drops everything when log is nil.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
