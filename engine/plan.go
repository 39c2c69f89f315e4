package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"meterstore"
)

// Tier is one of the two stores.
type Tier uint8

const (
	Cold Tier = 1 << iota
	Hot
)

func (t Tier) String() string {
	switch t {
	case Cold:
		return "cold"
	case Hot:
		return "hot"
	case Cold | Hot:
		return "cold+hot"
	}
	return "none"
}

// ErrBoundaryMoved means an archival run moved a table's watermark (or detached
// a partition) while a statement read the hot tier: some rows may have been in
// neither place the statement looked. Nothing was returned; run it again.
var ErrBoundaryMoved = errors.New("the tiering watermark moved while the statement ran; run it again")

// plan is one statement, rewritten: references replaced by tier-split subqueries.
type plan struct {
	sql        string
	prov       Provenance
	scans      []*plannedScan
	explain    []string
	hotTables  map[*tableState]tablePin
	registered []string
}

// tablePin is what a statement pinned for one table.
type tablePin struct {
	snapshot  int64
	watermark time.Time
	detached  map[string]bool
}

func (e *Engine) relations() map[string]relation {
	out := map[string]relation{}
	for _, t := range e.visibleTables() {
		out[strings.ToLower(t.cfg.Name())] = relation{table: t, resolved: false}
		out[strings.ToLower(t.cfg.ResolvedName())] = relation{table: t, resolved: true}
	}
	return out
}

// plan parses, extracts, pins the watermark and rewrites one statement.
//
//	SQL ─ json_serialize_sql ─▶ tree ─ find references (CTE-aware) ─▶ bounds on "from" per reference
//	    ─ pin snapshot + watermark W per table (once per statement) ─▶ per reference:
//	        cold: read_parquet(planned files) WHERE from < W   (resolved, or elided per run of files)
//	        hot:  meter_hot_scan(token)       WHERE from ≥ W   (always resolved)
//	    ─ json_deserialize_sql ─▶ SQL DuckDB runs
func (e *Engine) plan(ctx context.Context, conn *sql.Conn, catalog string, q string, args []any) (*plan, error) {
	root, err := serialize(ctx, conn, q)
	if err != nil {
		return nil, err
	}
	if err := e.expandTableFunctions(ctx, conn, root, args); err != nil {
		return nil, err
	}
	f := &finder{relations: e.relations(), catalog: catalog}
	f.walk(root, nil)
	if f.refused != nil {
		return nil, f.refused
	}
	if err := e.rewriteSystemRefs(ctx, conn, catalog, f.system); err != nil {
		return nil, err
	}
	if err := evaluate(ctx, conn, f.refs, args); err != nil {
		return nil, err
	}
	p := &plan{hotTables: map[*tableState]tablePin{}, prov: Provenance{Mode: e.view.mode, Watermarks: map[string]time.Time{},
		hotRows: &rowCounter{}, KnownAt: e.view.knownAt, MaxVersion: e.view.maxVersion, Scope: e.Scope()}}
	pins := map[*tableState]*tablePin{}
	for _, ref := range f.refs {
		if err := e.rewrite(ctx, conn, p, pins, ref); err != nil {
			p.release(e)
			return nil, err
		}
	}
	for t, pin := range pins {
		p.prov.Watermarks[t.cfg.ResolvedName()] = pin.watermark
	}
	p.prov.finish()
	p.sql, err = deserialize(ctx, conn, root)
	if err != nil {
		p.release(e)
		return nil, err
	}
	return p, nil
}

func (p *plan) release(e *Engine) {
	for _, tok := range p.registered {
		e.shared.scans.remove(tok)
	}
}

// pin reads a table's snapshot and watermark once per statement.
func (e *Engine) pin(ctx context.Context, pins map[*tableState]*tablePin, t *tableState) (*tablePin, error) {
	if pin, ok := pins[t]; ok {
		return pin, nil
	}
	pin := &tablePin{}
	want := e.view.snapshot
	if e.view.mode == AsOfMode {
		if e.view.asOfTime != nil {
			id, err := t.cold.SnapshotAt(ctx, *e.view.asOfTime)
			if err != nil {
				return nil, fmt.Errorf("as of %s, table %s: %w", e.view.asOfTime.Format(time.RFC3339Nano), t.cfg.Name(), err)
			}
			want = id
		}
		if want == 0 {
			return nil, fmt.Errorf("as-of read of %s without a snapshot: %w", t.cfg.Name(), ErrNoSnapshot)
		}
	}
	snap, w, err := t.cold.Watermark(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("read watermark of %s: %w", t.cfg.Name(), err)
	}
	pin.snapshot, pin.watermark = snap, w
	pins[t] = pin
	return pin, nil
}

