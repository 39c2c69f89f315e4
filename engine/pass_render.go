package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"meterstore"
	"meterstore/internal/sqltree"
)

// renderStatement replaces each reference with its tier split — the cold half UNION ALL
// the hot half, each resolved as decided — writes the EXPLAIN lines, and turns
// the tree back into the SQL DuckDB runs.
func renderStatement(ctx context.Context, pl *planning) error {
	repl := map[*sqltree.BaseTable]sqltree.Node{}
	for _, ref := range pl.refs {
		sub, explain, err := pl.renderRef(ctx, ref)
		if err != nil {
			return err
		}
		st, err := subqueryOf(ctx, pl.conn, sub)
		if err != nil {
			return err
		}
		repl[ref.n] = sqltree.AsSubqueryRef(ref.n, ref.n.Name(), st)
		pl.out.explain = append(pl.out.explain, explain...)
		pl.out.prov.Tables = appendUniqueString(pl.out.prov.Tables, ref.rel.table.cfg.ResolvedName())
	}
	if err := replaceTables(pl.root, repl); err != nil {
		return err
	}
	pl.out.prov.finish()
	var err error
	pl.out.sql, err = deserialize(ctx, pl.conn, pl.root)
	return err
}

// renderRef is one reference's relation and its EXPLAIN lines.
func (pl *planning) renderRef(ctx context.Context, ref *reference) (string, []string, error) {
	cfg := ref.rel.table.cfg
	resolved := map[bool]string{true: " resolved", false: ""}[ref.rel.resolved]
	explain := []string{fmt.Sprintf("%s (%s%s): from %s, watermark %s, mode %s",
		ref.n.Name(), cfg.Name(), resolved, ref.rng, ref.pin.watermark.UTC().Format(time.RFC3339), pl.e.view.mode)}
	prov := &pl.out.prov
	var parts []string
	if c := ref.cold; c != nil {
		sql, err := c.sql(cfg, ref.rel.resolved)
		if err != nil {
			return "", nil, err
		}
		parts = append(parts, sql...)
		prov.ColdPath = c.path.name()
		explain = append(explain, fmt.Sprintf("  cold: snapshot %d, from %s, %d files kept, %d pruned by statistics, %s; through %s",
			c.plan.SnapshotID, c.rng, len(c.plan.Files), c.plan.Pruned, c.status(ref.rel.resolved), c.path.name()))
	}
	if h := ref.hot; h != nil {
		rel, err := h.path.relation(ctx, pl, ref)
		if err != nil {
			return "", nil, err
		}
		src := rel + " AS _meterstore_src"
		if ref.rel.resolved {
			parts = append(parts, cfg.RenderResolution(src))
		} else {
			parts = append(parts, "SELECT * FROM "+src)
		}
		prov.HotPath = h.path.name()
		explain = append(explain, fmt.Sprintf("  hot: from %s, %d relation(s), resolution applied; through %s; PostgreSQL: %s",
			h.rng, len(h.scans), h.path.name(), h.path.explain(ref)))
	}
	switch len(parts) {
	case 0:
		return emptyRelation(cfg), append(explain, "  no tier holds rows in this range"), nil
	case 1:
		return parts[0], explain, nil
	}
	for i := range parts {
		parts[i] = "SELECT * FROM (" + parts[i] + ")"
	}
	return strings.Join(parts, " UNION ALL "), explain, nil
}

// sql is the cold half's relations: the clean runs as they are, the dirty
// ones resolved as decided.
func (c *coldHalf) sql(cfg meterstore.TableConfig, resolved bool) ([]string, error) {
	var parts []string
	r := c.read
	if len(r.clean) > 0 {
		clean, err := c.path.relation(cfg, c, r.clean)
		if err != nil {
			return nil, err
		}
		parts = append(parts, clean)
	}
	if len(r.dirty) == 0 {
		return parts, nil
	}
	dirty, err := c.path.relation(cfg, c, r.dirty)
	if err != nil {
		return nil, err
	}
	switch {
	case !resolved:
		return append(parts, "SELECT * FROM ("+dirty+") AS _meterstore_src"), nil
	case r.how == byExclusion:
		upper, err := c.path.relation(cfg, c, r.upper)
		if err != nil {
			return nil, err
		}
		return append(parts, resolveByExclusion(cfg, dirty, upper)), nil
	}
	return append(parts, cfg.RenderResolution("("+dirty+") AS _meterstore_src")), nil
}

// status is the cold half's line of EXPLAIN: whether and how it is resolved.
func (c *coldHalf) status(resolved bool) string {
	r := c.read
	how := "ranked"
	if r.how == byExclusion {
		how = fmt.Sprintf("by exclusion against the %d files of higher versions", len(r.upper))
	}
	switch {
	case !resolved:
		return "unresolved relation"
	case len(r.dirty) > 0 && len(r.clean) > 0:
		return fmt.Sprintf("resolution applied to %d of %d files (runs with more than one version), %s", len(r.dirty), len(r.dirty)+len(r.clean), how)
	case len(r.dirty) > 0:
		return "resolution applied, " + how
	case len(r.clean) == 0:
		return "no files"
	}
	return "resolution elided"
}

// resolveByExclusion is resolution.sql's answer — per resolution key, the row
// of the highest version — for runs of single-version files, computed without
// ranking every row: a row is kept unless a file of a higher version in its run
// holds its key, and only those (small) correction files are aggregated. A hash
// join against them costs a fraction of ROW_NUMBER() over every row of the
// window. Exact because (merge key, version) is unique, so a key's highest
// version is one row; tested against the rendered resolution.sql on generated
// data (TestResolutionByExclusionMatchesResolutionSQL).
func resolveByExclusion(cfg meterstore.TableConfig, all, upper string) string {
	key := cfg.ResolutionKey()
	cols := cfg.ColumnNames()
	proj := make([]string, len(cols))
	for i, c := range cols {
		proj[i] = "_meterstore_row." + meterstore.QuoteIdent(c)
	}
	on := make([]string, len(key))
	for i, k := range key {
		q := meterstore.QuoteIdent(k)
		on[i] = fmt.Sprintf("_meterstore_row.%s IS NOT DISTINCT FROM _meterstore_newer.%s", q, q)
	}
	return fmt.Sprintf(`SELECT %s FROM (%s) AS _meterstore_row
LEFT JOIN (SELECT %s, max("version") AS _meterstore_newest FROM (%s) GROUP BY %s) AS _meterstore_newer
ON %s
WHERE _meterstore_newer._meterstore_newest IS NULL OR _meterstore_row."version" = _meterstore_newer._meterstore_newest`,
		strings.Join(proj, ", "), all, meterstore.QuoteIdents(key), upper, meterstore.QuoteIdents(key), strings.Join(on, " AND "))
}
