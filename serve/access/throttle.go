package access

import (
	"context"
	"net"
	"sync"
	"time"
)

// LoginThrottle slows password guessing on every surface (pgwire, Flight SQL,
// the REST catalog): after a failed login, the next attempt for the same user
// name, or from the same address, waits Base, doubling with each further
// failure up to Max. A successful login clears both; a failure older than
// Forget no longer counts. The zero value uses the defaults.
type LoginThrottle struct {
	Base, Max, Forget time.Duration

	mu       sync.Mutex
	failures map[string]loginFailures // "user\x00name" and "addr\x00host"
}

type loginFailures struct {
	n    int
	last time.Time
}

// Defaults of LoginThrottle.
const (
	defaultLoginDelay    = 250 * time.Millisecond
	defaultMaxLoginDelay = 8 * time.Second
	defaultForgetFailure = 15 * time.Minute
)

func (t *LoginThrottle) settings() (base, maxDelay, forget time.Duration) {
	base, maxDelay, forget = t.Base, t.Max, t.Forget
	if base <= 0 {
		base = defaultLoginDelay
	}
	if maxDelay <= 0 {
		maxDelay = defaultMaxLoginDelay
	}
	if forget <= 0 {
		forget = defaultForgetFailure
	}
	return base, maxDelay, forget
}

func throttleKeys(user, addr string) [2]string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	return [2]string{"user\x00" + user, "addr\x00" + addr}
}

// delay is how long an attempt for user from addr waits: the later of its two
// keys' ends of delay.
func (t *LoginThrottle) delay(user, addr string, now time.Time) time.Duration {
	base, maxDelay, forget := t.settings()
	t.mu.Lock()
	defer t.mu.Unlock()
	var wait time.Duration
	for _, k := range throttleKeys(user, addr) {
		f, ok := t.failures[k]
		if !ok || now.Sub(f.last) > forget {
			continue
		}
		d := maxDelay
		if f.n < 32 {
			d = min(base<<(f.n-1), maxDelay)
		}
		wait = max(wait, f.last.Add(d).Sub(now))
	}
	return wait
}

// Wait blocks until an attempt for user from addr may be checked, or ctx ends.
func (t *LoginThrottle) Wait(ctx context.Context, user, addr string) error {
	d := t.delay(user, addr, time.Now())
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Failed counts a failed login of user from addr.
func (t *LoginThrottle) Failed(user, addr string) {
	_, _, forget := t.settings()
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failures == nil {
		t.failures = map[string]loginFailures{}
	}
	for k, f := range t.failures {
		if now.Sub(f.last) > forget {
			delete(t.failures, k) // bounded by the failures of the last Forget
		}
	}
	for _, k := range throttleKeys(user, addr) {
		f := t.failures[k]
		if now.Sub(f.last) > forget {
			f.n = 0
		}
		t.failures[k] = loginFailures{n: f.n + 1, last: now}
	}
}

// Succeeded clears the failures of user and of addr.
func (t *LoginThrottle) Succeeded(user, addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range throttleKeys(user, addr) {
		delete(t.failures, k)
	}
}

// Login checks a plain password (Basic auth on Flight SQL and REST, the REST
// token exchange) after the throttle's wait, and records the outcome.
func (u *Users) Login(ctx context.Context, name, password, addr string) bool {
	if err := u.Throttle.Wait(ctx, name, addr); err != nil {
		return false
	}
	if !u.check(name, password) {
		u.Throttle.Failed(name, addr)
		return false
	}
	u.Throttle.Succeeded(name, addr)
	return true
}
