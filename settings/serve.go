package settings

import (
	"fmt"
	"time"

	"github.com/meterstore/meterstore"
)

// ServeSettings are msql serve's server limits, the [serve] section; the msql
// serve flag of the same name (dashes for underscores) overrides each key,
// and a key left out keeps the flag's default.
//
//	[serve]
//	statement_timeout = "5m"          # cancel a pgwire or Flight SQL statement running longer
//	max_statements_per_user = 4       # a user's statements at once (a [[users]] max_statements overrides it)
//	max_statement_bytes = 1048576     # a statement's text, checked before anything parses it
//	max_parameters = 65535
//	max_nesting = 1000                # parentheses and brackets
//	max_result_rows = 1000000         # rows one statement returns; 0: no bound
//	flight_session_idle = "30m"       # Flight SQL tokens and prepared handles unused this long expire
//	confined_databases = 4            # scoped users' DuckDB databases open at once
type ServeSettings struct {
	// StatementTimeout is every session's statement_timeout unless its user
	// has one ([[users]] statement_timeout) or a session sets its own.
	StatementTimeout time.Duration `toml:"statement_timeout"`
	// MaxStatementsPerUser is how many statements a user without
	// max_statements may run at once over pgwire and Flight SQL together.
	MaxStatementsPerUser int `toml:"max_statements_per_user"`
	// MaxStatementBytes, MaxParameters and MaxNesting bound a statement's
	// text before anything parses it; MaxResultRows bounds its result.
	MaxStatementBytes int   `toml:"max_statement_bytes"`
	MaxParameters     int   `toml:"max_parameters"`
	MaxNesting        int   `toml:"max_nesting"`
	MaxResultRows     int64 `toml:"max_result_rows"`
	// FlightSessionIdle expires a Flight SQL bearer token or prepared
	// statement handle unused this long.
	FlightSessionIdle time.Duration `toml:"flight_session_idle"`
	// ConfinedDatabases caps the walled-off DuckDB databases of scoped
	// users open at once (one per scope in use, each with a share of the
	// memory budget); a scope's statement while all of them run other
	// scopes' statements is refused with SQLSTATE 53300. 0 is the engine's
	// default (engine.DefaultConfinedDatabases).
	ConfinedDatabases int `toml:"confined_databases"`
}

// validate refuses a limit no server can run with; 0 (or a key left out)
// keeps the flag's default.
func (s ServeSettings) validate() error {
	for key, v := range map[string]int64{
		"confined_databases": int64(s.ConfinedDatabases), "max_statements_per_user": int64(s.MaxStatementsPerUser),
		"max_statement_bytes": int64(s.MaxStatementBytes), "max_parameters": int64(s.MaxParameters),
		"max_nesting": int64(s.MaxNesting), "max_result_rows": s.MaxResultRows,
		"statement_timeout": int64(s.StatementTimeout), "flight_session_idle": int64(s.FlightSessionIdle),
	} {
		if v < 0 {
			return &meterstore.ConfigError{Setting: "serve." + key, Problem: fmt.Sprintf("%d is negative", v), Fix: "write a value > 0, or leave the key out for msql serve's default"}
		}
	}
	return nil
}
