package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// The session time zone decides what a timestamp typed without an offset
// means ("from" >= '2025-10-24' is that zone's midnight), what ::DATE of a
// TIMESTAMPTZ is, and how TIMESTAMPTZ values print. It starts as [engine]
// time_zone (UTC when unset) and changes with SET TimeZone, SET TIME ZONE or
// .timezone; RESET TimeZone (or .timezone default) returns to the setting.
//
// The engine's DuckDB databases carry the zone as a database-wide setting, and
// a scoped session's database has its configuration locked, so a change opens
// the deployment's engine again in the new zone (the tiers and their
// connections stay); the view (read mode, pins, scope) is derived anew on it.

// timeZoneStatement recognises the statements that set or reset the session
// time zone and returns the zone they name ("" = the configured one).
var timeZoneStatement = regexp.MustCompile(`(?is)^\s*(?:SET\s+(?:SESSION\s+|LOCAL\s+|GLOBAL\s+)?(?:TIMEZONE\s*(?:=|\bTO\b)|TIME\s+ZONE\b)\s*(.*?)|RESET\s+(?:SESSION\s+|LOCAL\s+|GLOBAL\s+)?(?:TIMEZONE|TIME\s+ZONE))\s*;?\s*$`)

// timeZoneOf reports whether stmt sets or resets the time zone, and to what.
func timeZoneOf(stmt string) (zone string, ok bool) {
	m := timeZoneStatement.FindStringSubmatch(stmt)
	if m == nil {
		return "", false
	}
	zone = strings.TrimSpace(m[1])
	if len(zone) >= 2 && zone[0] == '"' && zone[len(zone)-1] == '"' {
		zone = zone[1 : len(zone)-1]
	} else {
		zone = unquoteLiteral(zone)
	}
	if strings.EqualFold(zone, "default") || strings.EqualFold(zone, "local") {
		zone = ""
	}
	return zone, true
}

// errUnknownZone is a time zone DuckDB's ICU does not know.
var errUnknownZone = errors.New("unknown time zone")

// setTimeZone makes zone the session time zone ("" = the configured one).
func (sh *shell) setTimeZone(ctx context.Context, zone string) error {
	if zone != "" {
		var canonical sql.NullString
		if err := sh.duckDB().QueryRowContext(ctx, "SELECT min(name) FROM pg_timezone_names() WHERE lower(name) = lower(?)", zone).Scan(&canonical); err != nil {
			return fmt.Errorf("look up time zone %q: %w", zone, err)
		}
		if !canonical.Valid {
			return withHint(fmt.Errorf("%w %q", errUnknownZone, zone), "name an IANA zone, e.g. SET TimeZone = 'Europe/Berlin' or .timezone UTC (SELECT name FROM pg_timezone_names() in msql --scratch lists them)")
		}
		zone = canonical.String
	}
	switch s := sh.sess.(type) {
	case *engineSession:
		if err := s.setTimeZone(ctx, zone); err != nil {
			return err
		}
	case *scratchSession:
		if sh.es != nil {
			return errors.New("the time zone cannot change while hot is attached; .detach first")
		}
		q := "RESET GLOBAL TimeZone"
		if zone != "" {
			q = "SET GLOBAL TimeZone = " + sqltext.String(zone)
		}
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return timeZoneError(zone, err)
		}
	}
	sh.p.values = valueFormatter(ctx, sh.duckDB())
	return nil
}

// timeZone is the session time zone as DuckDB names it.
func (sh *shell) timeZone(ctx context.Context) (string, error) {
	if sh.es != nil && sh.sess == session(sh.es) {
		return sh.es.eng.TimeZone(), nil
	}
	var zone string
	err := sh.duckDB().QueryRowContext(ctx, "SELECT current_setting('TimeZone')").Scan(&zone)
	return zone, err
}

// setTimeZone opens the engine again in zone and derives the view on it; on
// an error the session keeps its zone.
func (s *engineSession) setTimeZone(ctx context.Context, zone string) error {
	if zone == "" {
		zone = s.d.timeZone
	}
	if err := s.d.reopenEngine(ctx, zone); err != nil {
		return timeZoneError(zone, err)
	}
	return s.rebuild()
}

func timeZoneError(zone string, err error) error {
	return withHint(fmt.Errorf("time zone %q: %w", zone, err), "name an IANA zone, e.g. SET TimeZone = 'Europe/Berlin' or .timezone UTC")
}

func (sh *shell) dotTimeZone(args []string, _ string) error {
	switch len(args) {
	case 0:
		zone, err := sh.timeZone(sh.ctx)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(sh.p.target(), zone)
		sh.p.endResult()
		return err
	case 1:
		zone := args[0]
		if zone == "default" {
			zone = ""
		}
		return sh.setTimeZone(sh.ctx, zone)
	}
	return errors.New(".timezone takes an IANA zone (Europe/Berlin, UTC) or default")
}
