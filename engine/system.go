package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine/plan"
)

func createSystemTables(ctx context.Context, conn *sql.Conn, catalog string) error {
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("CREATE SCHEMA IF NOT EXISTS %s.system", meterstore.QuoteIdent(catalog))); err != nil {
		return fmt.Errorf("create schema system: %w", err)
	}
	for name, cols := range plan.SystemTables {
		q := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.system.%s (%s)", meterstore.QuoteIdent(catalog), name, cols)
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create system.%s: %w", name, err)
		}
	}
	return nil
}

type systemRow []any

// RefreshSystemTables recomputes every system table at now, for every table
// of the engine (a confined handle's statements see only its own tables' rows).
func (e *Engine) RefreshSystemTables(ctx context.Context, now time.Time) error {
	rows := map[string][]systemRow{}
	for _, t := range e.tableList() {
		cfg := t.cfg
		snap, w, err := t.cold.Watermark(ctx, 0)
		// A lost watermark is what an operator comes here to see: the table is
		// listed unhealthy with none, and system.snapshots shows which carry one.
		lost := errors.Is(err, meterstore.ErrWatermarkMissing)
		if err != nil && !lost {
			return fmt.Errorf("system.tables: watermark of %s: %w", cfg.Name(), err)
		}
		var violations int64
		var wm, lag, snapID any
		if !w.IsZero() {
			if violations, err = t.hot.RowsBelow(ctx, w); err != nil {
				return fmt.Errorf("system.tables: %w", err)
			}
			wm, lag = w.UTC(), int64(now.Sub(w)/time.Second)
		}
		if snap != 0 {
			snapID = snap
		}
		det, err := t.hot.Detached(ctx)
		if err != nil {
			return fmt.Errorf("system.tables: detached partitions of %s: %w", cfg.Name(), err)
		}
		rows["tables"] = append(rows["tables"], systemRow{cfg.ResolvedName(), cfg.Name(), wm, lag, snapID, violations,
			int32(len(det)), violations == 0 && !lost, quarantineOf(t.cold), now.UTC()})
		for _, kv := range configSettings(cfg) {
			rows["config"] = append(rows["config"], systemRow{cfg.ResolvedName(), kv[0], kv[1]})
		}
		rows["resolution"] = append(rows["resolution"],
			systemRow{cfg.ResolvedName(), "resolution_sql", cfg.ResolutionSQL()},
			systemRow{cfg.ResolvedName(), "partition_by", strings.Join(append(cfg.MergeKey(), "version_scope"), ", ")},
			systemRow{cfg.ResolvedName(), "order_by", "version DESC"},
			systemRow{cfg.ResolvedName(), "source_table", cfg.Name()})
		snaps, err := t.cold.Snapshots(ctx)
		if err != nil {
			return fmt.Errorf("system.snapshots: %s: %w", cfg.Name(), err)
		}
		for _, s := range snaps {
			var sw any
			if s.Watermark != nil {
				sw = s.Watermark.UTC()
			}
			rows["snapshots"] = append(rows["snapshots"], systemRow{cfg.ResolvedName(), s.ID, s.CommittedAt.UTC(), sw, s.Operation})
		}
		parts, err := t.cold.Partitions(ctx)
		if err != nil {
			return fmt.Errorf("system.partitions: %s: %w", cfg.Name(), err)
		}
		for _, p := range parts {
			rows["partitions"] = append(rows["partitions"], partitionRow(cfg.ResolvedName(), p))
		}
	}
	e.shared.sysMu.Lock()
	defer e.shared.sysMu.Unlock()
	e.shared.lastSystem = rows
	for _, db := range e.shared.databases() {
		if err := writeSystemTables(ctx, db.db, db.catalog, db.system.visible(rows)); err != nil {
			return err
		}
	}
	return nil
}

// systemView is which system rows a database may hold. The engine's own
// database (nil view) holds every row; a confined one only its handle's
// tables' rows, and a scoped one only what its scope splits: its partitions,
// and what describes a table as a whole. A row a confined database does not
// hold cannot reach its statements, whatever they name — not even as a row
// count in its catalog (duckdb_tables().estimated_size, pg_class.reltuples).
// The planner narrows references to system.* to the same rows and refuses, by
// name, the tables a scope cannot split.
type systemView struct {
	tables map[string]bool   // the resolved names of the handle's tables
	scope  map[string]string // column → value; nil when unscoped
}

// systemView is the view of the handle's confined database.
func (e *Engine) systemView() *systemView {
	v := &systemView{tables: map[string]bool{}, scope: e.view.scope}
	for _, t := range e.visibleTables() {
		v.tables[t.cfg.ResolvedName()] = true
	}
	return v
}

// held are the tables of all whose relations the view's database holds: an
// isolated one's own only, so that even its catalog views (information_schema,
// pg_catalog, which every session may read) name no other table or column.
func (v *systemView) held(all []*tableState) []*tableState {
	if v == nil {
		return all
	}
	var out []*tableState
	for _, t := range all {
		if v.tables[t.cfg.ResolvedName()] {
			out = append(out, t)
		}
	}
	return out
}

// unsplitByScope are the system tables whose rows describe every tenant's
// data and cannot be narrowed to a scope: system.tables counts rows of every
// tenant (invariant_violations, detached_partitions); system.snapshots says
// when each tenant's writes were committed and what they did. A scoped
// database holds none of their rows.
var unsplitByScope = map[string]bool{"tables": true, "snapshots": true}

