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
	Partial           = plan.Partial
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
	ErrIntegerForText  = plan.ErrIntegerForText
)

// plan plans one statement on conn, a connection of the handle's database
// db, with the handle's tables, view and paths — or
// serves it again from the plan cache while the plan holds (planCache).
// Params, given as the only argument, are bound from the planner's parse of
// the statement; the plan's Args are what the statement runs with.
func (e *Engine) plan(ctx context.Context, conn *sql.Conn, db *duckDB, q string, args []any) (*plan.Plan, error) {
	s := e.shared
	tables := e.visibleTables()
	paths := plan.Paths{Hot: s.ext.hot, Cold: s.ext.cold, HTTPFS: s.ext.httpfs}
	key, cached := e.planKey(db, q, args)
	if cached {
		p, err := s.plans.reusePlan(ctx, key, tables, paths)
		if p != nil || err != nil {
			return p, err
		}
	}
	p, err := e.planAnew(ctx, conn, db.catalog, q, args, tables, paths)
	if err == nil && cached {
		s.plans.keep(key, tables, paths, p)
	}
	return p, err
}

// planAnew runs the planner over the statement.
func (e *Engine) planAnew(ctx context.Context, conn *sql.Conn, catalog string, q string, args []any, tables []*tableState, paths plan.Paths) (*plan.Plan, error) {
	v := e.view
	in := plan.Input{
		Conn: conn, Catalog: catalog, SQL: q, Args: args,
		Tables: planTables(tables),
		View: plan.View{Mode: v.mode, Snapshot: v.snapshot, AsOfTime: v.asOfTime, MaxVersion: v.maxVersion, KnownAt: v.knownAt,
			Scope: v.scope, Isolated: v.isolated != "", Confined: e.Confined()},
		Paths:      paths,
		Scans:      e.scanRegistry(),
		Feeder:     e.feeder(),
		SystemRows: e.systemRows,
		TimeZone:   e.TimeZone(),
	}
	if ps, ok := onlyParams(args); ok {
		in.Args, in.Bind = nil, ps.bindNames
	}
	return plan.Run(ctx, in)
}

// scanRegistry is where the handle's plans register their scans: a confined
// handle's are bound to its confined database.
func (e *Engine) scanRegistry() plan.Registry {
	if !e.Confined() {
		return &e.shared.scans
	}
	return confinedScans{r: &e.shared.scans, key: e.confinedKey()}
}

// feeder runs a confined handle's cold halves in the engine's database; nil
// for an unrestricted handle, whose database reads them itself.
func (e *Engine) feeder() plan.Feeder {
	if !e.Confined() {
		return nil
	}
	return feeder{e}
}

// planTables are tables as the planner reads them.
func planTables(ts []*tableState) []*plan.Table {
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
