package main

import (
	"flag"
	"time"

	"github.com/meterstore/meterstore/serve/access"
	"github.com/meterstore/meterstore/settings"
)

// serveLimitFlags are the msql serve flags a [serve] key can set.
type serveLimitFlags struct {
	statementTimeout, flightIdle *time.Duration
	perUser                      *int
	limits                       *access.Limits
}

// fromServeSection sets each limit whose flag was not given on the command
// line from its key in the configuration's [serve] section; a key left out
// (0) keeps the flag's default. confined_databases travels with the
// deployment (deployFlags), which reads the file itself.
func fromServeSection(fs *flag.FlagSet, s settings.ServeSettings, dst serveLimitFlags) {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	set := func(name string, present bool, apply func()) {
		if present && !given[name] {
			apply()
		}
	}
	set("statement-timeout", s.StatementTimeout > 0, func() { *dst.statementTimeout = s.StatementTimeout })
	set("flight-session-idle", s.FlightSessionIdle > 0, func() { *dst.flightIdle = s.FlightSessionIdle })
	set("max-statements-per-user", s.MaxStatementsPerUser > 0, func() { *dst.perUser = s.MaxStatementsPerUser })
	set("max-statement-bytes", s.MaxStatementBytes > 0, func() { dst.limits.MaxStatementBytes = s.MaxStatementBytes })
	set("max-parameters", s.MaxParameters > 0, func() { dst.limits.MaxParameters = s.MaxParameters })
	set("max-nesting", s.MaxNesting > 0, func() { dst.limits.MaxNesting = s.MaxNesting })
	set("max-result-rows", s.MaxResultRows > 0, func() { dst.limits.MaxResultRows = s.MaxResultRows })
}
