package pgwire

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltext"
)

// The catalog emulation answers what clients read about the relations on
// connect and to browse them. It describes exactly the relations of the
// session's engine handle (a scoped or isolated session sees what it may
// query), in schema "public", as tables — what users query them as, and what
// psql's \dt and the table lists of BI tools (getTables with type TABLE)
// show; read-only and computed (the tier-split, resolved relations), which
// their descriptions say — with oids from 16384. Two layers:
//
//   - psql's \d queries are answered here, matched by shape (not by exact
//     text, so psql 12–17 work), because DuckDB's parser cannot take them as
//     psql writes them (OPERATOR(pg_catalog.~), COLLATE pg_catalog.default):
//     \d NAME (the relation lookup, its flags, its columns, \d+'s view
//     definition, the footers), \d, \dv, \dt, \d+ (the relation list) and
//     \df (the MeterStore functions, pgproc.go).
//     Each shape carries the literal oid or pattern psql sends; a query
//     without one is not psql's and goes on.
//   - everything else runs in the engine after translate (pgdialect.go), which
//     reads the pg_catalog and information_schema relations from the virtual
//     catalog (pgvirtual.go): PostgreSQL's answers, so JDBC's DatabaseMetaData,
//     Grafana's query editor and other BI tools map the types right. SHOW …
//     and SET … are answered in pgwire.go.

type staticResult struct {
	cols  []pgColumn
	rows  [][]any
	tag   string
	empty bool
}

type pgRelation struct {
	oid     uint32
	name    string
	comment string // pg_description's text, the view definition's comment
	cols    []pgColumn
	notNull []bool // per column, from the table configuration
}

// def is what pg_get_viewdef answers: the relation is computed by the engine,
// it has no SQL definition a client could reuse.
func (r pgRelation) def() string { return " -- MeterStore: " + r.comment }

type pgCatalog struct {
	rels []pgRelation
	// virtual holds the SQL of each relation of the virtual pg_catalog and
	// information_schema (see pgvirtual.go), built on first use.
	virtual map[string]string
}

// catalog builds (once per session) the relations the session may query.
func (sess *pgSession) catalog(ctx context.Context) (*pgCatalog, error) {
	if sess.cat != nil {
		return sess.cat, nil
	}
	c := &pgCatalog{}
	oid := uint32(16384)
	type named struct {
		name    string
		cfg     meterstore.TableConfig
		comment string
	}
	var rels []named
	for _, t := range sess.eng.Tables() {
		rels = append(rels,
			named{t.ResolvedName(), t, fmt.Sprintf("%s resolved (the latest version of each reading), PostgreSQL from the watermark on, Iceberg below it; read-only", t.Name())},
			named{t.Name(), t, fmt.Sprintf("every stored version of %s, both tiers, unresolved; read-only", t.ResolvedName())})
	}
	sort.Slice(rels, func(i, j int) bool { return rels[i].name < rels[j].name })
	for _, n := range rels {
		d, err := sess.eng.Describe(ctx, "SELECT * FROM "+sqltext.Ident(n.name))
		if err != nil {
			return nil, fmt.Errorf("catalog emulation: describe %s: %w", n.name, err)
		}
		nullable := map[string]bool{}
		for _, cd := range n.cfg.Columns() {
			nullable[cd.Name] = cd.Nullable
		}
		r := pgRelation{oid: oid, name: n.name, comment: n.comment}
		for i := range d.Columns {
			o, size, mod := pgTypeOf(d.Types[i])
			r.cols = append(r.cols, pgColumn{name: d.Columns[i], oid: o, size: size, typmod: mod, duck: d.Types[i]})
			isNullable, declared := nullable[d.Columns[i]]
			r.notNull = append(r.notNull, declared && !isNullable)
		}
		c.rels = append(c.rels, r)
		oid++
	}
	sess.cat = c
	return c, nil
}

func (c *pgCatalog) byOID(oid uint32) (pgRelation, bool) {
	for _, r := range c.rels {
		if r.oid == oid {
			return r, true
		}
	}
	return pgRelation{}, false
}

var (
	reSpaces       = regexp.MustCompile(`\s+`)
	reLookup       = regexp.MustCompile(`^select c\.oid,\s?n\.nspname,\s?c\.relname from pg_catalog\.pg_class c`)
	reRelnameRegex = regexp.MustCompile(`(?i)c\.relname\s+operator\(pg_catalog\.~\)\s+'((?:[^']|'')*)'`)
	reNspRegex     = regexp.MustCompile(`(?i)n\.nspname\s+operator\(pg_catalog\.~\)\s+'((?:[^']|'')*)'`)
	reOIDEq        = regexp.MustCompile(`(?i)(?:c\.oid|a\.attrelid)\s*=\s*'(\d+)'`)
	reViewDef      = regexp.MustCompile(`(?i)pg_get_viewdef\(\s*'?(\d+)'?`)
	reOIDLiteral   = regexp.MustCompile(`=\s*'\d+'`)
	reRelkinds     = regexp.MustCompile(`(?i)c\.relkind\s+in\s*\(([^)]*)\)`)
)