// visible are the rows of all that the view's database may hold.
func (v *systemView) visible(all map[string][]systemRow) map[string][]systemRow {
	if v == nil {
		return all
	}
	out := map[string][]systemRow{}
	for name, rows := range all {
		if len(v.scope) > 0 && unsplitByScope[name] {
			continue
		}
		for _, r := range rows {
			if table, _ := r[0].(string); v.tables[table] {
				out[name] = append(out[name], r)
			}
		}
	}
	if len(v.scope) > 0 {
		out["partitions"] = v.scopedPartitions(out["partitions"])
	}
	return out
}

// scopedPartitions are the partitions in the view's scope. A table with a
// partition that is not split by every scoped column holds every value's rows
// in it: none of its partitions is shown.
func (v *systemView) scopedPartitions(rows []systemRow) []systemRow {
	unsplit := map[string]bool{}
	var in []systemRow
	for _, r := range rows {
		table, _ := r[0].(string)
		part, _ := r[1].(string)
		segs := strings.Split(part, "/")
		all := true
		for c, val := range v.scope {
			prefix := plan.ScopeSegment(c, "")
			if !slices.ContainsFunc(segs, func(s string) bool { return strings.HasPrefix(s, prefix) }) {
				unsplit[table] = true
			}
			all = all && slices.Contains(segs, plan.ScopeSegment(c, val))
		}
		if all {
			in = append(in, r)
		}
	}
	return slices.DeleteFunc(in, func(r systemRow) bool { t, _ := r[0].(string); return unsplit[t] })
}

func partitionRow(table string, p PartitionInfo) systemRow {
	var month, last, newest any
	if !p.Month.IsZero() {
		month = p.Month
	}
	if p.LastCompaction != nil {
		last = p.LastCompaction.UTC()
	}
	if !p.NewestUncompacted.IsZero() {
		newest = p.NewestUncompacted.UTC()
	}
	return systemRow{table, p.Name, month, int32(p.Files), p.Rows, p.Bytes, p.Closed, p.Compacted, last, newest}
}

// Quarantined is implemented by a ColdTier that knows whether a narrowing
// schema change halts its table's archival.
type Quarantined interface {
	// Quarantine names each narrowing change; empty when there is none.
	Quarantine() []string
}

// quarantineOf is system.tables.quarantine: the reasons, or NULL.
func quarantineOf(c ColdTier) any {
	q, ok := c.(Quarantined)
	if !ok {
		return nil
	}
	if r := q.Quarantine(); len(r) > 0 {
		return strings.Join(r, "; ")
	}
	return nil
}

// writeSystemTables replaces the system tables of db with rows, in one
// transaction.
func writeSystemTables(ctx context.Context, db *sql.DB, catalog string, rows map[string][]systemRow) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for name, cols := range plan.SystemTables {
		full := meterstore.QuoteIdent(catalog) + ".system." + name
		// Replaced, not emptied: a DELETE leaves the deleted rows in the
		// table's row estimate (duckdb_tables().estimated_size).
		if _, err := tx.ExecContext(ctx, "CREATE OR REPLACE TABLE "+full+" ("+cols+")"); err != nil {
			return fmt.Errorf("refresh system.%s: %w", name, err)
		}
		for _, r := range rows[name] {
			ph := strings.TrimSuffix(strings.Repeat("?, ", len(r)), ", ")
			if _, err := tx.ExecContext(ctx, "INSERT INTO "+full+" VALUES ("+ph+")", r...); err != nil {
				return fmt.Errorf("refresh system.%s: %w", name, err)
			}
		}
	}
	return tx.Commit()
}

// configSettings are the settings that interact, per table. The derived rows
// name the interactions: a partition_step that differs from archival_step
// degrades archival from DETACH + DROP to row-wise work.
func configSettings(cfg meterstore.TableConfig) [][2]string {
	var ident []string
	for _, c := range cfg.IdentityColumns() {
		ident = append(ident, c.Name)
	}
	tm := "interval"
	if cfg.TimeModel() != meterstore.Interval {
		tm = "point"
	}
	return [][2]string{
		{"physical_table", cfg.Name()},
		{"time_model", tm},
		{"identify_by_melo", strconv.FormatBool(cfg.IdentifyByMelo())},
		{"identity_columns", strings.Join(ident, ", ")},
		{"merge_key", strings.Join(cfg.MergeKey(), ", ")},
		{"partition_step", cfg.PartitionStep().String()},
		{"archival_step", cfg.ArchivalStep().String()},
		{"partition_step_matches_archival_step", strconv.FormatBool(cfg.PartitionStep() == cfg.ArchivalStep())},
		{"partition_headroom", cfg.PartitionHeadroom().String()},
		{"settlement_lag", cfg.SettlementLag().String()},
		{"scan_chunk_rows", strconv.Itoa(cfg.ScanChunkRows())},
		{"integrity_constraints", strconv.FormatBool(cfg.IntegrityConstraints())},
		{"snapshot_retention", cfg.SnapshotRetention().String()},
		{"min_snapshots_to_keep", strconv.Itoa(cfg.MinSnapshotsToKeep())},
	}
}
