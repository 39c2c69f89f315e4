package metering

import (
	"fmt"
	"time"
)

// WallClockError is a wall-clock time that names no single instant in its
// zone: one the clocks skip (they go forward) or one they show twice (they go
// back). It matches ErrInvalid.
type WallClockError struct {
	Wall time.Time // the wall clock, its fields read as local time
	Zone *time.Location
	// First and Second are the two instants a repeated wall clock names;
	// zero when the clocks skip it.
	First, Second time.Time
}

func (e *WallClockError) Error() string {
	w := e.Wall.Format("2006-01-02 15:04:05")
	if e.First.IsZero() {
		return fmt.Sprintf("%s does not exist in %s (the clocks skip it)", w, e.Zone)
	}
	return fmt.Sprintf("%s occurs twice in %s (the clocks go back): %s or %s", w, e.Zone,
		e.First.In(e.Zone).Format(time.RFC3339), e.Second.In(e.Zone).Format(time.RFC3339))
}

func (e *WallClockError) Unwrap() error { return ErrInvalid }

// InZone is the instant, in UTC, the wall clock wall shows in tz: wall's
// year to nanosecond read as local time there, whatever wall's own location.
// A wall clock tz skips or repeats is a *WallClockError: an offset is the only
// way to say which instant it means.
func InZone(wall time.Time, tz *time.Location) (time.Time, error) {
	w := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), time.UTC)
	t := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), tz)
	shows := func(x time.Time) time.Time {
		x = x.In(tz)
		return time.Date(x.Year(), x.Month(), x.Day(), x.Hour(), x.Minute(), x.Second(), x.Nanosecond(), time.UTC)
	}
	if !shows(t).Equal(w) {
		return time.Time{}, &WallClockError{Wall: w, Zone: tz}
	}
	for _, d := range []time.Duration{-time.Hour, time.Hour, -30 * time.Minute, 30 * time.Minute} {
		if other := t.Add(d); shows(other).Equal(w) {
			first, second := t, other
			if d < 0 {
				first, second = other, t
			}
			return time.Time{}, &WallClockError{Wall: w, Zone: tz, First: first.UTC(), Second: second.UTC()}
		}
	}
	return t.UTC(), nil
}
