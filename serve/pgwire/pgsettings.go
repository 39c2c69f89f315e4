package pgwire

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// checkSet refuses a SET that would change what a statement means but that
// the session cannot honour; every other SET stays a no-op (the session is
// read-only and most settings only shape a client's own behaviour).
//
// The session time zone is the engine's (its TimeZone setting, UTC by
// default), one for every session: the confined DuckDB database locks its
// configuration, so a session cannot change it. SET TimeZone to that zone, to
// DEFAULT or LOCAL, and RESET are accepted; any other zone is refused, naming
// the zone in force — accepted and ignored, it would let a client read
// '2026-03-01 00:00' as its own midnight while the server read UTC's.
func (sess *pgSession) checkSet(q string) error {
	zone, ok := timeZoneAssignment(q)
	if !ok {
		return nil
	}
	cur := sess.eng.TimeZone()
	switch strings.ToUpper(zone) {
	case "DEFAULT", "LOCAL":
		return nil
	}
	if sameZone(zone, cur) {
		return nil
	}
	return &pgError{code: "0A000",
		msg:  fmt.Sprintf("SET TimeZone to %s is not supported: every session of this server evaluates timestamps in %s (the deployment's time_zone setting)", zone, cur),
		hint: "write the offset into timestamp literals ('2026-03-01 00:00:00+01'), use AT TIME ZONE, or bind timestamptz parameters"}
}

// timeZoneAssignment reads the zone of SET [SESSION|LOCAL] TIME ZONE v or
// SET [SESSION|LOCAL] timezone {TO|=} v; ok is false for any other statement
// (RESET included: it restores the zone in force).
func timeZoneAssignment(q string) (zone string, ok bool) {
	words := strings.Fields(strings.NewReplacer("=", " = ", ";", " ").Replace(sqltext.StripComments(q)))
	if len(words) < 3 || !strings.EqualFold(words[0], "SET") {
		return "", false
	}
	words = words[1:]
	if strings.EqualFold(words[0], "SESSION") || strings.EqualFold(words[0], "LOCAL") {
		words = words[1:]
	}
	switch {
	case len(words) >= 3 && strings.EqualFold(words[0], "TIME") && strings.EqualFold(words[1], "ZONE"):
		words = words[2:]
	case len(words) >= 3 && strings.EqualFold(strings.Trim(words[0], `"`), "timezone") && (strings.EqualFold(words[1], "TO") || words[1] == "="):
		words = words[2:]
	default:
		return "", false
	}
	return strings.Trim(strings.Join(words, " "), `'"`), true
}

// utcNames are spellings PostgreSQL and DuckDB accept for UTC.
var utcNames = map[string]bool{"UTC": true, "ETC/UTC": true, "GMT": true, "ETC/GMT": true, "Z": true, "ZULU": true,
	"UCT": true, "ETC/UCT": true, "UNIVERSAL": true, "ETC/UNIVERSAL": true, "GMT0": true, "+00": true, "+00:00": true, "0": true}

func sameZone(a, b string) bool {
	return strings.EqualFold(a, b) || utcNames[strings.ToUpper(a)] && utcNames[strings.ToUpper(b)]
}

// startupZoneWarning is the warning for a time zone a client asked for in its
// startup message (pgjdbc always sends the JVM's zone, libpq sends PGTZ) that
// is not the engine's: PostgreSQL would make it the session's zone, this
// server cannot (the zone is the deployment's, as checkSet says) — and a
// SET TimeZone to it is refused, so the connection says so too rather than
// let the client read wall times in a zone that is not in force. Nil when the
// client named none or the engine's.
func (sess *pgSession) startupZoneWarning(asked string) *pgproto3.NoticeResponse {
	cur := sess.eng.TimeZone()
	if asked == "" || sameZone(asked, cur) || strings.EqualFold(asked, "DEFAULT") || strings.EqualFold(asked, "LOCAL") {
		return nil
	}
	return &pgproto3.NoticeResponse{Severity: "WARNING", SeverityUnlocalized: "WARNING", Code: "01000",
		Message: fmt.Sprintf("TimeZone %s from the connection's startup parameters is not in force: every session of this server evaluates timestamps in %s (the deployment's time_zone setting)", asked, cur),
		Hint:    "timestamps written without an offset and timestamp (without time zone) parameters mean " + cur + " wall time here: write offsets into literals, bind timestamptz, or run the client in " + cur}
}
