package hot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
)

// ScanRequest selects rows for Scan. Zero values mean "no restriction".
type ScanRequest struct {
	// From and To bound "from", half-open: From <= "from" < To. Zero = unbounded.
	From, To time.Time
	// Eq restricts columns to values (column = value, compared after casting the
	// value to the column's type). Unknown columns are an error.
	Eq map[string]string
	// MaxVersion keeps rows with version <= *MaxVersion (an AsOf read).
	MaxVersion *uint64
	// RecordedAtMax keeps rows with recorded_at <= *RecordedAtMax (an AsKnownAt read).
	RecordedAtMax *time.Time
	// Columns is the projection; nil = all columns. A keyset-paged scan (one in
	// primary-key order, or pinning malo_id) reads the primary-key columns too,
	// as its cursor; unprojected fields are left zero.
	Columns []string
	// PageRows is the keyset page size; 0 = the table's scan_chunk_rows.
	PageRows int
	// Table is "" for the parent, or a partition name (attached or detached) — the
	// archiver reads a detached partition this way.
	Table string
	// Unordered lets rows come in storage order (see Pager): for a consumer that
	// does not need primary-key order, such as the engine.
	Unordered bool
}

// Scan streams the rows matching req to page, one page at a time, keyset-paged by
// the full primary key (a cursor on (malo_id, from) alone would drop ties). Each
// page is its own query: no transaction is held across pages, and only one page
// is in memory. The slice passed to page is reused for the next page: page may
// keep the rows (copy them out, e.g. append(kept, p...)) but not the slice. An
// error returned by page stops the scan and is returned.
//
// Rows are ordered by the primary key unless req.Unordered. A row inserted
// behind the cursor during a scan is not seen; one inserted ahead of it is.
func (s *Store) Scan(ctx context.Context, req ScanRequest, page func([]meterstore.Row) error) error {
	pager, err := s.Pager(req)
	if err != nil {
		return err
	}
	var buf []meterstore.Row
	for {
		out, err := pager.Next(ctx, buf)
		if err != nil {
			return err
		}
		if len(out) == 0 {
			return nil
		}
		if err := page(out); err != nil {
			return err
		}
		buf = out
	}
}

// Query is one SELECT of every row req selects, unpaged and unordered, its
// values written into the text: for a reader that cannot bind parameters,
// such as DuckDB's postgres extension (postgres_query). Columns are req's
// projection (nil = all), with the same predicates Scan pushes.
func (s *Store) Query(req ScanRequest) (string, error) {
	p, err := s.planScan(req, false)
	if err != nil {
		return "", err
	}
	q := fmt.Sprintf("SELECT %s FROM %s", p.dec.selectList(""), meterstore.QuoteIdent(p.table))
	if len(p.literal) > 0 {
		q += " WHERE " + strings.Join(p.literal, " AND ")
	}
	return q, nil
}

// literal writes a scan value as a PostgreSQL literal: an instant in UTC
// with its offset, and text as an escape string constant — not
// sqltext.String's '…': a request's value is the caller's, and E'…' means
// the same whatever standard_conforming_strings says.
func literal(v any) string {
	switch x := v.(type) {
	case time.Time:
		return "'" + x.UTC().Format("2006-01-02 15:04:05.999999") + "+00'::timestamptz"
	case string:
		return "E'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(x) + "'"
	}
	panic(fmt.Sprintf("hot: no literal for %T", v))
}

// ScanSQL is the SQL Scan sends for the first page (for EXPLAIN); "" if req is invalid.
func (s *Store) ScanSQL(req ScanRequest) string {
	pager, err := s.Pager(req)
	if err != nil {
		return ""
	}
	return pager.SQL()
}

type scanPlan struct {
	s        *Store
	table    string
	dec      *decoder
	pk       []string
	where    []string
	args     []any
	literal  []string // where, its values written as literals (Query)
	pageRows int
}

