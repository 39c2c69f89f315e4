package duckstream

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// AmbiguousDateError refuses a time.Time bound to a DATE parameter whose
// calendar day in its own location is not its day in the session's zone: a
// Go caller's Berlin midnight in a UTC session is the day before in UTC, and
// which of the two it means cannot be told from the value.
type AmbiguousDateError struct {
	Param   string // the parameter as the statement names it ("1", "day")
	Value   time.Time
	Zone    string // the session's time zone
	Own     string // the value's day in its own location
	Session string // the value's day in the session's zone
}

func (e *AmbiguousDateError) Error() string {
	return fmt.Sprintf("parameter $%s is a DATE, and the time.Time bound to it (%s) is %s in its own zone but %s in the session's (%s); "+
		"pass the day as a string (%q) or as a time.Time in the session's zone",
		e.Param, e.Value.Format(time.RFC3339), e.Own, e.Session, e.Zone, e.Own)
}

// sessionDates returns args with each time.Time bound to a DATE parameter of
// stmt — other than a UTC midnight, which is a calendar day already — replaced
// by its day as a UTC midnight, the form duckdb-go binds as that day. duckdb-go binds a time.Time to a DATE as its UTC day, while DuckDB
// casts a TIMESTAMPTZ to DATE in the session's zone; the day taken here is the
// session's, so a parameter means the same day whether DuckDB types it DATE or
// leaves it to a cast — and the planner, which evaluates bounds through this
// package too, prunes by the day the statement reads.
func sessionDates(ctx context.Context, d *duckdb.Conn, stmt *duckdb.Stmt, args []driver.NamedValue) ([]driver.NamedValue, error) {
	var zone *time.Location
	out, copied := args, false
	for i := range min(stmt.NumInput(), len(args)) {
		j, name := argumentOf(stmt, args, i)
		t, ok := args[j].Value.(time.Time)
		if !ok || isDate(t) {
			continue
		}
		if ty, err := stmt.ParamType(i + 1); err != nil || ty != duckdb.TYPE_DATE {
			continue
		}
		if zone == nil {
			var err error
			if zone, err = sessionZone(ctx, d); err != nil {
				return nil, err
			}
		}
		own, session := t.Format(time.DateOnly), t.In(zone).Format(time.DateOnly)
		if own != session {
			return nil, &AmbiguousDateError{Param: name, Value: t, Zone: zone.String(), Own: own, Session: session}
		}
		if !copied {
			out, copied = append([]driver.NamedValue(nil), args...), true
		}
		y, m, day := t.Date()
		out[j].Value = time.Date(y, m, day, 0, 0, 0, 0, time.UTC)
	}
	return out, nil
}

// isDate: t is a UTC midnight, the form a calendar day takes as a time.Time
// (duckdb-go's DATE values, pgwire's and Flight SQL's date parameters): its
// day is the one it names, in any session zone.
func isDate(t time.Time) bool {
	return t.Location() == time.UTC && t.Equal(t.Truncate(24*time.Hour))
}

// argumentOf is the index into args of the argument duckdb-go binds to
// stmt's parameter i (0-based) — by position, then ordinal, then name, as its
// Stmt.bind chooses — and the parameter's name.
func argumentOf(stmt *duckdb.Stmt, args []driver.NamedValue, i int) (int, string) {
	name, _ := stmt.ParamName(i + 1)
	j := i
	for k, a := range args {
		if a.Ordinal == i+1 {
			j = k
		}
	}
	for k, a := range args {
		if a.Name != "" && a.Name == name {
			j = k
		}
	}
	return j, name
}

// sessionZone is the time zone DuckDB's casts use on d.
func sessionZone(ctx context.Context, d *duckdb.Conn) (*time.Location, error) {
	rows, err := d.QueryContext(ctx, "SELECT current_setting('TimeZone')", nil)
	if err != nil {
		return nil, fmt.Errorf("the session's time zone: %w", err)
	}
	defer rows.Close()
	v := make([]driver.Value, 1)
	if err := rows.Next(v); err != nil && err != io.EOF {
		return nil, fmt.Errorf("the session's time zone: %w", err)
	}
	name, _ := v[0].(string)
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("the session's time zone %q: %w", name, err)
	}
	return loc, nil
}
