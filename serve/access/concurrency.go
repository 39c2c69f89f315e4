package access

import (
	"fmt"
	"sync"
)

// statementSlots counts the statements each user has running, across pgwire
// and Flight SQL, against the user's max_statements.
type statementSlots struct {
	mu      sync.Mutex
	running map[string]int
}

// maxStatements is how many statements user may run at once: the user's
// max_statements, else the server's default; 0 is no bound.
func (u *Users) maxStatements(user string) int {
	if us, ok := u.Lookup(user); ok && us.MaxStatements > 0 {
		return us.MaxStatements
	}
	if u == nil {
		return 0
	}
	return u.MaxStatementsPerUser
}

// TakeSlot counts one more running statement of user, or refuses it with
// SQLSTATE 53300 when the user already runs their limit: refused at once,
// not queued, so a client that opened too many never holds a connection
// waiting. release ends the statement's count; call it once.
func (u *Users) TakeSlot(user string) (release func(), err error) {
	limit := u.maxStatements(user)
	if limit <= 0 {
		return func() {}, nil
	}
	s := &u.slots
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		s.running = map[string]int{}
	}
	if s.running[user] >= limit {
		return nil, &Refusal{Code: "53300",
			Message: fmt.Sprintf("too many statements running for user %q: %d at once is the limit (max_statements)", user, limit),
			Hint: "Wait for one to finish, or cancel it, and retry; the operator sets max_statements in the user's [[users]] entry " +
				"or msql serve --max-statements-per-user."}
	}
	s.running[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.running[user]--; s.running[user] <= 0 {
				delete(s.running, user)
			}
		})
	}, nil
}
