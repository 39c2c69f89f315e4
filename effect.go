package meterstore

import (
	"errors"
	"fmt"
)

// Effect is what writing one row did to the reading it belongs to. Both tiers
// report the same four, so a caller auditing corrections need not know where a
// row landed. Being stored and becoming current are not the same thing.
type Effect uint8

const (
	// Inserted: the first value for this reading (in its version scope).
	Inserted Effect = iota + 1
	// Superseded: the row became current; another stopped being.
	Superseded
	// Shadowed: stored, but an existing higher version still wins.
	Shadowed
	// Duplicate: already stored at this version with the same assertion; nothing written.
	Duplicate
)

func (e Effect) String() string {
	switch e {
	case Inserted:
		return "Inserted"
	case Superseded:
		return "Superseded"
	case Shadowed:
		return "Shadowed"
	case Duplicate:
		return "Duplicate"
	}
	return fmt.Sprintf("Effect(%d)", uint8(e))
}

// ChangedCurrentValue reports whether the write changed what a resolved query returns.
func (e Effect) ChangedCurrentValue() bool { return e == Inserted || e == Superseded }

// Displacement reports one written row and its effect, observed inside the
// write itself (the hot transaction, or under the cold-append lease), never by
// a separate read.
type Displacement struct {
	Row    Row // as written: validated, balancing_day derived, declared columns canonical
	Effect Effect
	// Superseded is the row that stopped being current, for Effect == Superseded.
	Superseded *Row
	// Outranking is the stored row whose higher version stays current, for
	// Effect == Shadowed and for a Duplicate a higher version outranks: what
	// the write itself saw, so an authored value can continue the stored
	// version sequence from it without a read another writer can race.
	Outranking *Row
}

// ErrConflict is the root of every write refused because it contradicts stored
// state, in either tier: a different value under a stored version, a second
// network operator, an overlap, a watermark moving backwards, a lost commit
// race, an authoritative value outranked. Each tier's narrow sentinels wrap it.
var ErrConflict = errors.New("write conflicts with stored state")

// The rules PostgreSQL's constraints enforce on the hot tier and every cold
// write path enforces alike; each tier's typed errors wrap these, so a caller
// branches on the rule, not on the tier a row happened to land in.
var (
	// ErrOverlap: two intervals of one reading at one version overlap (the hot
	// tier's no_overlap exclusion): a sum would count the span twice.
	ErrOverlap = fmt.Errorf("overlapping intervals within one version: %w", ErrConflict)
	// ErrSecondOperator: a second network operator for one reading (the hot
	// tier's one_operator exclusion): both scopes would survive resolution.
	ErrSecondOperator = fmt.Errorf("second network operator for a reading: %w", ErrConflict)
	// ErrRestatement: a different assertion under a stored (merge key, version).
	ErrRestatement = fmt.Errorf("conflicting restatement under an existing version: %w", ErrConflict)
)

// ErrWatermarkMissing: a cold table holds data files but no snapshot of its
// current ancestry carries the tiering watermark. It lives here, beside the
// conflict root, because the cold tier reports it and the engine and the store
// branch on it without either knowing the catalog.
var ErrWatermarkMissing = errors.New("tiering watermark missing")
