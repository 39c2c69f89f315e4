package engine

import (
	"context"
	"database/sql"
	"sync"

	"github.com/meterstore/meterstore/engine/plan"
	"github.com/meterstore/meterstore/internal/duckstream"
)

// A confined database keeps the statements of reused plans prepared between
// their runs (keptMains): preparing the statement a plan rewrote parses,
// binds and optimises it again on every run, although a reused plan's
// statement differs only in its tokens — the names each run registers its
// scans and fed halves under (plan.Plan.Again). A kept statement names the
// tokens of the run that prepared it; a later run of the same plan names its
// own scans and halves by those too (scanRegistry.alias, fedRegistry.alias)
// while it runs the statement, and meter_hot_scan and meter_fed_scan look
// their token up each time the statement runs.
//
// A kept statement answers only its own plan (plan.Plan.ID): the plan is a
// function of its statement, arguments, view — the scope — and the tiers as
// pinned, so other arguments, another scope, snapshot or watermark is
// another plan, and never finds it. So the plan's arguments are written into
// the kept statement's text as literals where they can be
// (duckstream.PrepareBound): DuckDB then keeps the statement's physical plan
// between runs instead of binding and planning it again at each. It lives in the confined database of its scope, on a connection
// of its own, taken by one run at a time.

// maxKeptMains bounds the statements a confined database keeps prepared,
// each on a connection of its own: as many as the plan cache holds plans.
const maxKeptMains = maxPlans

// keptMains are the statements a confined database keeps prepared, by plan id.
type keptMains = duckstream.Kept[uint64, *keptMain]

// keptMain is one statement kept prepared for the runs of a plan.
type keptMain struct {
	plan       uint64 // the plan's ID
	stmt       *duckstream.Prepared
	scans, fed []string // the tokens its text names, in plan.Plan.Tokens' order
}

// Close closes the statement and its connection.
func (m *keptMain) Close() error { return m.stmt.Close() }

// mainRun is the statement of one run of a reusable confined plan: kept
// from an earlier run of the plan, or prepared now to be kept after it.
type mainRun struct {
	kept *keptMains
	m    *keptMain
	e    *Engine
	// the kept statement's tokens aliased to this run's scans and halves
	scanAliases, fedAliases []string
}

// prepareMain is the statement p runs in db: a kept one of p's plan, whose
// tokens then name p's scans and halves until end, or p's statement
// prepared on conn, which it then owns. nil when db keeps no statements
// (the engine's own database) or p is not reusable: the caller runs p.SQL on
// conn. A kept statement is used instead of conn, which is closed.
func (e *Engine) prepareMain(ctx context.Context, conn *sql.Conn, db *duckDB, p *plan.Plan) (*mainRun, error) {
	if db.mains == nil || !p.Reusable() {
		return nil, nil
	}
	run := &mainRun{kept: db.mains, e: e}
	scans, fed := p.Tokens()
	if m, ok := db.mains.Take(p.ID()); ok {
		run.m = m
		var ok bool
		if run.scanAliases, ok = aliasAll(m.scans, scans, e.shared.scans.alias); ok {
			run.fedAliases, ok = aliasAll(m.fed, fed, e.shared.fed.alias)
		}
		if ok {
			conn.Close()
			return run, nil
		}
		run.unalias()
		m.stmt.Close()
	}
	stmt, err := duckstream.PrepareBound(ctx, conn, p.SQL, p.Args)
	if err != nil {
		return nil, err
	}
	run.m = &keptMain{plan: p.ID(), stmt: stmt, scans: scans, fed: fed}
	return run, nil
}

// aliasAll names each of tokens by the kept statement's token at its
// position, and returns the aliases made; false if one names nothing.
func aliasAll(kept, tokens []string, alias func(as, tok string) bool) ([]string, bool) {
	if len(kept) != len(tokens) {
		return nil, false
	}
	for i, as := range kept {
		if !alias(as, tokens[i]) {
			return kept[:i], false
		}
	}
	return kept, true
}

// aliasToken names by as too what tok names in m, which mu guards; false if
// tok names nothing.
func aliasToken[T any](mu *sync.Mutex, m map[string]T, as, tok string) bool {
	mu.Lock()
	defer mu.Unlock()
	v, ok := m[tok]
	if ok {
		m[as] = v
	}
	return ok
}

// unaliasToken forgets as in m, which mu guards.
func unaliasToken[T any](mu *sync.Mutex, m map[string]T, as string) {
	mu.Lock()
	defer mu.Unlock()
	delete(m, as)
}

// unalias forgets the aliases of the run's tokens.
func (r *mainRun) unalias() {
	for _, as := range r.scanAliases {
		r.e.shared.scans.unalias(as)
	}
	for _, as := range r.fedAliases {
		r.e.shared.fed.unalias(as)
	}
	r.scanAliases, r.fedAliases = nil, nil
}

// end ends the run: the kept statement's tokens no longer name its scans,
// and the statement is kept for the next run if this one ended cleanly
// (failed or cancelled, an interrupt may still be on its way to the
// connection), else closed with its connection.
func (r *mainRun) end(ok bool) {
	r.unalias()
	if ok {
		r.kept.GiveBack(r.m.plan, r.m)
		return
	}
	r.m.stmt.Close()
}
