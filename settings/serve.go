package settings

import (
	"fmt"

	"github.com/meterstore/meterstore"
)

// ServeSettings are msql serve's server limits, the [serve] section; the msql
// serve flag of the same name overrides each key.
//
//	[serve]
//	confined_databases = 4   # scopes' DuckDB databases open at once
type ServeSettings struct {
	// ConfinedDatabases caps the walled-off DuckDB databases of scoped
	// users open at once (one per scope in use, each with a share of the
	// memory budget); a scope's statement while all of them run other
	// scopes' statements is refused with SQLSTATE 53300. 0 is the engine's
	// default (engine.DefaultConfinedDatabases).
	ConfinedDatabases int `toml:"confined_databases"`
}

// validate refuses a limit no server can run with.
func (s ServeSettings) validate() error {
	if s.ConfinedDatabases < 0 {
		return &meterstore.ConfigError{Setting: "serve.confined_databases", Problem: fmt.Sprintf("%d", s.ConfinedDatabases), Fix: "write a number ≥ 1, or leave it out for the default (4)"}
	}
	return nil
}