// rewrite replaces one reference with its tier-split subquery.
func (e *Engine) rewrite(ctx context.Context, conn *sql.Conn, p *plan, pins map[*tableState]*tablePin, ref *reference) error {
	t := ref.rel.table
	cfg := t.cfg
	eq := map[string]string{}
	for k, v := range ref.eq {
		eq[k] = v
	}
	for k, v := range e.view.scope {
		if prev, ok := eq[k]; ok && prev != v {
			eq[k] = v // the statement asks for another scope's rows: the scope wins, and they are absent
		}
		eq[k] = v
	}
	pin, err := e.pin(ctx, pins, t)
	if err != nil {
		return err
	}
	w := pin.watermark
	rng := ref.rng
	var parts []string
	var explain []string
	name := ref.alias
	if name == "" {
		name, _ = ref.n["table_name"].(string)
	}
	explain = append(explain, fmt.Sprintf("%s (%s%s): from %s, watermark %s, mode %s",
		name, cfg.Name(), map[bool]string{true: " resolved", false: ""}[ref.rel.resolved], rng, w.UTC().Format(time.RFC3339), e.view.mode))

	// Cold half: [lo, min(hi, W)). Cold holds only rows below W, in every mode.
	coldRng := rng
	coldRng.lowerHi(w)
	wantCold := e.view.mode != Operational && !w.IsZero() && !coldRng.empty()
	if wantCold {
		var lo, hi time.Time
		if coldRng.lo != nil {
			lo = *coldRng.lo
		}
		if coldRng.hi != nil {
			hi = *coldRng.hi
		}
		cp, err := t.cold.Plan(ctx, pin.snapshot, lo, hi, eq)
		if err != nil {
			return fmt.Errorf("plan cold files of %s: %w", cfg.Name(), err)
		}
		p.prov.Tiers |= Cold
		p.prov.ColdFiles += len(cp.Files)
		p.prov.SnapshotIDs = appendUnique(p.prov.SnapshotIDs, cp.SnapshotID)
		clean, dirty := elide(cp.Files)
		where := coldFilter(coldRng, eq, e.view)
		if len(clean) > 0 {
			parts = append(parts, readParquet(cfg, clean, where))
		}
		how := "ranked"
		if len(dirty) > 0 {
			src := "(" + readParquet(cfg, dirty, where) + ") AS _meterstore_src"
			_, upper, single := splitByVersion(dirty)
			switch {
			case !ref.rel.resolved:
				parts = append(parts, "SELECT * FROM "+src)
			case single:
				parts = append(parts, resolveByExclusion(cfg, dirty, upper, where))
				how = fmt.Sprintf("by exclusion against the %d files of higher versions", len(upper))
			default:
				parts = append(parts, cfg.RenderResolution(src))
			}
		}
		status := "resolution elided"
		switch {
		case !ref.rel.resolved:
			status = "unresolved relation"
		case len(dirty) > 0 && len(clean) > 0:
			status = fmt.Sprintf("resolution applied to %d of %d files (runs with more than one version), %s", len(dirty), len(dirty)+len(clean), how)
		case len(dirty) > 0:
			status = "resolution applied, " + how
		case len(clean) == 0:
			status = "no files"
		}
		explain = append(explain, fmt.Sprintf("  cold: snapshot %d, from %s, %d files kept, %d pruned by statistics, %s",
			cp.SnapshotID, coldRng, len(cp.Files), cp.Pruned, status))
	}

	// Hot half: [max(lo, W), hi).
	hotRng := rng
	if !w.IsZero() {
		hotRng.raiseLo(w)
	}
	wantHot := e.view.mode != Historical && e.view.mode != AsOfMode && !hotRng.empty()
	if wantHot {
		scan := HotScan{Table: cfg.Name(), Eq: eq, RecordedAtMax: e.view.knownAt, MaxVersion: e.view.maxVersion}
		if hotRng.lo != nil {
			scan.From = *hotRng.lo
		}
		if hotRng.hi != nil {
			scan.To = *hotRng.hi
		}
		scans := []HotScan{scan}
		if pin.detached == nil {
			det, err := t.hot.Detached(ctx)
			if err != nil {
				return fmt.Errorf("list detached partitions of %s: %w", cfg.Name(), err)
			}
			pin.detached = map[string]bool{}
			for _, d := range det {
				if !d.From.Before(w) {
					pin.detached[d.Name] = true
				}
			}
		}
		for name := range pin.detached {
			s := scan
			s.Table = name
			scans = append(scans, s)
		}
		ps := &plannedScan{ctx: ctx, cfg: cfg, pager: t.hot, scans: scans, rows: p.prov.hotRows}
		tok := e.shared.scans.add(ps)
		p.registered = append(p.registered, tok)
		p.scans = append(p.scans, ps)
		p.hotTables[t] = *pin
		// The typed projection over the table function matters beyond types:
		// without it DuckDB 1.5.6's top_n_window_elimination (which makes
		// ROW_NUMBER() = 1 resolution ~4× cheaper) fails with "INTERNAL Error:
		// Failed to cast expression to type" on a range-filtered statement.
		src := fmt.Sprintf("(SELECT %s FROM meter_hot_scan('%s')) AS _meterstore_src", typedProjection(cfg), tok)
		if ref.rel.resolved {
			parts = append(parts, cfg.RenderResolution(src))
		} else {
			parts = append(parts, "SELECT * FROM "+src)
		}
		p.prov.Tiers |= Hot
		explain = append(explain, fmt.Sprintf("  hot: from %s, %d relation(s), resolution applied; PostgreSQL: %s",
			hotRng, len(scans), t.hot.ScanSQL(scan)))
	}
	var sub string
	switch len(parts) {
	case 0:
		sub = emptyRelation(cfg)
		explain = append(explain, "  no tier holds rows in this range")
	case 1:
		sub = parts[0]
	default:
		for i := range parts {
			parts[i] = "SELECT * FROM (" + parts[i] + ")"
		}
		sub = strings.Join(parts, " UNION ALL ")
	}
	subq, err := subqueryOf(ctx, conn, sub)
	if err != nil {
		return err
	}
	alias := ref.alias
	if alias == "" {
		alias, _ = ref.n["table_name"].(string)
	}
	replaceWithSubquery(ref.n, alias, subq)
	p.explain = append(p.explain, explain...)
	p.prov.Tables = appendUniqueString(p.prov.Tables, cfg.ResolvedName())
	return nil
}

