package plan

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltree"
)

// renderStatement replaces each reference with its tier split — the cold half UNION ALL
// the hot half, each resolved as decided — writes the EXPLAIN lines, and turns
// the tree back into the SQL DuckDB runs.
func renderStatement(ctx context.Context, pl *planning) error {
	slots, err := newRelationSlots()
	if err != nil {
		return err
	}
	repl := map[*sqltree.BaseTable]sqltree.Node{}
	for _, ref := range pl.refs {
		sub, explain, err := pl.renderRef(ctx, ref)
		if err != nil {
			return err
		}
		repl[ref.n] = slots.slot(ref.n, sub)
		pl.out.Explain = append(pl.out.Explain, explain...)
		pl.out.Provenance.Tables = appendUniqueString(pl.out.Provenance.Tables, ref.rel.table.Config.ResolvedName())
	}
	if err := replaceTables(pl.root, repl); err != nil {
		return err
	}
	if err := pl.renderPartials(ctx, slots); err != nil {
		return err
	}
	pl.out.Provenance.finish()
	q, err := deserialize(ctx, pl.conn, pl.root)
	if err != nil {
		return err
	}
	pl.out.SQL, err = slots.fill(q)
	return err
}

// renderRef is one reference's relation and its EXPLAIN lines.
func (pl *planning) renderRef(ctx context.Context, ref *reference) (string, []string, error) {
	cfg := ref.rel.table.Config
	resolved := map[bool]string{true: " resolved", false: ""}[ref.rel.resolved]
	explain := []string{fmt.Sprintf("%s (%s%s): from %s, watermark %s, mode %s",
		ref.n.Name(), cfg.Name(), resolved, ref.rng, ref.pin.watermark.UTC().Format(time.RFC3339), pl.in.View.Mode)}
	prov := &pl.out.Provenance
	var parts []string
	if c := ref.cold; c != nil {
		sql, err := c.sql(cfg, pl.coldStreams(c))
		if err != nil {
			return "", nil, err
		}
		parts = append(parts, pl.coldParts(ctx, cfg, sql)...)
		prov.ColdPath = c.path.Name()
		explain = append(explain, fmt.Sprintf("  cold: snapshot %d, from %s, %d files kept, %d pruned by statistics, %s; through %s%s",
			c.plan.SnapshotID, c.rng, len(c.plan.Files), c.plan.Pruned, c.status(ref.rel.resolved), c.path.Name()+c.pathWhy(), pl.fedNote(sql)))
	}
	if h := ref.hot; h != nil && h.partials != nil {
		prov.HotPath = partialsFunction
		explain = append(explain, ref.partialsExplain())
	} else if h != nil {
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
		prov.HotPath = h.path.Name()
		pl.out.hotLines = append(pl.out.hotLines, hotLine{at: len(pl.out.Explain) + len(explain), ref: ref})
		explain = append(explain, ref.hotExplain(h.path.explain(ref, nil)))
	}
	switch len(parts) {
	case 0:
		if ref.hot == nil { // else PostgreSQL aggregates the hot half (hot partials)
			explain = append(explain, "  no tier holds rows in this range")
		}
		return emptyRelation(cfg), explain, nil
	case 1:
		return parts[0], explain, nil
	}
	hot := parts[len(parts)-1] // the hot half renders last, when there is one
	for i := range parts {
		parts[i] = "SELECT * FROM (" + parts[i] + ")"
	}
	if l := ref.latest; l != nil && ref.cold != nil && ref.hot != nil {
		explain = append(explain, fmt.Sprintf("  latest row per key: the cold half read only for the %s the hot half lacks "+
			"(DISTINCT ON keeps each key's latest \"from\"; every hot \"from\" is at or above the watermark, every cold one below)",
			meterstore.QuoteIdents(l.keys)))
		return latestRowRelation(l.keys, l.cols, strings.Join(parts[:len(parts)-1], " UNION ALL "), hot), explain, nil
	}
	return strings.Join(parts, " UNION ALL "), explain, nil
}

// hotExplain is the hot half's line of EXPLAIN, saying what PostgreSQL receives.
func (ref *reference) hotExplain(received string) string {
	h := ref.hot
	status := "resolution applied"
	if !ref.rel.resolved {
		status = "unresolved relation"
	}
	return fmt.Sprintf("  hot: from %s, %d relation(s), %s; through %s; PostgreSQL: %s",
		h.rng, len(h.scans), status, h.path.Name(), received)
}

