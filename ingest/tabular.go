package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/duckfmt"
	"github.com/meterstore/meterstore/internal/duckstream"
	"github.com/meterstore/meterstore/internal/sqltext"
	"github.com/meterstore/meterstore/metering"
)

// batch is one all-or-nothing unit, read and checked, ready to write.
type batch struct {
	file   string
	label  string
	rows   int
	series []meterstore.StoredSeries
	lo, hi time.Time // the lowest and highest "from"
	// spans, when set, are the time the batch covers by channel
	// (channelSpans): kept by a read that keeps no series.
	spans map[string]span
}

// add widens the batch's range of "from" to cover t.
func (b *batch) add(t time.Time) {
	if b.rows == 0 || t.Before(b.lo) {
		b.lo = t
	}
	if b.rows == 0 || t.After(b.hi) {
		b.hi = t
	}
	b.rows++
}

// readerSQL is the DuckDB table function reading path: every CSV field as
// text (the dialect sniffed, never the types), a Parquet file with its own types.
func readerSQL(path string, f Format) string {
	if f == Parquet {
		return "read_parquet(" + sqltext.String(path) + ")"
	}
	return "read_csv(" + sqltext.String(path) + ", header = true, all_varchar = true)"
}

// srcColumn is one column of a file and the table column it fills.
type srcColumn struct {
	name, target string
	typ          duckfmt.Type
}

// readTabularAs reads the CSV or Parquet file at path, named name in
// refusals, into batches: one per (malo_id, obis_code, version_scope) group,
// with the declared identity columns, in the order the file first names them.
//
// Batches the routed write puts into PostgreSQL are written as soon as they
// are complete, while the read goes on (earlyWriter); the others are returned.
func (im *importer) readTabularAs(ctx context.Context, path, name string, f Format) ([]batch, error) {
	return im.readTabular(ctx, readerSQL(path, f), name, "read as "+string(f), true)
}

// readTabular reads the rows of src — a table function or a parenthesised
// query — as readTabularAs reads a file's; what says how, in refusals. early
// writes complete batches while reading (src is read twice, so not for a
// query).
func (im *importer) readTabular(ctx context.Context, src, name, what string, early bool) ([]batch, error) {
	var ew *earlyWriter
	n := 0
	refuseFile := func(err error) ([]batch, error) {
		if werr := ew.finish(n); werr != nil {
			return nil, werr
		}
		if ew != nil {
			im.rep.Batches += ew.handedBatches
			if s := ew.written(); s != "" {
				err = fmt.Errorf("%w%s", err, s)
			}
		}
		im.rep.Batches++
		im.refuse(Refusal{File: name, Err: err})
		return nil, nil
	}
	cols, err := im.describe(ctx, src)
	if err != nil {
		return refuseFile(fmt.Errorf("%s: %w", what, err))
	}
	if err := im.mapColumns(cols); err != nil {
		if what == "query" && errors.Is(err, ErrFloat) {
			err = fmt.Errorf("%w; in the query: cast it, CAST(… AS DECIMAL(18,6)), or read_csv(…, all_varchar = true)", err)
		}
		return refuseFile(err)
	}
	if early {
		if ew, err = im.startEarlyWrites(ctx, name, src, cols); err != nil {
			return nil, err
		}
	}
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = "CAST(" + sqltext.Ident(c.name) + " AS VARCHAR)"
		if readNatively(c) {
			sel[i] = sqltext.Ident(c.name)
		}
	}
	rows, closeRows, err := im.stream(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM "+src)
	if err != nil {
		return refuseFile(fmt.Errorf("%s: %w", what, err))
	}
	defer closeRows()
	system := im.opt.System
	if system == "" {
		system = baseName(name)
	}
	source := newDefaultSource(system)
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	groups := map[string]*readGroup{}
	var order []*readGroup
	rec := make(record, len(cols)+len(im.opt.Set))
	for rows.Next() {
		n++
		if err := rows.Scan(ptrs...); err != nil {
			return refuseFile(fmt.Errorf("row %d: %w", n, err))
		}
		clear(rec)
		for k, v := range im.opt.Set {
			rec[k] = v
		}
		var nv native
		for i, c := range cols {
			switch v := vals[i].(type) {
			case nil:
			case string:
				rec[c.target] = v
			default:
				if err := nv.set(c.target, v); err != nil {
					return refuseFile(fmt.Errorf("row %d: %w", n, err))
				}
			}
		}
		p, perr := parseRow(im.cfg, rec, &nv, im.opt.TimeZone, im.stamping(), source)
		var fe *fieldError
		if errors.As(perr, &fe) && errors.Is(perr, ErrNaiveTimestamp) {
			return refuseFile(fmt.Errorf("row %d, column %s: %w", n, im.sourceName(cols, fe.col), perr))
		}
		if perr != nil {
			nv.text(rec)
		}
		key, label := im.groupOf(rec, p, perr == nil)
		g := groups[key]
		if g == nil {
			g = &readGroup{batch: batch{file: name, label: label}, index: map[string]int{}}
			groups[key] = g
			order = append(order, g)
		}
		ch, err := ew.channel(rec, p, perr == nil, g)
		if err != nil {
			return refuseFile(fmt.Errorf("row %d: %w", n, err))
		}
		if perr != nil {
			g.rows++
			if g.refusal == nil {
				g.refusal = im.rowRefusal(name, label, n, cols, perr)
			}
		} else {
			g.addRow(p)
		}
		if err := ew.rowRead(ch, n); err != nil {
			return nil, errors.Join(err, ew.finish(n))
		}
	}
	if err := rows.Err(); err != nil {
		return refuseFile(fmt.Errorf("%s after row %d: %w", what, n, err))
	}
	if n == 0 {
		return refuseFile(fmt.Errorf("%w: the file holds no rows", metering.ErrInvalid))
	}
	if err := ew.finish(n); err != nil {
		return nil, err
	}
	var out []batch
	for _, g := range order {
		im.rep.Batches++
		switch {
		case g.early:
		case g.refusal != nil:
			g.refusal.Rows = g.rows
			im.refuse(*g.refusal)
		case !g.accepted(im):
			im.refuse(Refusal{File: name, Batch: g.label, Rows: g.rows, Err: g.checkErr})
		default:
			out = append(out, g.batch)
		}
	}
	return out, nil
}

