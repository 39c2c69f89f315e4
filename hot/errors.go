package hot

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/meterstore/meterstore"
)

// Sentinels a caller branches on. Narrower ones wrap broader ones.
var (
	// ErrIntegrity is wrapped by every refusal of a database integrity rule; it
	// wraps meterstore.ErrConflict, the conflict root both tiers share.
	ErrIntegrity = fmt.Errorf("hot: %w: integrity rule refused the write", meterstore.ErrConflict)
	// ErrOverlap: two intervals of one reading at one version overlap. It
	// wraps meterstore.ErrOverlap, which the cold tier's refusal wraps too.
	ErrOverlap = fmt.Errorf("%w: %w", ErrIntegrity, meterstore.ErrOverlap)
	// ErrSecondOperator: a second network operator for one reading (wraps
	// meterstore.ErrSecondOperator).
	ErrSecondOperator = fmt.Errorf("%w: %w", ErrIntegrity, meterstore.ErrSecondOperator)
	// ErrRestatement: a different assertion under an existing (merge key,
	// version) (wraps meterstore.ErrRestatement).
	ErrRestatement = fmt.Errorf("%w: %w", ErrIntegrity, meterstore.ErrRestatement)
	// ErrInvalidRow: a row failed validation before anything was sent.
	ErrInvalidRow = errors.New("hot: invalid row")
	// ErrPartitionDetached: rows fall into a partition that is detached for archival.
	ErrPartitionDetached = errors.New("hot: partition detached for archival")
	// ErrArchivedRange: rows fall below the end of the table's archived range
	// (ClaimBelow): the cold tier's, committed or being committed. It wraps
	// ErrPartitionDetached, on which store.Append reads the watermark again and
	// routes anew.
	ErrArchivedRange = fmt.Errorf("%w: range claimed by the cold tier", ErrPartitionDetached)
	// ErrExtensionUnavailable: btree_gist cannot be created while integrity constraints are on.
	ErrExtensionUnavailable = errors.New("hot: extension btree_gist unavailable")
	// ErrSchemaMismatch: the existing table does not agree with the configuration.
	ErrSchemaMismatch = errors.New("hot: existing table disagrees with configuration")
	// ErrConcurrentWrite: another writer (not through this package) inserted rows for
	// the same readings during the call. Nothing was written; the call is idempotent, retry it.
	ErrConcurrentWrite = errors.New("hot: concurrent write to the same readings; nothing was written, retry")
	// ErrUnknownTable: a table name that is neither the parent nor one of its partitions.
	ErrUnknownTable = errors.New("hot: not this table or one of its partitions")
)

// RestatementError reports a row whose (merge key, version) is already stored
// with a different assertion (value, quality, unit, melo_id, version_scope or "to").
type RestatementError struct {
	Table   string
	Stored  meterstore.Row
	Offered meterstore.Row
	// Fields names what differs.
	Fields []string
	// Hint is the fix.
	Hint string
}

func (e *RestatementError) Error() string {
	return fmt.Sprintf("table %s: reading malo %s obis %s from %s: version %d is already stored with a different %s (stored %s, offered %s); %s",
		e.Table, e.Offered.MaloID, e.Offered.ObisCode, e.Offered.From.UTC().Format(time.RFC3339), e.Offered.Version,
		strings.Join(e.Fields, ", "), describe(e.Stored), describe(e.Offered), e.Hint)
}

func (e *RestatementError) Unwrap() error { return ErrRestatement }

func describe(r meterstore.Row) string {
	s := fmt.Sprintf("%s %s %s scope %s", r.Value.String(), r.Unit, r.Quality, r.VersionScope)
	if r.MeloID != nil {
		s += " melo " + *r.MeloID
	}
	return s
}

// OverlapError reports the "no overlapping intervals within one version" rule.
type OverlapError struct {
	Table      string
	Constraint string
	Detail     string // PostgreSQL's detail: the conflicting keys
	// Err is the exclusion violation; nil when Write's check across partition
	// boundaries found the overlap (Constraint then says so).
	Err *pgconn.PgError
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("table %s: rule no_overlap (%s) refused the write: two intervals of one reading at one version overlap, which double-counts every sum (%s); deliver one grid per version, or restate the span at a higher version (a correction)",
		e.Table, e.Constraint, e.Detail)
}

