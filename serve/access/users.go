package access

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/settings"
)

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

// Names are the configured users' names, sorted: the roles a server shows
// (never their passwords or scopes). None without authentication.
func (u *Users) Names() []string {
	if u == nil {
		return nil
	}
	names := make([]string, 0, len(u.users))
	for n := range u.users {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// check verifies a plain password (basic auth on Flight SQL and REST).
func (u *Users) check(name, password string) bool {
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
