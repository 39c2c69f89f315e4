package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/meterstore/meterstore"
)

// DefaultRecordedAtSkew is how far a caller's recorded_at may lie ahead of the
// store's clock when Config.RecordedAtSkew is zero: clocks of two hosts
// synchronised by NTP agree far closer than this.
const DefaultRecordedAtSkew = 5 * time.Minute

// ErrRecordedAtFuture: a delivery's recorded_at lies ahead of the store's
// clock by more than the allowed skew (RecordedAtError names both). Nothing
// was written.
var ErrRecordedAtFuture = errors.New("recorded_at in the future")

// RecordedAtError refuses a delivery stamped beyond the store's clock: a row
// recorded "in the future" is hidden from every AsKnownAt(now) until that
// instant passes, and then appears in answers already given.
type RecordedAtError struct {
	Table      string
	MaloID     string
	Obis       string
	RecordedAt time.Time
	Now        time.Time     // the store's clock (Config.Now) when the write began
	Skew       time.Duration // Config.RecordedAtSkew
}

func (e *RecordedAtError) Error() string {
	return fmt.Sprintf("append to %s: delivery %s %s: recorded_at %s is %s ahead of the store's clock (%s), more than the allowed skew of %s; "+
		"recorded_at is when the store learned the value — leave it zero for the store to stamp it, or fix the sending host's clock",
		e.Table, e.MaloID, e.Obis, e.RecordedAt.UTC().Format(time.RFC3339Nano), e.RecordedAt.Sub(e.Now),
		e.Now.UTC().Format(time.RFC3339Nano), e.Skew)
}

func (e *RecordedAtError) Unwrap() error { return ErrRecordedAtFuture }

// Clock names who stamped a delivery's recorded_at.
type Clock uint8

const (
	// StoreClock: the caller left recorded_at zero and the store stamped it
	// with its clock (Config.Now) when the write began.
	StoreClock Clock = iota + 1
	// CallerClock: the caller gave recorded_at — its word, checked only not to
	// lie ahead of the store's clock beyond the skew.
	CallerClock
)

// String names the clock.
func (c Clock) String() string {
	if c == StoreClock {
		return "store"
	}
	return "caller"
}

// Stamp is the transaction time one delivery was written with.
type Stamp struct {
	RecordedAt time.Time
	Clock      Clock
}

// stamp gives every delivery its transaction time: the store's clock for one
// that carries none, its own otherwise — refused with a RecordedAtError when
// that lies beyond the store's clock and the skew.
func (t *Table) stamp(series []meterstore.StoredSeries) ([]meterstore.StoredSeries, []Stamp, error) {
	now := t.st.cfg.Now().UTC()
	skew := t.st.cfg.recordedAtSkew()
	out := make([]meterstore.StoredSeries, len(series))
	stamps := make([]Stamp, len(series))
	for i, s := range series {
		if s.RecordedAt.IsZero() {
			s.RecordedAt = now
			stamps[i] = Stamp{RecordedAt: now.Truncate(time.Microsecond), Clock: StoreClock}
		} else {
			if skew >= 0 && s.RecordedAt.After(now.Add(skew)) {
				return nil, nil, &RecordedAtError{Table: t.cfg.Name(), MaloID: s.MaloID.String(), Obis: s.Obis.String(),
					RecordedAt: s.RecordedAt, Now: now, Skew: skew}
			}
			stamps[i] = Stamp{RecordedAt: s.RecordedAt.UTC().Truncate(time.Microsecond), Clock: CallerClock}
		}
		out[i] = s
	}
	return out, stamps, nil
}
