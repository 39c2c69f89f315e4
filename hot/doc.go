// Package hot is MeterStore's PostgreSQL tier: the recent, still-corrected window
// of a table, from DDL to streaming scans.
//
// Everything is derived from one validated meterstore.TableConfig:
//
//   - CreateTables: the parent table partitioned by RANGE ("from"), primary key =
//     merge key + version, CHECK constraints rendered from metering's canonical code
//     lists (sparte, unit, quality, resolution), the canonical OBIS and version_scope
//     shapes, coded and checked extra columns, "to" NOT NULL on an interval table and
//     NULL on a point table, balancing_day NOT NULL with no default.
//   - EnsurePartitions: UTC-aligned partitions named <table>_YYYY_MM_DD_HHMM, created
//     under an advisory lock so concurrent writers of a new day do not fail, each with
//     two EXCLUDE USING gist constraints (no overlap within a version; one network
//     operator per reading) over a 64-bit hash of the reading's identity, unless
//     integrity constraints are disabled.
//   - Write: one transaction per call, prior state read in that transaction, the
//     rows classified new sent with one binary COPY (never an UPDATE; a key that
//     appeared meanwhile is ErrConcurrentWrite), intervals crossing a partition
//     boundary checked against the neighbours, a Displacement per row (Inserted,
//     Superseded, Shadowed, Duplicate).
//   - Scan: keyset-paged by the full primary key, one page in memory, no transaction
//     held across pages.
//   - Partitions / Detach / Drop / TryArchiveLease for the archiver, and
//     ClaimBelow: before an archival commits watermark W it detaches every
//     partition below W and ends the table's archived range — a partition FROM
//     (MINVALUE) TO (W) whose CHECK refuses every row — at W, so no writer, however
//     stale its idea of the watermark, puts a row where no query reads it.
//
// Invariants guarded here (design.md numbering): 3 (nothing updated in place: ON
// CONFLICT never does UPDATE, a purge is DROP TABLE), 5 (redelivery is Duplicate, a
// different value under an existing version is a *RestatementError), 6 (codes and
// identifiers are validated on write, and the database refuses non-canonical
// spellings from any other writer), 9 (Drop refuses an attached partition).
//
// Write is tier-agnostic: routing rows below the tiering watermark to the cold tier
// (invariant 7) is the engine's job.
//
//	store := hot.New(pool, cfg)
//	if err := store.CreateTables(ctx, time.Now()); err != nil { … }
//	ds, err := store.Write(ctx, rows)
//	var re *hot.RestatementError
//	if errors.As(err, &re) { … a corrected value needs a higher version … }
package hot
