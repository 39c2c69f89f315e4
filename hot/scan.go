package hot

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"meterstore"
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
	// Columns is the projection; nil = all columns. Primary-key columns are always
	// read (they are the keyset cursor); other unprojected fields are left zero.
	Columns []string
	// PageRows is the keyset page size; 0 = the table's scan_chunk_rows.
	PageRows int
	// Table is "" for the parent, or a partition name (attached or detached) — the
	// archiver reads a detached partition this way.
	Table string
}

// Scan streams the rows matching req to page, one page at a time, keyset-paged by
// the full primary key (a cursor on (malo_id, from) alone would drop ties). Each
// page is its own query: no transaction is held across pages, and only one page
// is in memory. The slice passed to page is not reused; page may keep it. An error
// returned by page stops the scan and is returned.
//
// Rows are ordered by the primary key. A row inserted behind the cursor during a
// scan is not seen; one inserted ahead of it is.
func (s *Store) Scan(ctx context.Context, req ScanRequest, page func([]meterstore.Row) error) error {
	plan, err := s.planScan(req)
	if err != nil {
		return err
	}
	var cursor []any
	for {
		sql, args := plan.sql(cursor)
		rows, err := s.pool.Query(ctx, sql, args...)
		if err != nil {
			return fmt.Errorf("scan %s: %w", plan.table, err)
		}
		out := make([]meterstore.Row, 0, plan.pageRows)
		for rows.Next() {
			r, err := plan.dec.decode(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("scan %s: %w", plan.table, err)
			}
			out = append(out, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("scan %s: %w", plan.table, err)
		}
		if len(out) > 0 {
			if err := page(out); err != nil {
				return err
			}
		}
		if len(out) < plan.pageRows {
			return nil
		}
		cursor = plan.cursorOf(out[len(out)-1])
	}
}

// ScanSQL is the SQL Scan sends for the first page (for EXPLAIN); "" if req is invalid.
func (s *Store) ScanSQL(req ScanRequest) string {
	plan, err := s.planScan(req)
	if err != nil {
		return ""
	}
	sql, _ := plan.sql(nil)
	return sql
}

type scanPlan struct {
	s        *Store
	table    string
	dec      *decoder
	pk       []string
	where    []string
	args     []any
	pageRows int
}

func (s *Store) planScan(req ScanRequest) (*scanPlan, error) {
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
		for _, c := range pk {
			want[c] = true
		}
		for _, c := range all { // table order
			if want[c.Name] {
				cols = append(cols, c.Name)
			}
		}
	}
	p := &scanPlan{s: s, table: table, dec: s.newDecoder(cols), pk: pk, pageRows: req.PageRows}
	if p.pageRows <= 0 {
		p.pageRows = s.cfg.ScanChunkRows()
	}
	add := func(cond string, v any) {
		p.args = append(p.args, v)
		p.where = append(p.where, fmt.Sprintf(cond, len(p.args)))
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

// decoder turns selected columns into meterstore.Row values with reused holders.
type decoder struct {
	cols   []string
	dest   []any
	assign []func(*meterstore.Row)
	nExtra int
}

func (s *Store) newDecoder(cols []string) *decoder {
	d := &decoder{cols: cols, nExtra: len(s.cfg.ExtraColumns())}
	extraIdx := map[string]int{}
	for i, c := range s.cfg.ExtraColumns() {
		extraIdx[c.Name] = i
	}
	str := func(set func(*meterstore.Row, string)) {
		var v string
		d.dest = append(d.dest, &v)
		d.assign = append(d.assign, func(r *meterstore.Row) { set(r, v) })
	}
	nstr := func(set func(*meterstore.Row, *string)) {
		var v *string
		d.dest = append(d.dest, &v)
		d.assign = append(d.assign, func(r *meterstore.Row) { set(r, v); v = nil })
	}
	for _, c := range cols {
		switch c {
		case "malo_id":
			str(func(r *meterstore.Row, v string) { r.MaloID = v })
		case "melo_id":
			nstr(func(r *meterstore.Row, v *string) { r.MeloID = v })
		case "obis_code":
			str(func(r *meterstore.Row, v string) { r.ObisCode = v })
		case "sparte":
			str(func(r *meterstore.Row, v string) { r.Sparte = v })
		case "unit":
			str(func(r *meterstore.Row, v string) { r.Unit = v })
		case "quality":
			str(func(r *meterstore.Row, v string) { r.Quality = v })
		case "resolution":
			nstr(func(r *meterstore.Row, v *string) { r.Resolution = v })
		case "source_kind":
			str(func(r *meterstore.Row, v string) { r.SourceKind = v })
		case "source_detail":
			nstr(func(r *meterstore.Row, v *string) { r.SourceDetail = v })
		case "provenance":
			nstr(func(r *meterstore.Row, v *string) { r.Provenance = v })
		case "version_scope":
			str(func(r *meterstore.Row, v string) { r.VersionScope = v })
		case "from", "recorded_at", "balancing_day":
			var v time.Time
			d.dest = append(d.dest, &v)
			switch c {
			case "from":
				d.assign = append(d.assign, func(r *meterstore.Row) { r.From = v.UTC() })
			case "recorded_at":
				d.assign = append(d.assign, func(r *meterstore.Row) { r.RecordedAt = v.UTC() })
			default:
				d.assign = append(d.assign, func(r *meterstore.Row) {
					r.BalancingDay = time.Date(v.Year(), v.Month(), v.Day(), 0, 0, 0, 0, time.UTC)
				})
			}
		case "to":
			var v *time.Time
			d.dest = append(d.dest, &v)
			d.assign = append(d.assign, func(r *meterstore.Row) {
				if v != nil {
					t := v.UTC()
					r.To = &t
				}
				v = nil
			})
		case "value":
			var v pgtype.Numeric
			d.dest = append(d.dest, &v)
			d.assign = append(d.assign, func(r *meterstore.Row) { r.Value = numericDecimal(v) })
		case "version":
			var v pgtype.Numeric
			d.dest = append(d.dest, &v)
			d.assign = append(d.assign, func(r *meterstore.Row) { r.Version = numericUint64(v) })
		default:
			i := extraIdx[c]
			nstr(func(r *meterstore.Row, v *string) {
				r.Extra[i] = v
			})
		}
	}
	return d
}

func (d *decoder) selectList(prefix string) string {
	q := make([]string, len(d.cols))
	for i, c := range d.cols {
		q[i] = prefix + meterstore.QuoteIdent(c)
	}
	return strings.Join(q, ", ")
}

func (d *decoder) decode(rows pgx.Rows) (meterstore.Row, error) {
	var r meterstore.Row
	if err := rows.Scan(d.dest...); err != nil {
		return r, err
	}
	if d.nExtra > 0 {
		r.Extra = make([]*string, d.nExtra)
	}
	for _, a := range d.assign {
		a(&r)
	}
	return r, nil
}

func numericDecimal(n pgtype.Numeric) decimal.Decimal {
	if !n.Valid || n.Int == nil {
		return decimal.Decimal{}
	}
	return decimal.NewFromBigInt(n.Int, n.Exp)
}

var ten = big.NewInt(10)

func numericUint64(n pgtype.Numeric) uint64 {
	if !n.Valid || n.Int == nil {
		return 0
	}
	if n.Exp == 0 {
		return n.Int.Uint64()
	}
	v := new(big.Int).Set(n.Int)
	if n.Exp > 0 {
		v.Mul(v, new(big.Int).Exp(ten, big.NewInt(int64(n.Exp)), nil))
	} else {
		v.Quo(v, new(big.Int).Exp(ten, big.NewInt(int64(-n.Exp)), nil))
	}
	return v.Uint64()
}