func (e *OverlapError) Unwrap() []error {
	if e.Err == nil { // found by Write's check across partitions, not by a constraint
		return []error{ErrOverlap}
	}
	return []error{ErrOverlap, e.Err}
}

// SecondOperatorError reports the "one network operator per reading" rule.
type SecondOperatorError struct {
	Table      string
	Constraint string
	Detail     string
	Err        *pgconn.PgError
}

func (e *SecondOperatorError) Error() string {
	return fmt.Sprintf("table %s: rule one_operator (%s) refused the write: a reading already has versions from another network operator, and two scopes would both survive resolution (%s); the version scope must name the network operator (NAD+MS), not a forwarding party's Marktpartner-ID",
		e.Table, e.Constraint, e.Detail)
}

func (e *SecondOperatorError) Unwrap() []error {
	if e.Err == nil { // found by Write's check across tiers, not by a constraint
		return []error{ErrSecondOperator}
	}
	return []error{ErrSecondOperator, e.Err}
}

// IsExclusionViolation reports whether err carries PostgreSQL's exclusion_violation (23P01).
func IsExclusionViolation(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23P01"
}

// IsCheckViolation reports whether err carries a CHECK violation (23514) and names the constraint.
func IsCheckViolation(err error) (constraint string, ok bool) {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "23514" {
		return pg.ConstraintName, true
	}
	return "", false
}

// mapWriteError turns an exclusion violation into the typed error naming its
// rule, a row with no partition into ErrPartitionDetached (a partition this
// process knew was detached by an archiver elsewhere) and a row in the archived
// range into ErrArchivedRange: the row belongs to whichever tier owns it after
// that archival (store.Append re-routes on both).
func (s *Store) mapWriteError(err error) error {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		return err
	}
	if pg.Code == "23514" && strings.HasPrefix(pg.Message, "no partition of relation") {
		s.forgetAll()
		return fmt.Errorf("%w: %s (another process detached the partition for archival; nothing was written): %w", ErrPartitionDetached, pg.Message, pg)
	}
	if pg.Code == "23514" && pg.ConstraintName == checkArchived {
		s.forgetAll()
		return fmt.Errorf("%w: a row lies below the watermark an archival committed or is committing; nothing was written, route it to Iceberg: %w", ErrArchivedRange, pg)
	}
	if pg.Code != "23P01" {
		return err
	}
	switch {
	case strings.HasSuffix(pg.ConstraintName, suffixNoOverlap):
		return &OverlapError{Table: s.cfg.Name(), Constraint: pg.ConstraintName, Detail: pg.Detail, Err: pg}
	case strings.HasSuffix(pg.ConstraintName, suffixOneOperator):
		return &SecondOperatorError{Table: s.cfg.Name(), Constraint: pg.ConstraintName, Detail: pg.Detail, Err: pg}
	}
	return err
}

// isUniqueViolation reports a unique_violation (23505): on Write's COPY it means
// a row classified as absent appeared meanwhile, written past the reading locks.
func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23505"
}

// droppedMeanwhile: err is PostgreSQL's undefined_table — a partition dropped
// (archived) between listing it and reading it.
func droppedMeanwhile(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "42P01"
}

// TierConflictsError is every pair of intervals on either side of the
// tiering watermark a check found the rules refuse, where it found more than
// one: Named holds the refusals (*OverlapError, *SecondOperatorError) of the
// first maxNamedConflicts, Total counts them all. errors.Is and errors.As see
// each named refusal.
type TierConflictsError struct {
	Total int
	Named []error
}

func (e *TierConflictsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d pairs of intervals conflict across the tiering watermark", e.Total)
	if e.Total > len(e.Named) {
		fmt.Fprintf(&b, " (the first %d named)", len(e.Named))
	}
	b.WriteString(": ")
	b.WriteString(e.Named[0].Error())
	for _, err := range e.Named[1:] {
		b.WriteString("; also ")
		b.WriteString(conflictDetail(err))
	}
	return b.String()
}

func (e *TierConflictsError) Unwrap() []error { return e.Named }

// conflictDetail is a refusal's rule and pair, without the advice its Error
// repeats.
func conflictDetail(err error) string {
	var overlap *OverlapError
	var operator *SecondOperatorError
	switch {
	case errors.As(err, &overlap):
		return overlap.Constraint + ": " + overlap.Detail
	case errors.As(err, &operator):
		return operator.Constraint + ": " + operator.Detail
	}
	return err.Error()
}