// sql is the cold half's relations: the clean runs as they are (split into
// up to streams relations), the others resolved as decided — each run on its
// own, the runs resolved alike in one relation (runs share no resolution key).
func (c *coldHalf) sql(cfg meterstore.TableConfig, streams int) ([]string, error) {
	r := c.read
	rels := func(sets ...[]ColdFile) ([]string, error) {
		out := make([]string, len(sets))
		for i, files := range sets {
			rel, err := c.path.relation(cfg, c, files)
			if err != nil {
				return nil, err
			}
			out[i] = rel
		}
		return out, nil
	}
	kinds := []struct {
		sets   [][]ColdFile
		render func(rel []string) string
	}{
		{[][]ColdFile{r.base, r.upper}, func(rel []string) string { return resolveByExclusion(cfg, rel[0], rel[1], r.upperClean) }},
		{[][]ColdFile{r.mergeBase, r.mergeOther}, func(rel []string) string { return resolveByMerge(cfg, rel[0], rel[1]) }},
		{[][]ColdFile{r.ranked}, func(rel []string) string { return cfg.RenderResolution("(" + rel[0] + ") AS _meterstore_src") }},
	}
	var parts []string
	if len(r.clean) > 0 {
		clean, err := rels(splitFiles(r.clean, streams)...)
		if err != nil {
			return nil, err
		}
		parts = append(parts, clean...)
	}
	for _, k := range kinds {
		if len(k.sets[0]) == 0 {
			continue
		}
		rel, err := rels(k.sets...)
		if err != nil {
			return nil, err
		}
		parts = append(parts, k.render(rel))
	}
	return parts, nil
}

// share is " to X of Y files (…)" when only some of the read files are resolved.
func (c *coldHalf) share(read int) string {
	if c.read.resolved() == read {
		return ""
	}
	return fmt.Sprintf(" to %d of %d files (runs where a key may repeat)", c.read.resolved(), read)
}

// pathWhy is the EXPLAIN note on a half moved off the engine's cold path.
func (c *coldHalf) pathWhy() string {
	if c.pathNote == "" {
		return ""
	}
	return " (not iceberg_scan: " + c.pathNote + ")"
}

// status is the cold half's line of EXPLAIN: whether and how it is resolved,
// and what footer marks spared.
func (c *coldHalf) status(resolved bool) string {
	r := c.read
	if !resolved {
		return "unresolved relation"
	}
	read := len(r.clean) + r.resolved()
	var how []string
	if len(r.base) > 0 {
		how = append(how, fmt.Sprintf("%d by exclusion against the %d files of higher versions", len(r.base)+len(r.upper), len(r.upper)))
	}
	if len(r.mergeBase) > 0 {
		how = append(how, fmt.Sprintf("%d by merge with the %d files of other versions", len(r.mergeBase)+len(r.mergeOther), len(r.mergeOther)))
	}
	if len(r.ranked) > 0 {
		how = append(how, fmt.Sprintf("%d ranked", len(r.ranked)))
	}
	out := "resolution elided"
	if len(how) > 0 {
		out = "resolution applied" + c.share(read) + ": " + strings.Join(how, ", ")
	}
	if read == 0 && len(r.skipped) == 0 {
		return "no files"
	}
	if r.byMark > 0 {
		out += fmt.Sprintf("; %d files proven by their keys-unique mark", r.byMark)
	}
	if len(r.skipped) > 0 {
		out += fmt.Sprintf("; %d superseded files not read", len(r.skipped))
	}
	return out
}

// resolveByExclusion is resolution.sql's answer — per resolution key, the row
// of the highest version — for runs split into a base whose keys cannot repeat
// and upper files whose versions all lie above the base's, computed without
// ranking every row: a base row is the answer unless upper holds its key (an
// anti join against upper's keys, which are few: the corrections), and
// upper's rows are resolved among themselves — as they are when upperClean
// says their keys cannot repeat either. The anti join costs a fraction of
// ROW_NUMBER() over every row of the window. Tested against the rendered
// resolution.sql on generated data (TestResolutionByExclusionMatchesResolutionSQL).
func resolveByExclusion(cfg meterstore.TableConfig, base, upper string, upperClean bool) string {
	newer := upper
	if !upperClean {
		newer = cfg.RenderResolution("(" + upper + ") AS _meterstore_src")
	}
	return keyJoin(cfg, "ANTI", base, upper) + " UNION ALL SELECT * FROM (" + newer + ")"
}

// resolveByMerge is resolution.sql's answer for runs split into a base whose
// keys cannot repeat and other files of any versions: a base row is the
// answer unless the others hold its key; for the keys they hold, the base's
// rows and theirs are ranked — ROW_NUMBER() over a few rows, not the window.
func resolveByMerge(cfg meterstore.TableConfig, base, other string) string {
	contested := keyJoin(cfg, "SEMI", base, other) + " UNION ALL SELECT * FROM (" + other + ")"
	return keyJoin(cfg, "ANTI", base, other) + " UNION ALL " + cfg.RenderResolution("("+contested+") AS _meterstore_src")
}

// keyJoin is base's rows whose resolution key others holds (SEMI) or does
// not hold (ANTI).
func keyJoin(cfg meterstore.TableConfig, kind, base, others string) string {
	key := cfg.ResolutionKey()
	on := make([]string, len(key))
	for i, k := range key {
		q := meterstore.QuoteIdent(k)
		on[i] = fmt.Sprintf("_meterstore_row.%s IS NOT DISTINCT FROM _meterstore_newer.%s", q, q)
	}
	return fmt.Sprintf("SELECT * FROM (%s) AS _meterstore_row %s JOIN (SELECT %s FROM (%s)) AS _meterstore_newer ON %s",
		base, kind, meterstore.QuoteIdents(key), others, strings.Join(on, " AND "))
}
