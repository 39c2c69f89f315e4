package engine

import (
	"container/list"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore/engine/plan"
)

// planCache keeps planned statements for reuse: planning a statement reads
// DuckDB's parser several times (parse, evaluate the bounds, render) and
// iceberg-go's file plan, a fixed cost a repeated single-meter read pays on
// every run. A plan is served again only while everything it was derived
// from holds; each part of planKey and planEntry says which input it stands
// for, and plan.Plan.Holds re-reads the tiers. Least recently used plans go
// first, beyond maxPlans or maxPlanBytes of statement text.
type planCache struct {
	mu      sync.Mutex
	entries map[planKey]*list.Element // of *planEntry
	order   list.List                 // most recently used first
	bytes   int
}

const (
	maxPlans     = 128
	maxPlanBytes = 16 << 20
)

// planKey is what a plan is a function of besides the tiers and the tables.
type planKey struct {
	// sql is the statement as the session received it.
	sql string
	// args are the bound arguments, each with its type (argsKey): bounds and
	// merge-key equalities are evaluated from their values, and pruned files,
	// the cold filter and the hot scans' SQL carry them.
	args string
	// view is the handle's read mode, pins, ceilings, scope, isolation and
	// confinement (viewKey): the snapshot pinned, the version and
	// recorded-at ceilings below resolution, the scope's equalities in every
	// tier read, and the tables visible.
	view string
	// timeZone is the session time zone literals, casts and bound arguments
	// are evaluated in.
	timeZone string
	// database is the DuckDB database the statement runs in, by identity: a
	// confined database closed and reopened is another one, although its
	// catalog has the same name, and plans made in the closed one are not
	// served to it.
	database *sql.DB
}

// planEntry is one cached plan and the inputs compared by identity.
type planEntry struct {
	key planKey
	// tables are the visible tables the plan was made with: SetTable
	// replaces a table's state (a schema change), never edits it, so another
	// slice element means another configuration or tier.
	tables []*tableState
	// paths are how each half is read (the extensions loaded).
	paths plan.Paths
	plan  *plan.Plan // a Template, never run itself
	size  int
}

// reusePlan is a plan of the statement ready to run (plan.Plan.Again) if one
// is cached for key and still holds; nil if none.
func (c *planCache) reusePlan(ctx context.Context, key planKey, tables []*tableState, paths plan.Paths) (*plan.Plan, error) {
	c.mu.Lock()
	el, ok := c.entries[key]
	if ok {
		c.order.MoveToFront(el)
	}
	c.mu.Unlock()
	if !ok {
		return nil, nil
	}
	ent := el.Value.(*planEntry)
	if ent.paths != paths || !slices.Equal(ent.tables, tables) {
		c.forget(key)
		return nil, nil
	}
	holds, err := ent.plan.Holds(ctx)
	if err != nil || !holds {
		c.forget(key)
		return nil, err
	}
	return ent.plan.Again(ctx), nil
}

// keep caches p, just made for key, if it may be reused.
func (c *planCache) keep(key planKey, tables []*tableState, paths plan.Paths, p *plan.Plan) {
	if !p.Reusable() {
		return
	}
	ent := &planEntry{key: key, tables: tables, paths: paths, plan: p.Template(), size: len(key.sql) + len(key.args) + len(p.SQL)}
	if ent.size > maxPlanBytes/maxPlans {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[planKey]*list.Element{}
	}
	if old, ok := c.entries[key]; ok {
		c.remove(old)
	}
	c.entries[key] = c.order.PushFront(ent)
	c.bytes += ent.size
	for c.order.Len() > maxPlans || c.bytes > maxPlanBytes {
		c.remove(c.order.Back())
	}
}

// forget drops the plan cached for key.
func (c *planCache) forget(key planKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
}

func (c *planCache) remove(el *list.Element) {
	ent := c.order.Remove(el).(*planEntry)
	delete(c.entries, ent.key)
	c.bytes -= ent.size
}

// planKey is the cache key of q with args in this handle's session, run in
// db; false when the plan is not cached: an argument of a type argsKey does
// not know. A confined handle's plans are cached like any: the scope is in
// the view, the database in the key, and what a run registers — its scans,
// its fed cold halves, bound to the handle's confined database — is
// registered anew by every run (plan.Plan.Again).
func (e *Engine) planKey(db *duckDB, q string, args []any) (planKey, bool) {
	a, ok := argsKey(args)
	if !ok {
		return planKey{}, false
	}
	return planKey{sql: q, args: a, view: e.view.key(), timeZone: e.TimeZone(), database: db.db}, true
}

// argsKey spells each argument with its Go type, so that two argument lists
// have one key only if DuckDB binds them alike: a time.Time with its
// location's name and offset, a named argument with its name. false for a
// type not listed.
func argsKey(args []any) (string, bool) {
	var b strings.Builder
	for _, a := range args {
		if !argKey(&b, a) {
			return "", false
		}
		b.WriteByte(0)
	}
	return b.String(), true
}

func argKey(b *strings.Builder, a any) bool {
	switch v := a.(type) {
	case nil:
		b.WriteString("nil")
	case Params:
		names := slices.Sorted(maps.Keys(v))
		b.WriteString("params:")
		for _, n := range names {
			if !argKey(b, sql.Named(n, v[n])) {
				return false
			}
			b.WriteByte(0)
		}
	case sql.NamedArg:
		b.WriteString("$" + v.Name + "=")
		return argKey(b, v.Value)
	case string:
		b.WriteString("string:" + v)
	case []byte:
		b.WriteString("bytes:" + string(v))
	case time.Time:
		b.WriteString("time:" + v.Format("2006-01-02T15:04:05.999999999 -07:00:00 ") + v.Location().String())
	case decimal.Decimal:
		b.WriteString("decimal:" + v.String())
	case bool:
		b.WriteString("bool:" + strconv.FormatBool(v))
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		fmt.Fprintf(b, "%T:%v", v, v)
	default:
		return false
	}
	return true
}

// key spells the view for planKey: every field of it shapes the plan.
func (v view) key() string {
	opt := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	maxVersion := "-"
	if v.maxVersion != nil {
		maxVersion = strconv.FormatUint(*v.maxVersion, 10)
	}
	return fmt.Sprintf("%d %d %s %s %s %q %q %t", v.mode, v.snapshot, opt(v.asOfTime), maxVersion, opt(v.knownAt),
		plan.ScopePairs(v.scope), v.isolated, v.walled)
}
