package engine

import (
	"context"
	"database/sql"

	"github.com/meterstore/meterstore/engine/plan"
)

// The planner's types and errors, as the session's API names them: a caller
// of the engine (a tier adapter, a server) needs no import of engine/plan.
type (
	ColdFile          = plan.ColdFile
	ColdPlan          = plan.ColdPlan
	HotPager          = plan.HotPager
	RowPages          = plan.RowPages
	HotScan           = plan.HotScan
	DetachedPartition = plan.DetachedPartition
	Tier              = plan.Tier
	Provenance        = plan.Provenance
	ParseError        = plan.ParseError
)

const (
	Cold = plan.Cold
	Hot  = plan.Hot
)

var (
	ErrBoundaryMoved   = plan.ErrBoundaryMoved
	ErrNoSnapshot      = plan.ErrNoSnapshot
	ErrNotAQuery       = plan.ErrNotAQuery
	ErrUnknownRelation = plan.ErrUnknownRelation
	ErrWrite           = plan.ErrWrite
	ErrFileFunction    = plan.ErrFileFunction
	ErrSetting         = plan.ErrSetting
	ErrReferenceClause = plan.ErrReferenceClause
	ErrSystemScope     = plan.ErrSystemScope
)

// plan plans one statement on conn, a connection of the handle's database
// whose catalog is catalog, with the handle's tables, view and paths.
func (e *Engine) plan(ctx context.Context, conn *sql.Conn, catalog string, q string, args []any) (*plan.Plan, error) {
	v := e.view
	s := e.shared
	return plan.Run(ctx, plan.Input{
		Conn: conn, Catalog: catalog, SQL: q, Args: args,
		Tables: e.planTables(),
		View: plan.View{Mode: v.mode, Snapshot: v.snapshot, AsOfTime: v.asOfTime, MaxVersion: v.maxVersion, KnownAt: v.knownAt,
			Scope: v.scope, Isolated: v.isolated != "", Confined: e.Confined()},
		Paths:      plan.Paths{Hot: s.ext.hot, Cold: s.ext.cold, HTTPFS: s.ext.httpfs},
		Scans:      &s.scans,
		Feeder:     e.feeder(),
		SystemRows: e.systemRows,
		TimeZone:   e.TimeZone(),
	})
}

// feeder runs a confined handle's cold halves in the engine's database; nil
// for an unrestricted handle, whose database reads them itself.
func (e *Engine) feeder() plan.Feeder {
	if !e.Confined() {
		return nil
	}
	return feeder{e}
}

// planTables are the handle's visible tables as the planner reads them.
func (e *Engine) planTables() []*plan.Table {
	ts := e.visibleTables()
	out := make([]*plan.Table, len(ts))
	for i, t := range ts {
		out[i] = &plan.Table{Config: t.cfg, Hot: t.hot, Cold: t.cold}
	}
	return out
}

// systemRows are the rows of system.name as last refreshed.
func (e *Engine) systemRows(name string) [][]any {
	s := e.shared
	s.sysMu.Lock()
	defer s.sysMu.Unlock()
	rows := s.lastSystem[name]
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out
}

// sqlString is s as an SQL string literal.
var sqlString = plan.SQLString
