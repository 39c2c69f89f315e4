package catalog

import (
	"errors"
	"fmt"

	"github.com/meterstore/meterstore"
)

// Broad sentinels.
var (
	// ErrNoSuchTable: the cold table does not exist in the catalog.
	ErrNoSuchTable = errors.New("cold table does not exist")
	// ErrNoSnapshot: no snapshot with that id, or the instant is before the table's first snapshot.
	ErrNoSnapshot = errors.New("no such snapshot")
	// ErrFormatVersion: the table is not Iceberg format v2.
	ErrFormatVersion = errors.New("cold table is not Iceberg format v2")
	// ErrLayout: an existing table's partition spec or sort order is not the declared one.
	ErrLayout = errors.New("cold table layout differs from the declaration")
	// ErrUnsafeSchema: the configured schema narrows the table's (see SchemaCheck).
	ErrUnsafeSchema = errors.New("unsafe schema change")
	// ErrRetentionTooShort: snapshot expiry asked for less than the compliance floor.
	ErrRetentionTooShort = errors.New("snapshot retention shorter than the compliance floor")
	// ErrWatermarkMissing is meterstore.ErrWatermarkMissing (see Table.Watermark).
	ErrWatermarkMissing = meterstore.ErrWatermarkMissing
	// ErrDeleteFiles: the snapshot's scan carries Iceberg delete files (written
	// by another engine); reading the data files without them would count
	// deleted rows, so the table is refused until they are rewritten.
	ErrDeleteFiles = errors.New("cold table carries delete files")
	// ErrAboveWatermark: a cold append carried a row at or above the watermark (it belongs to the hot tier).
	ErrAboveWatermark = errors.New("row at or above the tiering watermark")
	// ErrBelowWatermark: history for CommitHistory carried a row below the
	// current watermark (a late correction, which AppendCold takes).
	ErrBelowWatermark = errors.New("row below the tiering watermark")
	// ErrUnitPair: a unit the row's Sparte cannot have (meterstore.ErrUnitPair).
	ErrUnitPair = meterstore.ErrUnitPair
)

// Narrow sentinels; each wraps meterstore.ErrConflict, the conflict root both tiers share.
var (
	ErrWatermarkBackwards = fmt.Errorf("tiering watermark would move backwards: %w", meterstore.ErrConflict)
	// ErrRestatement, ErrSecondOperator and ErrOverlap are the root package's:
	// the hot tier's constraint errors wrap the same ones.
	ErrRestatement    = meterstore.ErrRestatement
	ErrSecondOperator = meterstore.ErrSecondOperator
	ErrOverlap        = meterstore.ErrOverlap
	ErrCommitConflict = fmt.Errorf("concurrent commit by another writer: %w", meterstore.ErrConflict)
	// ErrFenced: a commit that moves the watermark found it set by another
	// commit since its run began, or the run's lease lost (see Fence).
	ErrFenced = fmt.Errorf("watermark commit fenced off: %w", meterstore.ErrConflict)
)

// ForeignIntervalError refuses a compaction whose files hold an interval
// reaching above the tiering watermark that conflicts with a row the hot tier
// holds. No write path of MeterStore stores such a pair — each checks the
// other tier's rows — so a file committed out of band brought it; compacting
// would mark the interval clean and every sum over the overlap would count
// both. Err is the hot tier's refusal, naming the reading, both intervals and
// the rule.
type ForeignIntervalError struct {
	Err error
}

func (e *ForeignIntervalError) Error() string {
	return fmt.Sprintf("the month's files hold an interval reaching above the tiering watermark that the hot tier's rows contradict (a file committed out of band; no write path stores such a pair): "+
		"remove that file from the table with the tool that added it (deliver its values through MeterStore, which checks them, if they are needed), then compact again: %v", e.Err)
}

func (e *ForeignIntervalError) Unwrap() error { return e.Err }
