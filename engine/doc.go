// Package engine is MeterStore's SQL session: an embedded DuckDB in which every
// configured table appears as two relations — readings (resolved: the latest
// version per merge key and version_scope) and readings_versions (every
// version) — although neither is stored there. Each statement is rewritten
// before DuckDB runs it:
//
//	SQL ──json_serialize_sql──▶ parse tree ──gate──▶ exactly one SELECT, no file readers
//	     │
//	     ├─ find every reference (CTE-aware: joins, subqueries, set operations, IN)
//	     ├─ extract bounds on "from" per reference (conservative: AND only, OR widens,
//	     │  literals and parameters evaluated by DuckDB on the statement's connection)
//	     ├─ pin one Iceberg snapshot and its watermark W per table (once per statement)
//	     ├─ rewrite each reference into
//	     │      read_parquet(files iceberg-go planned)  WHERE from <  W   resolved, or elided
//	     │                                                              per run of files whose
//	     │                                                              statistics prove it
//	     │      UNION ALL meter_hot_scan(token)         WHERE from >= W   always resolved
//	     └─ json_deserialize_sql ──▶ DuckDB ──▶ rows + Provenance (watermarks, tiers, mode)
//	after the rows: re-read W and the detached partitions; if an archival moved
//	either while the hot tier was read, fail with ErrBoundaryMoved (Query retries).
//
// Resolution is rendered from the embedded resolution.sql, so the statement
// published for foreign engines and the plan executed here cannot drift
// (invariant 4). Elision is only ever proven from statistics (invariant 8) and
// extraction only ever widens a range (invariant 10).
//
// Handles derive: AsOf/AsOfTime (a pinned snapshot and version ceiling, cold
// only), AsKnownAt (a recorded_at ceiling, both tiers), InReadMode, Scoped,
// Isolated and Walled. A confined handle runs in a second DuckDB database walled
// off from the file system, and can only yield confined handles.
//
//	eng, _ := engine.Open(ctx, engine.Config{Tables: []engine.Table{{Config: cfg, Hot: engine.HotTierOf(h), Cold: engine.ColdTierOf(c)}}})
//	res, _ := eng.Query(ctx, `SELECT meter_balancing_day("from", sparte), sum(value) FROM readings GROUP BY 1`)
//	fmt.Println(res.Provenance) // watermark … · tiers cold+hot · mode unified
package engine
