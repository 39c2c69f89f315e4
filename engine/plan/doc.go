// Package plan is MeterStore's planner: it turns one statement over the
// session's relations readings and readings_versions into the statement
// DuckDB runs, each reference replaced by its tier split. Each statement is
// parsed by DuckDB (json_serialize_sql) into a typed tree (internal/sqltree)
// and planned by named passes, in this order (passes.go; one pass_*.go file each):
//
//	SQL ─json_serialize_sql─▶ tree
//	 1 gate                        exactly one SELECT; no file readers, other databases or unknown relations
//	 2 expand table functions      meter_completeness(…) → its statement over the resolved relation
//	 3 find references             every reference, CTE-aware: joins, subqueries, set operations, IN
//	                               a clause the replacement cannot carry (AT …) refused, never dropped
//	 4 stored balancing day        meter_balancing_day/month("from", sparte) → the stored balancing_day column
//	 5 group by day first          GROUP BY date_trunc('month', balancing_day) with sum/min/max/count(*) →
//	                               grouped by balancing_day, then those rows by the month (decomposable only)
//	 6 extract bounds              bounds on "from" and merge-key equalities per reference: AND only, OR widens,
//	                               literals and parameters evaluated by DuckDB on the statement's connection
//	 7 system references           system.* → the session catalog's (only its table's rows when isolated)
//	 8 pin snapshot and watermark  one Iceberg snapshot and its watermark W per table, once per statement
//	 9 split tiers                 cold [lo, min(hi, W)) with the planned files · hot [max(lo, W), hi) with
//	                               the detached partitions · scope and ceilings in both
//	10 elide or resolve            per run of cold files, from statistics and footer marks: elided, by
//	                               exclusion, by merge, ranked; superseded files left out of a current read
//	11 hot partials                a day-first split whose WHERE the hot scans imply: PostgreSQL resolves the hot
//	                               rows and computes their partials by day (meter_hot_partials(token))
//	12 drop implied bounds         a WHERE bound on "from" every row of the one reference's halves satisfies is
//	                               taken out (a parameter's kept as value IS NOT DISTINCT FROM itself): the files
//	                               whose statistics lie within the range are read with no "from" filter
//	13 finite bounds               a comparison of a time column with ±infinity, anywhere (OR, NOT, CASE, joins,
//	                               IN, BETWEEN, parameters) → isfinite and a finite instant, the same answer for
//	                               any value: DuckDB pushes comparisons into iceberg_scan, which refuses infinities
//	14 latest row per key          SELECT DISTINCT ON (k…) cols|* … [WHERE of k… alone] ORDER BY [k…,] "from" DESC, …
//	                               over one reference: the cold half read only for the keys the hot half lacks
//	                               (every hot "from" ≥ W > every cold "from", so a key's latest row is hot if any is;
//	                               a WHERE of the keys keeps or drops a key whole, one of any other column is refused)
//	15 render                      read_parquet(files) WHERE from < W  UNION ALL  meter_hot_scan(token) WHERE from ≥ W,
//	                               EXPLAIN lines, provenance; each reference becomes a slot table in the tree;
//	                               a hot-partials split: (inner level over the cold half) UNION ALL the hot partials
//	tree ─json_deserialize_sql─▶ SQL, each slot's name replaced by its relation's text (slots.go)
//	     ──▶ Plan{SQL, Provenance, Explain, Scans}
//
// Run(ctx, Input) is the entry point. Input carries what the planner reads
// besides the statement: the session's connection (literals are evaluated
// there), the tables it sees with their tiers (tier.go: ColdTier and HotTier,
// the tier contract as the planner reads it), the session's view (read mode,
// pins, ceilings, scope, confinement), the paths each half may take, and the
// registry the planned scans are handed to the session's table functions by.
// After the rows, Plan.CheckBoundary re-lists the detached partitions, then
// re-reads W; if an archival moved either while the hot tier was read, it
// fails with ErrBoundaryMoved (the session retries).
//
// Elision, the proof. Resolution keeps, per resolution key (merge key +
// version_scope), the row of the highest version; it can be skipped for rows
// whose key occurs once. Files are grouped into runs: files whose boxes of
// "from" bounds × malo_id bounds overlap, transitively. Both columns are in
// the merge key, so no key spans two runs, and each run is decided alone:
//
//   - clean (read as it is): one file holding one version, or one file the
//     compactor marked keys-unique (it wrote the file sorted by the key and
//     saw no key twice), or files all of one single version — (merge key,
//     version) is unique in the store;
//   - by exclusion: the run splits into a base whose keys cannot repeat (its
//     own runs clean) and upper files whose every version lies above every
//     base version; a base row is then the answer unless upper holds its
//     key, and only upper's keys (usually a few corrections) are checked
//     against — a late correction at a creation-time version into a
//     compacted month is such a run;
//   - by merge: a base whose keys cannot repeat holds most rows, the other
//     files any versions; a base row is the answer unless the others hold
//     its key, and only the rows of the keys they hold are ranked — a late
//     correction restating a compacted month at its days' versions, or the
//     superseded file read under a ceiling;
//   - ranked (resolution.sql's ROW_NUMBER()) otherwise, over that run only.
//
// A file marked superseded holds only rows with a higher version of their key
// in files of the same snapshot; a current read leaves it out, but a version
// or recorded_at ceiling can make its rows the answer, so then it is read and
// its run resolved. A missing or truncated bound spans its axis, and a
// missing mark proves nothing (invariant 8). TestElisionNeverHidesARepeatedKey
// checks the rules against a brute-force fold over generated layouts.
//
// Resolution is rendered from the embedded resolution.sql, so the statement
// published for foreign engines and the plan executed here cannot drift
// (invariant 4). Elision is only ever proven from statistics (invariant 8) and
// extraction only ever widens a range (invariant 10). What each statement
// becomes is kept as golden files in testdata/rewrite (TestRewriteGoldens:
// go test ./engine/plan -run TestRewriteGoldens -update, then read the diff;
// rewrite stop=PASS shows the plan as it stands after one pass, see
// testdata/rewrite/stages); the passes' tests plan against fixed tiers in a
// DuckDB that stands in for the session (session_test.go).
package plan
