// Package engine is MeterStore's SQL session: an embedded DuckDB in which every
// configured table appears as two relations — readings (resolved: the latest
// version per merge key and version_scope) and readings_versions (every
// version) — although neither is stored there. Each statement is planned by
// engine/plan (plan.Run: the gate, the references, the bounds, one pinned
// snapshot and watermark per table, the tier split, elision or resolution,
// the rendered statement); the session runs what the planner rendered:
//
//	Query / Cursor / Rows / Stream / Describe / Explain
//	  ─▶ plan.Run(ctx, plan.Input{conn, tables, view, paths, scans})   engine/plan
//	  ─▶ DuckDB runs plan.SQL: read_parquet / iceberg_scan for the cold half,
//	     meter_hot_scan (hotscan.go: PostgreSQL pages by token) or postgres_query
//	     for the hot half ──▶ rows + Provenance (watermarks, tiers, mode)
//	after the rows: plan.CheckBoundary re-lists the detached partitions, then
//	re-reads W; if an archival moved either while the hot tier was read, the
//	statement fails with ErrBoundaryMoved (Cursor and Query retry).
//
// The session owns what lives longer than a statement: the DuckDB databases
// (the engine's own, and the confined ones, confine.go), the table functions
// the rendered statement names and the registry of planned scans they read by
// token, the extensions and which path each half takes (extensions.go), the
// system tables (system.go), streaming (stream.go, internal/duckstream).
//
// Handles derive: AsOf/AsOfTime (a pinned snapshot and version ceiling, cold
// only), AsKnownAt (a recorded_at ceiling, both tiers), InReadMode, Scoped,
// Isolated and Walled. A confined handle runs in a second DuckDB database walled
// off from the file system, and can only yield confined handles.
//
//	eng, _ := engine.Open(ctx, engine.Config{Tables: []engine.Table{{Config: cfg, Hot: hotTier, Cold: coldTier}}})
//	res, _ := eng.Query(ctx, `SELECT meter_balancing_day("from", sparte), sum(value) FROM readings GROUP BY 1`)
//	fmt.Println(res.Provenance) // watermark … · tiers cold+hot · mode unified
package engine
