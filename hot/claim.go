package hot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/pglock"
)

// checkArchived names the CHECK of the archived range's partition; it refuses
// every row.
const checkArchived = "archived_rows_belong_to_iceberg"

// archivedName is the partition holding the table's archived range. A
// MeterStore table name is a plain lower-case identifier, so a name with '$'
// cannot be another table's or a day partition's.
func (s *Store) archivedName() string { return s.cfg.Name() + "$archived" }

// ClaimBelow hands every range below w to the cold tier, in one transaction
// serialised with partition creation (EnsurePartitions' advisory lock): it
// detaches the attached partitions below w and returns them, and makes w the
// end of the table's archived range — a partition FROM (MINVALUE) TO (w) whose
// CHECK refuses every row. From its commit on, nothing can put a row below w
// into PostgreSQL, whatever watermark the writer routed by: a partition there
// is not created and a row there fails, both with ErrArchivedRange, so the
// archival that commits watermark w next cannot hide a row a writer was told
// it wrote. A write that committed before the claim is in a returned
// partition, which the caller streams into that commit.
//
// The caller holds the archiver lease and passes it: the claim checks its
// token in the claim's own transaction (pglock.Lease.CheckIn), so a holder
// whose session ended, and whose lease another archiver took since, cannot
// move the archived range under that archiver — it gets pglock.ErrLeaseLost.
// w must be a partition boundary; it may
// lie below the current end — a claim whose commit never happened is withdrawn
// by claiming the committed watermark again, and a zero w (nothing archived)
// withdraws the archived range. A claim that changes nothing (same end,
// nothing attached below) costs two catalogue reads and no DDL.
func (s *Store) ClaimBelow(ctx context.Context, lease *pglock.Lease, w time.Time) ([]Partition, error) {
	w = w.UTC()
	if !w.IsZero() && !s.PartitionStart(w).Equal(w) {
		return nil, fmt.Errorf("claim %s below %s: not a partition boundary", s.cfg.Name(), w.Format(time.RFC3339))
	}
	if err := lease.Check(ctx); err != nil {
		return nil, fmt.Errorf("claim %s below %s: %w", s.cfg.Name(), w.Format(time.RFC3339), err)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("claim %s below %s: %w", s.cfg.Name(), w.Format(time.RFC3339), err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", pglock.Key("partition:"+s.cfg.Name())); err != nil {
		return nil, fmt.Errorf("claim %s: lock: %w", s.cfg.Name(), err)
	}
	if err := lease.CheckIn(ctx, tx); err != nil {
		return nil, fmt.Errorf("claim %s below %s: %w", s.cfg.Name(), w.Format(time.RFC3339), err)
	}
	end, err := s.archivedEnd(ctx, tx)
	if err != nil {
		return nil, err
	}
	parts, err := s.partitions(ctx, tx)
	if err != nil {
		return nil, err
	}
	var claimed []Partition
	for _, p := range parts {
		if p.From.Before(w) {
			claimed = append(claimed, p)
		}
	}
	if end.Equal(w) && len(claimed) == 0 {
		return nil, nil
	}
	q := meterstore.QuoteIdent
	stmts := make([]string, 0, len(claimed)+2)
	for _, p := range claimed {
		stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s DETACH PARTITION %s", q(s.cfg.Name()), q(p.Name)))
	}
	stmts = append(stmts, "DROP TABLE IF EXISTS "+q(s.archivedName()))
	if !w.IsZero() {
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE %s PARTITION OF %s (CONSTRAINT %s CHECK (false)) FOR VALUES FROM (MINVALUE) TO (%s)",
			q(s.archivedName()), q(s.cfg.Name()), q(checkArchived), pgTimestamp(w)))
	}
	for _, stmt := range stmts {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return nil, fmt.Errorf("claim %s below %s: %w", s.cfg.Name(), w.Format(time.RFC3339), err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("claim %s below %s: commit: %w", s.cfg.Name(), w.Format(time.RFC3339), err)
	}
	for i := range claimed {
		s.forget(claimed[i])
		claimed[i].Attached = false
	}
	return claimed, nil
}

// archivedEnd is the end of the table's archived range: zero when no claim
// was ever made.
func (s *Store) archivedEnd(ctx context.Context, tx pgx.Tx) (time.Time, error) {
	var end time.Time
	err := tx.QueryRow(ctx, `SELECT (regexp_match(pg_get_expr(c.relpartbound, c.oid), $2))[1]::timestamptz
		FROM pg_class c WHERE c.oid = to_regclass($1) AND c.relispartition`,
		meterstore.QuoteIdent(s.archivedName()), `TO \('([^']*)'\)`).Scan(&end)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("read the archived range of %s: %w", s.cfg.Name(), err)
	}
	return end.UTC(), nil
}
