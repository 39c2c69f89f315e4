package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/meterstore/meterstore/engine/plan"
)

// ReadMode says which tiers a session reads.
type ReadMode = plan.ReadMode

const (
	Unified     = plan.Unified
	Historical  = plan.Historical
	Operational = plan.Operational
	AsOfMode    = plan.AsOfMode
)

// ErrScope is wrapped by every refusal to confine a session.
var ErrScope = errors.New("scope refused")

// view is what a handle may see: its read mode, pins, ceilings and confinement.
// Derived handles copy it; a confined handle only ever yields confined handles.
type view struct {
	mode       ReadMode
	snapshot   int64      // AsOf: the pinned snapshot
	asOfTime   *time.Time // AsOf by instant: each table's snapshot current at it
	maxVersion *uint64    // AsOf: the version ceiling, enforced below the projection
	knownAt    *time.Time // AsKnownAt: only versions recorded at or before it
	scope      map[string]string
	isolated   string // the one table this handle sees (physical name), or ""
	walled     bool   // run in the walled DuckDB database even without a scope
}

func (v view) clone() view {
	out := v
	if v.scope != nil {
		out.scope = make(map[string]string, len(v.scope))
		for k, x := range v.scope {
			out.scope[k] = x
		}
	}
	return out
}

func (e *Engine) derive(v view) *Engine {
	return &Engine{shared: e.shared, view: v}
}

// Mode returns the handle's read mode.
func (e *Engine) Mode() ReadMode { return e.view.mode }

// InReadMode returns a handle reading in mode m (Unified, Historical, Operational);
// confinement is kept. Use AsOf for a pinned read.
func (e *Engine) InReadMode(m ReadMode) (*Engine, error) {
	if m == AsOfMode {
		return nil, errors.New("use AsOf to pin a snapshot")
	}
	v := e.view.clone()
	v.mode, v.snapshot, v.maxVersion, v.asOfTime = m, 0, nil, nil
	return e.derive(v), nil
}

// AsOf pins every table to an Iceberg snapshot (cold tier only) with an optional
// version ceiling. The snapshot must exist: planning fails with ErrNoSnapshot
// rather than falling back to current data.
//
// Snapshot ids belong to one Iceberg table: in a catalog of several tables a
// statement reading a table that does not know the id fails the same way. Use
// AsOfTime to pin every table of a catalog to one instant. The version ceiling
// is a filter inside each rewritten relation, below resolution and below the
// statement's projection, so no statement can escape it; it bounds both
// resolved and raw relations.
func (e *Engine) AsOf(snapshotID int64, maxVersion *uint64) *Engine {
	v := e.view.clone()
	v.mode, v.snapshot, v.asOfTime = AsOfMode, snapshotID, nil
	v.maxVersion = nil
	if maxVersion != nil {
		mv := *maxVersion
		v.maxVersion = &mv
	}
	return e.derive(v)
}

// AsOfTime pins each table to the newest snapshot of its main history committed
// at or before t (cold tier only), with an optional version ceiling. An instant
// before a table's first snapshot fails with ErrNoSnapshot when the table is
// read — never a fallback to current data.
func (e *Engine) AsOfTime(t time.Time, maxVersion *uint64) *Engine {
	out := e.AsOf(0, maxVersion)
	tt := t.UTC()
	out.view.asOfTime = &tt
	return out
}

// AsKnownAt reads both tiers as they were known at t: only versions with
// recorded_at ≤ t enter resolution, so a reading first stored after t is absent.
func (e *Engine) AsKnownAt(t time.Time) *Engine {
	v := e.view.clone()
	tt := t.UTC()
	v.knownAt = &tt
	return e.derive(v)
}

// Scoped confines every table of the handle to rows with column = value, inside
// the rewritten relation, so no statement can omit or alias its way past it. Only
// a merge-key column can scope (filtering an attribute before resolution would
// slice a reading's history), every visible table must have it in its merge key,
// and a column already scoped cannot be re-pointed.
func (e *Engine) Scoped(column, value string) (*Engine, error) {
	column = strings.ToLower(column)
	if column == "from" {
		return nil, fmt.Errorf("%w: \"from\" is a range, not a scope", ErrScope)
	}
	if prev, ok := e.view.scope[column]; ok {
		if prev == value {
			return e, nil
		}
		return nil, fmt.Errorf("%w: %s is already scoped to %q; a confined handle cannot be re-pointed", ErrScope, column, prev)
	}
	for _, t := range e.visibleTables() {
		if !t.cfg.IsMergeKeyColumn(column) {
			if _, declared := t.cfg.Column(column); declared || column == "melo_id" || column == "sparte" {
				return nil, fmt.Errorf("%w: %s is not in the merge key of %s %v; scoping by a column that does not identify a reading would slice its version history and return a superseded value as current",
					ErrScope, column, t.cfg.Name(), t.cfg.MergeKey())
			}
			return nil, fmt.Errorf("%w: table %s has no merge-key column %s (merge key %v)", ErrScope, t.cfg.Name(), column, t.cfg.MergeKey())
		}
	}
	v := e.view.clone()
	if v.scope == nil {
		v.scope = map[string]string{}
	}
	v.scope[column] = value
	return e.derive(v), nil
}

// Isolated returns a handle in which only table's two relations exist.
func (e *Engine) Isolated(table string) (*Engine, error) {
	t, ok := e.tableByRelation(table)
	if !ok {
		return nil, fmt.Errorf("%w: no table %q", ErrScope, table)
	}
	if e.view.isolated != "" && e.view.isolated != t.cfg.Name() {
		return nil, fmt.Errorf("%w: the handle is already isolated to %s", ErrScope, e.view.isolated)
	}
	v := e.view.clone()
	v.isolated = t.cfg.Name()
	return e.derive(v), nil
}

// Confined reports whether the handle is scoped, isolated or walled: its
// statements then run in the DuckDB database walled off from the file system.
func (e *Engine) Confined() bool {
	return len(e.view.scope) > 0 || e.view.isolated != "" || e.view.walled
}

// Walled returns a handle that sees every table, unscoped, but runs its
// statements in the walled DuckDB database (no file access outside the
// warehouse, configuration locked): what a server gives a user it trusts with
// every row but not with the server's file system.
func (e *Engine) Walled() *Engine {
	v := e.view.clone()
	v.walled = true
	return e.derive(v)
}

// Scope returns the handle's scope as sorted "column=value" pairs.
func (e *Engine) Scope() []string { return plan.ScopePairs(e.view.scope) }
