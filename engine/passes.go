package engine

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/meterstore/meterstore/internal/sqltree"
)

// pass is one named step of planning a statement. A pass reads and writes the
// planning state; the ones that change the tree do it with sqltree.Transform,
// rule by rule, each returning (node, changed, error).
type pass struct {
	name string
	run  func(ctx context.Context, pl *planning) error
}

// passes are the planner's steps, in the order they run; engine/doc.go draws
// exactly these. Each has its own file (pass_*.go) and test file.
var passes = []pass{
	{"gate", gate},
	{"expand table functions", expandTableFunctions},
	{"find references", findReferences},
	{"stored balancing day", storedBalancingDay},
	{"extract bounds", extractBounds},
	{"system references", systemReferences},
	{"pin snapshot and watermark", pinSnapshots},
	{"split tiers", splitTiers},
	{"elide or resolve", elideOrResolve},
	{"render", renderStatement},
}

// planning is one statement on its way through the passes.
type planning struct {
	e       *Engine
	conn    *sql.Conn // the statement's own connection: literals mean what they mean there
	catalog string    // the session database's catalog name ("" = "memory")
	args    []any
	root    *sqltree.Root
	refs    []*reference // every reference to a configured relation, in the text's order
	levels  []level      // the SELECTs that read references directly
	system  []*systemRef
	pins    map[*tableState]*tablePin
	out     *plan
}

// plan parses one statement and runs every pass over it.
func (e *Engine) plan(ctx context.Context, conn *sql.Conn, catalog string, q string, args []any) (*plan, error) {
	pl, err := e.newPlanning(ctx, conn, catalog, q, args)
	if err != nil {
		return nil, err
	}
	if err := pl.run(ctx, ""); err != nil {
		pl.out.release(e)
		return nil, err
	}
	return pl.out, nil
}

func (e *Engine) newPlanning(ctx context.Context, conn *sql.Conn, catalog, q string, args []any) (*planning, error) {
	root, err := serialize(ctx, conn, q)
	if err != nil {
		return nil, err
	}
	return &planning{e: e, conn: conn, catalog: catalog, args: args, root: root, pins: map[*tableState]*tablePin{},
		out: &plan{hotTables: map[*tableState]tablePin{}, prov: Provenance{Mode: e.view.mode, Watermarks: map[string]time.Time{},
			hotRows: &rowCounter{}, KnownAt: e.view.knownAt, MaxVersion: e.view.maxVersion, Scope: e.Scope(), TimeZone: e.TimeZone()}}}, nil
}

// run runs the passes in order, through the one named last ("" = all).
func (pl *planning) run(ctx context.Context, last string) error {
	for _, p := range passes {
		if err := p.run(ctx, pl); err != nil {
			return err
		}
		if p.name == last {
			return nil
		}
	}
	if last != "" {
		return fmt.Errorf("engine: no pass %q", last)
	}
	return nil
}