// emulate answers a catalog query by shape; ok is false for anything else.
func (sess *pgSession) emulate(ctx context.Context, q string) (*staticResult, bool, error) {
	norm := strings.ToLower(strings.TrimSpace(reSpaces.ReplaceAllString(sqltext.StripComments(q), " ")))
	if !strings.Contains(norm, "pg_catalog.") {
		return nil, false, nil
	}
	switch {
	case reLookup.MatchString(norm) && strings.Contains(norm, "operator(pg_catalog.~)"):
		c, err := sess.catalog(ctx)
		if err != nil {
			return nil, true, err
		}
		return c.lookup(q), true, nil
	case strings.Contains(norm, `as "schema"`) && strings.Contains(norm, `as "name"`) && strings.Contains(norm, "from pg_catalog.pg_class c"):
		c, err := sess.catalog(ctx)
		if err != nil {
			return nil, true, err
		}
		return c.list(q, norm, sess.user), true, nil
	case strings.Contains(norm, "c.relchecks, c.relkind") && reOIDEq.MatchString(q):
		c, err := sess.catalog(ctx)
		if err != nil {
			return nil, true, err
		}
		return c.relInfo(q, norm), true, nil
	case strings.Contains(norm, "pg_catalog.format_type(a.atttypid, a.atttypmod)") && strings.Contains(norm, "from pg_catalog.pg_attribute a") &&
		reOIDEq.MatchString(q):
		c, err := sess.catalog(ctx)
		if err != nil {
			return nil, true, err
		}
		return c.attributes(q, norm), true, nil
	case strings.Contains(norm, "from pg_catalog.pg_proc p") && strings.Contains(norm, `as "argument data types"`):
		res, err := sess.functionList(ctx, q, norm)
		return res, true, err
	case reViewDef.MatchString(q):
		c, err := sess.catalog(ctx)
		if err != nil {
			return nil, true, err
		}
		res := &staticResult{cols: []pgColumn{textCol("pg_get_viewdef")}}
		oid, _ := strconv.Atoi(reViewDef.FindStringSubmatch(q)[1])
		if r, ok := c.byOID(uint32(oid)); ok {
			res.rows = [][]any{{r.def()}}
		}
		return res, true, nil
	case (strings.Contains(norm, "from pg_catalog.pg_policy") || strings.Contains(norm, "from pg_catalog.pg_statistic_ext") ||
		strings.Contains(norm, "from pg_catalog.pg_publication") || strings.Contains(norm, "from pg_catalog.pg_inherits") ||
		strings.Contains(norm, "from pg_catalog.pg_trigger") || strings.Contains(norm, "from pg_catalog.pg_rewrite") ||
		strings.Contains(norm, "from pg_catalog.pg_constraint") || strings.Contains(norm, "from pg_catalog.pg_index")) &&
		reOIDLiteral.MatchString(q):
		// \d footers: no policies, statistics, publications, parents, triggers,
		// rules, constraints or indexes on a computed relation.
		n := selectListLen(q)
		cols := make([]pgColumn, n)
		for i := range cols {
			cols[i] = textCol(fmt.Sprintf("column%d", i+1))
		}
		return &staticResult{cols: cols}, true, nil
	}
	return nil, false, nil
}

func textCol(name string) pgColumn {
	return pgColumn{name: name, oid: oidText, size: -1, typmod: -1}
}

func boolCol(name string) pgColumn { return pgColumn{name: name, oid: oidBool, size: 1, typmod: -1} }

func oidCol(name string) pgColumn { return pgColumn{name: name, oid: oidOID, size: 4, typmod: -1} }

// patternMatch applies a psql name pattern (a POSIX regex psql built, e.g.
// '^(readings)$') to a name; an unparseable pattern matches nothing.
func patternMatch(pat, name string) bool {
	re, err := regexp.Compile(strings.ReplaceAll(pat, "''", "'"))
	if err != nil {
		return false
	}
	return re.MatchString(name)
}

func nspOK(q string) bool {
	if m := reNspRegex.FindStringSubmatch(q); m != nil {
		return patternMatch(m[1], "public")
	}
	return true
}

func (c *pgCatalog) lookup(q string) *staticResult {
	res := &staticResult{cols: []pgColumn{oidCol("oid"), textCol("nspname"), textCol("relname")}}
	m := reRelnameRegex.FindStringSubmatch(q)
	if !nspOK(q) {
		return res
	}
	for _, r := range c.rels {
		if m == nil || patternMatch(m[1], r.name) {
			res.rows = append(res.rows, []any{r.oid, "public", r.name})
		}
	}
	return res
}