// planScan checks req and builds its SQL pieces; keyset adds the
// primary-key columns to the projection, for the cursor.
func (s *Store) planScan(req ScanRequest, keyset bool) (*scanPlan, error) {
	table := s.cfg.Name()
	if req.Table != "" {
		if err := s.checkTable(req.Table); err != nil {
			return nil, fmt.Errorf("scan: %w", err)
		}
		table = req.Table
	}
	all := s.cfg.Columns()
	types := map[string]meterstore.ColumnType{}
	for _, c := range all {
		types[c.Name] = c.Type
	}
	pk := s.cfg.PrimaryKey()
	var cols []string
	if req.Columns == nil {
		cols = s.cfg.ColumnNames()
	} else {
		want := map[string]bool{}
		for _, c := range req.Columns {
			if _, ok := types[c]; !ok {
				return nil, fmt.Errorf("scan %s: unknown column %q", table, c)
			}
			want[c] = true
		}
		if keyset {
			for _, c := range pk {
				want[c] = true
			}
		}
		for _, c := range all { // table order
			if want[c.Name] {
				cols = append(cols, c.Name)
			}
		}
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("scan %s: the projection names no column", table)
	}
	p := &scanPlan{s: s, table: table, dec: s.newDecoder(cols), pk: pk, pageRows: req.PageRows}
	if p.pageRows <= 0 {
		p.pageRows = s.cfg.ScanChunkRows()
	}
	add := func(cond string, v any) {
		p.args = append(p.args, v)
		p.where = append(p.where, fmt.Sprintf(cond, len(p.args)))
		p.literal = append(p.literal, strings.Replace(cond, "$%d", literal(v), 1))
	}
	if !req.From.IsZero() {
		add(`"from" >= $%d`, req.From)
	}
	if !req.To.IsZero() {
		add(`"from" < $%d`, req.To)
	}
	eqCols := make([]string, 0, len(req.Eq))
	for c := range req.Eq {
		eqCols = append(eqCols, c)
	}
	slices.Sort(eqCols)
	for _, c := range eqCols {
		t, ok := types[c]
		if !ok {
			return nil, fmt.Errorf("scan %s: unknown column %q in Eq", table, c)
		}
		add(meterstore.QuoteIdent(c)+" = $%d::"+t.PostgresType(), req.Eq[c])
	}
	if req.MaxVersion != nil {
		add(`version <= $%d::numeric`, fmt.Sprint(*req.MaxVersion))
	}
	if req.RecordedAtMax != nil {
		add(`recorded_at <= $%d`, *req.RecordedAtMax)
	}
	return p, nil
}

func (p *scanPlan) sql(cursor []any) (string, []any) {
	where := slices.Clone(p.where)
	args := slices.Clone(p.args)
	if cursor != nil {
		ph := make([]string, len(cursor))
		for i, v := range cursor {
			args = append(args, v)
			cast := ""
			if p.pk[i] == "version" {
				cast = "::numeric"
			}
			ph[i] = fmt.Sprintf("$%d%s", len(args), cast)
		}
		where = append(where, fmt.Sprintf("(%s) > (%s)", meterstore.QuoteIdents(p.pk), strings.Join(ph, ", ")))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT %s FROM %s", p.dec.selectList(""), meterstore.QuoteIdent(p.table))
	if len(where) > 0 {
		b.WriteString(" WHERE " + strings.Join(where, " AND "))
	}
	fmt.Fprintf(&b, " ORDER BY %s LIMIT %d", meterstore.QuoteIdents(p.pk), p.pageRows)
	return b.String(), args
}

func (p *scanPlan) cursorOf(r meterstore.Row) []any {
	extraIdx := map[string]int{}
	for i, c := range p.s.cfg.ExtraColumns() {
		extraIdx[c.Name] = i
	}
	out := make([]any, len(p.pk))
	for i, k := range p.pk {
		switch k {
		case "malo_id":
			out[i] = r.MaloID
		case "obis_code":
			out[i] = r.ObisCode
		case "from":
			out[i] = r.From
		case "melo_id":
			out[i] = r.MeloID
		case "version":
			out[i] = fmt.Sprint(r.Version)
		default:
			out[i] = r.Extra[extraIdx[k]]
		}
	}
	return out
}
