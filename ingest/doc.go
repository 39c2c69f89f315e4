// Package ingest puts deliveries from files into a store: MSCONS interchanges,
// and CSV or Parquet exports of the systems a deployment replaces. It is what
// `msql import`, the shell's .import and a Go job that received a delivery
// all call; every row goes through the store's write paths, never around them.
//
// The unit of all-or-nothing is a batch: one MSCONS message, or — in a CSV or
// Parquet file — every row of one (malo_id, obis_code, version_scope) group,
// that is one channel's Bilanzierungsmonat from one network operator, with
// every version of it the file holds. A batch that breaks a rule is refused
// whole, naming the file, the message reference or the data row, the segment
// or column, and the rule; the other batches go in. Importing the same files
// again changes nothing: every row comes back Duplicate (invariant 5).
//
// Where a batch goes:
//
//	every row from ≥ W and below the bulk boundary B  → store.Table.Backfill:
//	    one Iceberg commit for all such batches, files sorted per month, the
//	    watermark moved to B (B ≤ the lowest row PostgreSQL holds, ≤ now −
//	    settlement lag): history never passes through PostgreSQL's constraints
//	anything else                                     → store.Table.Append (or AppendReadings):
//	    late corrections below W to Iceberg (invariant 7), the rest to PostgreSQL;
//	    a batch with rows on both sides of W is split at it, each half whole
//	    or refused alone (no write spans both tiers atomically)
//
// Files are read ahead of writing, up to two million rows at a time, so that
// one plan covers them: history spread over many files still goes in as one
// commit, and the watermark it moves does not cut through the next file. A
// file itself is read whole first (a CSV or Parquet batch is complete only at
// the file's end), so memory grows with the largest file.
//
// A bulk commit that is refused (a conflict between two batches, the archival
// lease held elsewhere) is not a refusal of the batches: they go through
// Append one by one instead, where each stands alone.
//
// The tabular layout is the table's physical columns (see Columns): the
// readers are DuckDB's own read_csv and read_parquet, run on the unrestricted
// in-process database, every value taken as text and parsed here — quantities
// stay exact decimals, a float column is refused, and a timestamp without an
// offset is refused unless Options.TimeZone says which zone it is in.
//
//	rep, err := ingest.Files(ctx, st, ingest.Options{Set: map[string]string{"tenant": "t1"}}, "history.parquet", "mscons/")
//	fmt.Println(rep)           // rows hot/cold, Inserted/Superseded/Shadowed/Duplicate, refusals
//	if !rep.OK() { … }         // some batches were refused: rep.Refused says which and why
package ingest