func (c *pgCatalog) list(q, norm, user string) *staticResult {
	names := []string{"Schema", "Name", "Type", "Owner", "Persistence", "Access method", "Size", "Description"}
	n := min(selectListLen(q), len(names))
	res := &staticResult{}
	for i := 0; i < n; i++ {
		res.cols = append(res.cols, textCol(names[i]))
	}
	if m := reRelkinds.FindStringSubmatch(norm); m != nil && !strings.Contains(m[1], "'r'") {
		return res
	}
	if !nspOK(q) {
		return res
	}
	pat := reRelnameRegex.FindStringSubmatch(q)
	for _, r := range c.rels {
		if pat != nil && !patternMatch(pat[1], r.name) {
			continue
		}
		row := []any{"public", r.name, "table", user, "permanent", "heap", "0 bytes", r.comment}
		res.rows = append(res.rows, row[:n])
	}
	return res
}

func (c *pgCatalog) relInfo(q, norm string) *staticResult {
	n := selectListLen(q)
	// psql 12–17: relchecks, relkind, relhasindex, relhasrules, relhastriggers,
	// relrowsecurity, relforcerowsecurity, relhasoids, relispartition,
	// reloptions, reltablespace, reloftype, relpersistence, relreplident, amname.
	template := []struct {
		col pgColumn
		val any
	}{
		{pgColumn{name: "relchecks", oid: oidInt2, size: 2, typmod: -1}, int16(0)},
		{textCol("relkind"), "r"},
		{boolCol("relhasindex"), false},
		{boolCol("relhasrules"), false},
		{boolCol("relhastriggers"), false},
		{boolCol("relrowsecurity"), false},
		{boolCol("relforcerowsecurity"), false},
		{boolCol("relhasoids"), false},
		{boolCol("relispartition"), false},
		{textCol("reloptions"), ""},
		{oidCol("reltablespace"), uint32(0)},
		{textCol("reloftype"), ""},
		{textCol("relpersistence"), "p"},
		{textCol("relreplident"), "d"},
		{textCol("amname"), "heap"},
	}
	res := &staticResult{}
	row := []any{}
	for i := 0; i < n; i++ {
		if i < len(template) {
			res.cols = append(res.cols, template[i].col)
			row = append(row, template[i].val)
		} else {
			res.cols = append(res.cols, textCol(fmt.Sprintf("column%d", i+1)))
			row = append(row, nil)
		}
	}
	if m := reOIDEq.FindStringSubmatch(q); m != nil {
		oid, _ := strconv.Atoi(m[1])
		if _, ok := c.byOID(uint32(oid)); ok {
			res.rows = [][]any{row}
		}
	}
	return res
}

func (c *pgCatalog) attributes(q, norm string) *staticResult {
	n := selectListLen(q)
	res := &staticResult{}
	// attname, format_type, default, attnotnull, attcollation, attidentity,
	// attgenerated, then \d+'s storage, compression, stattarget, description.
	names := []string{"attname", "format_type", "pg_get_expr", "attnotnull", "attcollation", "attidentity", "attgenerated"}
	for i := 0; i < n; i++ {
		switch {
		case i == 3:
			res.cols = append(res.cols, boolCol(names[i]))
		case i < len(names):
			res.cols = append(res.cols, textCol(names[i]))
		default:
			res.cols = append(res.cols, textCol(fmt.Sprintf("column%d", i+1)))
		}
	}
	m := reOIDEq.FindStringSubmatch(q)
	if m == nil {
		return res
	}
	oid, _ := strconv.Atoi(m[1])
	r, ok := c.byOID(uint32(oid))
	if !ok {
		return res
	}
	verbose := strings.Contains(norm, "attstorage")
	for i, col := range r.cols {
		row := []any{col.name, formatType(col.oid, col.typmod), nil, r.notNull[i], nil, "", ""}
		for len(row) < n {
			row = append(row, nil)
		}
		if verbose && n > 7 {
			row[7] = "p" // storage: plain
		}
		res.rows = append(res.rows, row[:n])
	}
	return res
}

// selectListLen counts the top-level items of a statement's first select list.
func selectListLen(q string) int {
	code := strings.ToLower(codeOnly(q))
	i := strings.Index(code, "select")
	if i < 0 {
		return 0
	}
	depth, n, nonEmpty := 0, 1, false
	for j := i + 6; j < len(code); j++ {
		ch := code[j]
		switch ch {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				n++
			}
		}
		if depth == 0 && strings.HasPrefix(code[j:], "from") && j > 0 && !nameByte(code[j-1]) && (j+4 >= len(code) || !nameByte(code[j+4])) {
			break
		}
		if depth == 0 && !strings.ContainsRune(" \t\n\r", rune(ch)) {
			nonEmpty = true
		}
	}
	if !nonEmpty {
		return 0
	}
	return n
}

// nameByte reports whether c may be part of a qualified name: t.from is a
// column, not the FROM keyword.
func nameByte(c byte) bool { return sqltext.IdentByte(c) || c == '.' }