// replaceWithSubquery turns a table reference node, in place, into a SUBQUERY
// reference under alias, keeping its column aliases and source position.
func replaceWithSubquery(n node, alias string, subq node) {
	colAlias := n["column_name_alias"]
	if colAlias == nil {
		colAlias = []any{}
	}
	loc := n["query_location"]
	for k := range n {
		delete(n, k)
	}
	n["type"] = "SUBQUERY"
	n["alias"] = alias
	n["sample"] = nil
	n["query_location"] = loc
	n["subquery"] = subq
	n["column_name_alias"] = colAlias
}

func appendUnique(xs []int64, x int64) []int64 {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

func appendUniqueString(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func sqlTime(t time.Time) string {
	return "TIMESTAMPTZ '" + t.UTC().Format("2006-01-02 15:04:05.999999") + "+00'"
}

// coldFilter is the predicate every cold read carries: the range (which also
// keeps the tiers disjoint at W), merge-key equalities and scope, and the
// ceilings of an as-of or as-known-at read — all below resolution, so a
// statement cannot escape them.
func coldFilter(rng timeRange, eq map[string]string, v view) string {
	var conds []string
	if rng.lo != nil {
		conds = append(conds, `"from" >= `+sqlTime(*rng.lo))
	}
	if rng.hi != nil {
		conds = append(conds, `"from" < `+sqlTime(*rng.hi))
	}
	keys := make([]string, 0, len(eq))
	for k := range eq {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		conds = append(conds, meterstore.QuoteIdent(k)+" = "+sqlString(eq[k]))
	}
	if v.maxVersion != nil {
		conds = append(conds, fmt.Sprintf(`"version" <= %d`, *v.maxVersion))
	}
	if v.knownAt != nil {
		conds = append(conds, `"recorded_at" <= `+sqlTime(*v.knownAt))
	}
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// readParquet reads planned files with the table's exact column types.
func readParquet(cfg meterstore.TableConfig, files []ColdFile, where string) string {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = sqlString(f.Path)
	}
	return fmt.Sprintf("SELECT %s FROM read_parquet([%s], union_by_name = true)%s",
		typedProjection(cfg), strings.Join(paths, ", "), where)
}

func typedProjection(cfg meterstore.TableConfig) string {
	cols := cfg.Columns()
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = fmt.Sprintf("CAST(%s AS %s) AS %s", meterstore.QuoteIdent(c.Name), c.Type.DuckDBType(), meterstore.QuoteIdent(c.Name))
	}
	return strings.Join(out, ", ")
}

// emptyRelation is a correctly typed relation with no rows.
func emptyRelation(cfg meterstore.TableConfig) string {
	cols := cfg.Columns()
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = fmt.Sprintf("CAST(NULL AS %s) AS %s", c.Type.DuckDBType(), meterstore.QuoteIdent(c.Name))
	}
	return "SELECT " + strings.Join(out, ", ") + " WHERE false"
}
