package store

import (
	"errors"
	"fmt"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/internal/pglock"
)

// Sentinels a caller branches on. Narrow ones wrap broader ones where that is
// what they are; check them with errors.Is.
var (
	// ErrBelowBoundary is returned by a HotWriter for an interval below the
	// boundary it was opened at. Nothing was written; route it with Append.
	ErrBelowBoundary = errors.New("interval below the tiering boundary")
	// ErrLockTimeout: the cold-append lease was not free within its budget
	// (about 14 s). Nothing was changed; the call is safe to retry.
	ErrLockTimeout = pglock.ErrLockTimeout
	// ErrWrongTimeModel: an interval write on a point table or a register write
	// on an interval table (the message names the right call).
	ErrWrongTimeModel = errors.New("write does not match the table's time model")
	// ErrInvariantViolated: stored rows contradict an invariant the write paths
	// guard — two winners for one reading (two network operators), found on a
	// read. Nothing is rejected at a boundary; something already is wrong.
	ErrInvariantViolated = errors.New("stored rows violate an invariant")
	// ErrAmbiguousSeries: a typed read spans two channels or two readings; the
	// message names the narrowing (.Obis, .Melo, .ColumnEq).
	ErrAmbiguousSeries = errors.New("read spans more than one reading")
	// ErrNotMergeKey: ColumnEq named a column that is not part of the merge key.
	ErrNotMergeKey = errors.New("not a merge-key column")
	// ErrAuthoritativeConflict: AppendAuthoritative ran out of rounds because
	// another writer keeps authoring the same reading (a meterstore.ErrConflict).
	ErrAuthoritativeConflict = fmt.Errorf("%w: authoritative value outranked on every round", meterstore.ErrConflict)
	// ErrUnknownSubject: a subject reference the registry does not back (never
	// issued, or erased).
	ErrUnknownSubject = errors.New("subject reference not backed by the registry")
	// ErrSubjectErased: the identifier was erased and is suppressed; it cannot be
	// registered again until LiftSuppression.
	ErrSubjectErased = errors.New("subject was erased and is suppressed")
	// ErrPurged: the table was purged through this handle.
	ErrPurged = errors.New("table was purged")
)

// IsConflict reports whether err is a write refused because it contradicts
// stored state, in either tier: a different value under a stored version, a
// second network operator, an overlap, or an authoritative conflict — every
// one wraps meterstore.ErrConflict.
func IsConflict(err error) bool { return errors.Is(err, meterstore.ErrConflict) }

// IsRetryable reports whether err changed nothing and the call may simply be
// retried: a lease timeout or a concurrent hot write.
func IsRetryable(err error) bool {
	return errors.Is(err, ErrLockTimeout) || errors.Is(err, hot.ErrConcurrentWrite)
}