// addRow adds a parsed row to the batch.
func (g *readGroup) addRow(p parsed) {
	d := p.delivery
	g.add(p.at())
	if i, ok := g.index[p.key]; ok {
		s := &g.series[i].Delivery
		s.Intervals = append(s.Intervals, d.Intervals...)
		s.Readings = append(s.Readings, d.Readings...)
		return
	}
	g.index[p.key] = len(g.series)
	g.series = append(g.series, meterstore.StoredSeries{Delivery: d, Extra: p.extra})
}

// stream runs query on a connection of its own as a DuckDB stream
// (internal/duckstream): rows reach the importer a chunk at a time while the
// reader runs, where duckdb-go's QueryContext materialises the whole result —
// every field of the file as text — before the first row. closeRows closes
// the rows, the stream and the connection.
func (im *importer) stream(ctx context.Context, query string) (_ *sql.Rows, closeRows func(), err error) {
	return streamOn(ctx, im.db, query)
}

// streamOn runs query on a connection of db's own as a DuckDB stream.
func streamOn(ctx context.Context, db *sql.DB, query string) (_ *sql.Rows, closeRows func(), err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	sdb, err := duckstream.Open(conn, duckstream.DriverDecimals, nil)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	rows, err := sdb.QueryContext(ctx, query)
	if err != nil {
		sdb.Close()
		conn.Close()
		return nil, nil, err
	}
	return rows, func() {
		rows.Close()
		sdb.Close()
		conn.Close()
	}, nil
}

// check encodes a batch's deliveries as the write path will, so a batch the
// store would refuse is refused before anything of it is written.
func (im *importer) check(series []meterstore.StoredSeries) error {
	for _, s := range series {
		if _, err := im.cfg.Encode(s); err != nil {
			return err
		}
	}
	return nil
}

// describe lists the columns a reader yields, with their DuckDB types.
func (im *importer) describe(ctx context.Context, src string) ([]srcColumn, error) {
	rows, err := im.db.QueryContext(ctx, "DESCRIBE SELECT * FROM "+src)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cts, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []srcColumn
	for rows.Next() {
		vals := make([]sql.NullString, len(cts))
		ptrs := make([]any, len(cts))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, srcColumn{name: vals[0].String, typ: duckfmt.ParseType(vals[1].String)})
	}
	return out, rows.Err()
}

// ErrNotDelivery: a file none of whose columns is one of the table's — a
// README or a licence in a delivery folder, or an empty file.
var ErrNotDelivery = errors.New("not a delivery")

// someColumnFits refuses a file of which no column (renamed by --map) is a
// column of the table: it is no delivery, and a --map for its first line is
// no fix.
func (im *importer) someColumnFits(cols []srcColumn) error {
	names := make([]string, len(cols))
	for i, c := range cols {
		target := c.name
		if t, ok := im.opt.Map[c.name]; ok {
			target = t
		}
		if settable(im.cfg, target) {
			return nil
		}
		names[i] = strconv.Quote(c.name)
	}
	return fmt.Errorf("%w: no column of its header (%s) is a column of table %s (columns: %s); a CSV or Parquet delivery names them in its header (docs/import.md), an MSCONS interchange starts with UNA or UNB",
		ErrNotDelivery, strings.Join(names, ", "), im.cfg.Name(), strings.Join(inputColumns(im.cfg), ", "))
}

