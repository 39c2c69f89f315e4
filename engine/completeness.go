package engine

import (
	"context"
	"time"

	"github.com/meterstore/meterstore/engine/plan"
	"github.com/meterstore/meterstore/metering"
)

// CompletenessRow is one row of meter_completeness.
type CompletenessRow struct {
	MaloID   string
	ObisCode string
	MeloID   *string  // tables that identify by MeLo
	Identity []string // identity columns, in declaration order
	Sparte   string
	// Resolution is the series' declared grid (PT15M, PT1M, …).
	Resolution       string
	Expected, Actual int64
	Missing, Surplus int64
	FirstGap         *metering.Date
	Substituted      int64
	NotBillable      int64
	Complete         bool
}

// Completeness reports, per series, the expected and actual intervals of the
// balancing days from ≤ d < to, through the same plan as SQL's
// meter_completeness (so it honours the handle's mode, scope and ceilings).
// table selects the table in a catalog of several interval tables ("" = the
// only one).
func (e *Engine) Completeness(ctx context.Context, from, to metering.Date, table ...string) ([]CompletenessRow, *Provenance, error) {
	q := "SELECT * FROM meter_completeness(?, ?)"
	args := []any{from.String(), to.String()}
	if len(table) > 0 && table[0] != "" {
		q = "SELECT * FROM meter_completeness(?, ?, ?)"
		args = append(args, table[0])
	}
	res, err := e.Query(ctx, q, args...)
	if err != nil {
		return nil, nil, err
	}
	idx := map[string]int{}
	for i, c := range res.Columns {
		idx[c] = i
	}
	t, err := plan.CompletenessTable(planTables(e.visibleTables()), table...)
	if err != nil {
		return nil, nil, err
	}
	var identNames []string
	for _, c := range t.Config.IdentityColumns() {
		identNames = append(identNames, c.Name)
	}
	str := func(v any) string { s, _ := v.(string); return s }
	num := func(v any) int64 {
		switch x := v.(type) {
		case int64:
			return x
		case int32:
			return int64(x)
		case interface{ IntPart() int64 }:
			return x.IntPart()
		}
		return 0
	}
	out := make([]CompletenessRow, 0, len(res.Rows))
	for _, r := range res.Rows {
		row := CompletenessRow{MaloID: str(r[idx["malo_id"]]), ObisCode: str(r[idx["obis_code"]]), Sparte: str(r[idx["sparte"]]),
			Resolution: str(r[idx["resolution"]]), Expected: num(r[idx["expected"]]), Actual: num(r[idx["actual"]]),
			Missing: num(r[idx["missing"]]), Surplus: num(r[idx["surplus"]]), Substituted: num(r[idx["substituted"]]),
			NotBillable: num(r[idx["not_billable"]])}
		row.Complete, _ = r[idx["complete"]].(bool)
		if j, ok := idx["melo_id"]; ok && r[j] != nil {
			m := str(r[j])
			row.MeloID = &m
		}
		for _, n := range identNames {
			row.Identity = append(row.Identity, str(r[idx[n]]))
		}
		if d, ok := r[idx["first_gap"]].(time.Time); ok {
			g := metering.DateOf(d)
			row.FirstGap = &g
		}
		out = append(out, row)
	}
	return out, res.Provenance, nil
}
