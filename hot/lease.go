package hot

import (
	"context"

	"github.com/meterstore/meterstore/internal/pglock"
)

// ArchiveLeaseName is the advisory-lock lease one archiver of the table holds.
func (s *Store) ArchiveLeaseName() string { return "archive:" + s.cfg.Name() }

// TryArchiveLease takes the table's archiver lease if it is free. A lease held by
// another archiver is a normal outcome: (nil, false, nil). Release the lease when
// done; it also ends with the holder's session.
func (s *Store) TryArchiveLease(ctx context.Context) (*pglock.Lease, bool, error) {
	return pglock.TryAcquire(ctx, s.pool, s.ArchiveLeaseName())
}