// mapColumns names the table column each file column fills and refuses a
// layout no row of which could go in: an unknown column, one filled twice,
// a float quantity, a naive timestamp type without a zone, a required
// column missing.
func (im *importer) mapColumns(cols []srcColumn) error {
	have := map[string]string{} // target → source
	for src := range im.opt.Map {
		if !slices.ContainsFunc(cols, func(c srcColumn) bool { return c.name == src }) {
			return fmt.Errorf("%w: --map %s=%s: the file has no column %q", ErrOptions, src, im.opt.Map[src], src)
		}
	}
	if err := im.someColumnFits(cols); err != nil {
		return err
	}
	for i := range cols {
		c := &cols[i]
		c.target = c.name
		if t, ok := im.opt.Map[c.name]; ok {
			c.target = t
		}
		if !settable(im.cfg, c.target) {
			return fmt.Errorf("%w: column %q is not a column of table %s; rename it with --map %s=<column> (columns: %s)",
				ErrOptions, c.name, im.cfg.Name(), c.name, strings.Join(inputColumns(im.cfg), ", "))
		}
		if prev, ok := have[c.target]; ok {
			return fmt.Errorf("%w: columns %q and %q both fill %s", ErrOptions, prev, c.name, c.target)
		}
		if _, ok := im.opt.Set[c.target]; ok {
			return fmt.Errorf("%w: column %s is in the file (%q) and in --set; say it once", ErrOptions, c.target, c.name)
		}
		have[c.target] = c.name
		switch c.target {
		case "value", "version":
			if c.typ.Kind == duckfmt.Float || c.typ.Kind == duckfmt.Double {
				return fmt.Errorf("column %q (%s) is %s: %w — a binary float cannot hold 0.1 exactly; write it as DECIMAL or text",
					c.name, c.target, c.typ.Name, ErrFloat)
			}
		case "from", "to", "recorded_at":
			if c.typ.Kind == duckfmt.Timestamp && im.opt.TimeZone == nil {
				return fmt.Errorf("column %q (%s) is %s: %w; write TIMESTAMPTZ, or name the zone its wall clock is in with --time-zone Europe/Berlin",
					c.name, c.target, c.typ.Name, ErrNaiveTimestamp)
			}
		}
	}
	var missing []string
	for _, c := range Columns(im.cfg) {
		_, inFile := have[c.Name]
		_, set := im.opt.Set[c.Name]
		if c.Required && !inFile && !set {
			missing = append(missing, c.Name)
		}
	}
	_, scope := have["version_scope"]
	_, op := have[Operator]
	_, setScope := im.opt.Set["version_scope"]
	_, setOp := im.opt.Set[Operator]
	if !scope && !op && !setScope && !setOp {
		missing = append(missing, Operator+" (or version_scope)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: required columns missing: %s; add them, --map a column of the file onto them, or --set a value for every row",
			metering.ErrInvalid, strings.Join(missing, ", "))
	}
	return nil
}

// sourceName is how the file names the table column col.
// rowRefusal refuses a batch for its row n of file name: Where names the row
// and, when the rule broken is a column's, the column as the file spells it.
func (im *importer) rowRefusal(name, label string, n int, cols []srcColumn, err error) *Refusal {
	where := fmt.Sprintf("row %d", n)
	var fe *fieldError
	if errors.As(err, &fe) {
		where += ", column " + im.sourceName(cols, fe.col)
	}
	return &Refusal{File: name, Batch: label, Where: where, Err: err}
}

func (im *importer) sourceName(cols []srcColumn, col string) string {
	for _, c := range cols {
		if c.target == col {
			if c.name != col {
				return fmt.Sprintf("%s (%s)", c.name, col)
			}
			return col
		}
	}
	if _, ok := im.opt.Set[col]; ok {
		return col + " (--set)"
	}
	return col
}

// groupOf is the batch a row belongs to and its label: its malo_id,
// obis_code, version_scope and declared identity columns. A row that did not
// parse is grouped by its text, its month read as far as it can be.
func (im *importer) groupOf(rec record, p parsed, ok bool) (key, label string) {
	var b strings.Builder
	malo, obis, scope := rec["malo_id"], rec["obis_code"], rec["version_scope"]
	if ok {
		malo, obis, scope = p.delivery.MaloID.String(), p.delivery.Obis.String(), p.delivery.Scope.String()
	} else if op, has := rec[Operator]; has && scope == "" {
		scope = op + ":" + monthOf(rec, im.opt.TimeZone)
	}
	b.WriteString("malo_id " + malo + ", obis_code " + obis)
	if m := rec["melo_id"]; m != "" {
		b.WriteString(", melo_id " + m)
	}
	b.WriteString(", version_scope " + scope)
	for _, c := range im.cfg.IdentityColumns() {
		if v, ok := rec[c.Name]; ok {
			b.WriteString(", " + c.Name + " " + v)
		}
	}
	return b.String(), b.String()
}

// monthOf is the balancing month of a row that did not parse, as far as
// its from and sparte can be read, else from's first seven characters.
func monthOf(rec record, tz *time.Location) string {
	from := rec["from"]
	t, err := parseInstant(from, tz)
	sp, serr := metering.ParseSparte(rec["sparte"])
	if err != nil || serr != nil {
		if len(from) >= 7 {
			return from[:7]
		}
		return from
	}
	return metering.BalancingMonth(t, sp).String()[:7]
}

// baseName is the last element of a path or name.
func baseName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		return name[i+1:]
	}
	return name
}
