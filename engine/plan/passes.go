package plan

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

// passes are the planner's steps, in the order they run; engine/plan/doc.go draws
// exactly these. Each has its own file (pass_*.go) and test file.
var passes = []pass{
	{"gate", gate},
	{"expand table functions", expandTableFunctions},
	{"find references", findReferences},
	{"stored balancing day", storedBalancingDay},
	{"group by day first", groupByDayFirst},
	{"extract bounds", extractBounds},
	{"system references", systemReferences},
	{"pin snapshot and watermark", pinSnapshots},
	{"split tiers", splitTiers},
	{"elide or resolve", elideOrResolve},
	{"hot partials", hotPartials},
	{"drop implied bounds", dropImpliedBounds},
	{"finite bounds", finiteBounds},
	{"latest row per key", latestRowPerKey},
	{"render", renderStatement},
}

// planning is one statement on its way through the passes.
type planning struct {
	in     Input
	conn   *sql.Conn // the statement's own connection: literals mean what they mean there
	root   *sqltree.Root
	refs   []*reference // every reference to a configured relation, in the text's order
	levels []level      // the SELECTs that read references directly
	system []*systemRef
	// daySplits are the aggregates group by day first split, for hot partials.
	daySplits []daySplit
	pins      map[*Table]*tablePin
	out       *Plan
}

// Run parses one statement and runs every pass over it. The plan's scans
// are registered with in.Scans until the caller releases the plan.
func Run(ctx context.Context, in Input) (*Plan, error) {
	pl, err := newPlanning(ctx, in)
	if err != nil {
		return nil, err
	}
	if err := pl.run(ctx, ""); err != nil {
		pl.out.Release()
		return nil, err
	}
	pl.out.view, pl.out.readsSystem, pl.out.Args = in.View, len(pl.system) > 0, pl.in.Args
	pl.out.id = planIDs.Add(1)
	pl.out.pins = make(map[*Table]tablePin, len(pl.pins))
	for t, pin := range pl.pins {
		pl.out.pins[t] = *pin
	}
	return pl.out, nil
}

func newPlanning(ctx context.Context, in Input) (*planning, error) {
	root, err := serialize(ctx, in.Conn, in.SQL)
	if err != nil {
		return nil, err
	}
	if in.Bind != nil {
		if in.Args, err = in.Bind(parameterNames(root.Statements[0])); err != nil {
			return nil, err
		}
	}
	v := in.View
	return &planning{in: in, conn: in.Conn, root: root, pins: map[*Table]*tablePin{},
		out: &Plan{registry: in.Scans, hotTables: map[*Table]tablePin{}, Provenance: Provenance{Mode: v.Mode, Watermarks: map[string]time.Time{},
			hotRows: &RowCounter{}, KnownAt: v.KnownAt, MaxVersion: v.MaxVersion, Scope: ScopePairs(v.Scope), TimeZone: in.TimeZone}}}, nil
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
		return fmt.Errorf("plan: no pass %q", last)
	}
	return nil
}
