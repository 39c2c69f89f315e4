package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/duckfmt"
	"github.com/meterstore/meterstore/internal/sqltext"
)

// streamHistory imports the CSV or Parquet file at path by the streamed history
// path when it holds history the bulk path takes: memory then holds a
// channel's month of it at a time, not the file, whatever its size.
//
// The file is read twice. The first read, in the file's order, parses and
// checks every row and keeps per batch only what the plan needs (its label,
// rows, range of "from", the time it covers per channel and refusal), so
// every refusal is decided before anything is written. The second read
// comes ordered by UTC month, malo_id, obis_code and "from" from a DuckDB
// database of bounded memory that spills what exceeds it (sortDB); the bulk
// batches' rows go to the store a page at a time (store.Table.BackfillFrom:
// one commit, as the bulk path's), the other batches' are collected and
// written through the routed write afterwards.
//
// handled is false when the file is to be read whole instead (readTabularAs),
// nothing of it written or reported: its "from" is neither a TIMESTAMPTZ nor
// a CSV field (instantSQL), holds no row the bulk path would take, cannot be read or mapped
// (the whole read refuses it, naming why), or its history was refused as a
// whole — then the whole read writes it as the bulk path does, batch by batch
// where the store refuses the history.
func (im *importer) streamHistory(ctx context.Context, path string, format Format) (handled bool, err error) {
	src := readerSQL(path, format)
	cols, err := im.describe(ctx, src)
	if err != nil || im.mapColumns(cols) != nil {
		return false, nil
	}
	from := ""
	for _, c := range cols {
		if c.target == "from" {
			from = im.instantSQL(c)
		}
	}
	if from == "" {
		return false, nil
	}
	if ok, err := im.mayHoldHistory(ctx, src, from); err != nil || !ok {
		return false, err
	}
	if len(im.pending) > 0 {
		if err := im.flush(ctx, path); err != nil {
			return true, err
		}
	}
	plan, err := im.planStream(ctx, src, path, cols)
	if err != nil || plan == nil {
		return false, err
	}
	w, err := im.tbl.Watermark(ctx)
	if err != nil {
		return true, fmt.Errorf("import %s: %w", path, err)
	}
	bulk, _, until, err := im.planBulk(ctx, w, plan.accepted())
	if err != nil {
		return true, fmt.Errorf("import %s: %w", path, err)
	}
	if len(bulk) == 0 {
		return false, nil
	}
	for _, b := range bulk {
		plan.groups[b.label].bulk = true
	}
	hs, err := im.openHistoryStream(ctx, path, src, cols, from, format == CSV, plan)
	if err != nil {
		return true, fmt.Errorf("import %s: %w", path, err)
	}
	defer hs.close()
	_, dups, err := im.tbl.BackfillFrom(ctx, until, hs)
	if err != nil {
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		return false, nil
	}
	im.reportStream(plan, hs, dups)
	im.progress(path)
	return true, im.writeRestAtWatermark(ctx, path, hs.restBatches())
}

// instantSQL is the DuckDB expression of the instant column c holds, for
// the streamed path's order: a TIMESTAMPTZ as it is; a CSV field's text (with
// its offset, or as wall-clock time in Options.TimeZone) cast as the row's
// parse reads it; "" for any other column, which is then read whole. A field
// the cast reads otherwise than the parse (NULL, say) puts a channel's month
// out of the order, which the second read refuses (errOutOfOrder): the file
// is then read whole.
func (im *importer) instantSQL(c srcColumn) string {
	col := sqltext.Ident(c.name)
	switch {
	case c.typ.Kind == duckfmt.TimestampTZ:
		return col
	case c.typ.Kind != duckfmt.Varchar:
		return ""
	case im.opt.TimeZone == nil:
		return "TRY_CAST(" + col + " AS TIMESTAMPTZ)"
	}
	return "CASE WHEN regexp_matches(" + col + ", '(Z|[+-][0-9][0-9](:?[0-9][0-9])?)$') THEN TRY_CAST(" + col +
		" AS TIMESTAMPTZ) ELSE timezone(" + sqltext.String(im.opt.TimeZone.String()) + ", TRY_CAST(" + col + " AS TIMESTAMP)) END"
}

// streamMinRows is the fewest rows a file streamed by the history path
// holds. A smaller one is read whole and queued with the files after it
// (pendingRows), so that a folder of small files is one plan and one history
// commit, not one each.
var streamMinRows = 200_000

// mayHoldHistory reports whether the file is large enough to stream
// (streamMinRows) and its first "from" lies below where the bulk path ends
// now: a delivery of the hot days is read once.
func (im *importer) mayHoldHistory(ctx context.Context, src, from string) (bool, error) {
	var lo sql.NullTime
	var n int64
	if err := im.db.QueryRowContext(ctx, "SELECT min("+from+"), count(*) FROM "+src).Scan(&lo, &n); err != nil {
		return false, nil
	}
	if !lo.Valid || n < int64(streamMinRows) {
		return false, nil
	}
	limit, err := im.bulkLimit(ctx)
	if err != nil {
		return false, err
	}
	return lo.Time.Before(limit), nil
}

// streamPlan is what the first read keeps of a file: per batch (by label),
// in the order the file first names them, its rows, range and refusal.
type streamPlan struct {
	groups map[string]*plannedBatch
	order  []*plannedBatch
}

type plannedBatch struct {
	batch   // without series
	refusal *Refusal
	bulk    bool
	// channel is its rows' channel (a file's batch is one malo_id and
	// obis_code), span the time they cover: kept per batch, as a row's
	// channel key costs allocations a file of millions of rows would make
	// for each.
	channel string
	span    span
}

// accepted are the batches not refused.
func (p *streamPlan) accepted() []batch {
	var out []batch
	for _, g := range p.order {
		if g.refusal == nil {
			b := g.batch
			b.spans = map[string]span{g.channel: g.span}
			out = append(out, b)
		}
	}
	return out
}

// planStream reads the file in its order and checks each row as the whole
// read checks its batch (parseRecord, then the encoding the write path
// applies); a row's interval overlapping another of its delivery is the one
// rule that needs the batch, and the store's history rules refuse it. A nil
// plan: the whole read is to refuse the file.
func (im *importer) planStream(ctx context.Context, src, name string, cols []srcColumn) (*streamPlan, error) {
	rows, closeRows, err := im.stream(ctx, selectText(cols, src))
	if err != nil {
		return nil, nil
	}
	defer closeRows()
	sc := im.newRecordScanner(cols, name)
	plan := &streamPlan{groups: map[string]*plannedBatch{}}
	n := 0
	for rows.Next() {
		n++
		rec, err := sc.scan(rows)
		if err != nil {
			return nil, nil
		}
		p, perr := parseRecord(im.cfg, rec, im.opt.TimeZone, im.stamping(), sc.source)
		var fe *fieldError
		if errors.As(perr, &fe) && errors.Is(perr, ErrNaiveTimestamp) {
			return nil, nil
		}
		key, label := im.groupOf(rec, p, perr == nil)
		g := plan.groups[key]
		if g == nil {
			g = &plannedBatch{batch: batch{file: name, label: label}}
			plan.groups[key] = g
			plan.order = append(plan.order, g)
		}
		if perr != nil {
			g.rows++
			if g.refusal == nil {
				g.refusal = im.rowRefusal(name, label, n, cols, perr)
			}
			continue
		}
		g.add(p.at())
		row := p.series()
		if g.channel == "" {
			g.channel = seriesChannel(row[0])
		}
		sp := spanOf(row[0])
		g.span.widen(sp.lo, sp.hi)
		if g.refusal == nil {
			if err := im.check(row); err != nil {
				g.refusal = &Refusal{File: name, Batch: label, Err: err}
			}
		}
	}
	if rows.Err() != nil || n == 0 {
		return nil, ctx.Err()
	}
	for _, g := range plan.order {
		if g.refusal != nil {
			g.refusal.Rows = g.rows
		}
	}
	return plan, nil
}

// reportStream reports a streamed file: its batches, refusals and the
// history committed, counted as writeBulk counts it.
func (im *importer) reportStream(plan *streamPlan, hs *historyStream, dups int) {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.rep.Files++
	im.prog.Files++
	for _, g := range plan.order {
		im.rep.Batches++
		if g.refusal != nil {
			im.rep.Refused = append(im.rep.Refused, *g.refusal)
		}
	}
	im.rep.Rows += hs.bulkRows
	im.rep.Stamped += hs.stamped
	im.rep.ColdRows += hs.bulkRows
	im.rep.BulkRows += hs.bulkRows
	im.rep.BulkCommits++
	im.rep.Duplicate += dups
	im.rep.Inserted += hs.readings
	im.rep.Superseded += hs.bulkRows - dups - hs.readings
	im.queued = 0
}

// selectText is the query yielding every column of src as text.
func selectText(cols []srcColumn, src string) string {
	q := "SELECT "
	for i, c := range cols {
		if i > 0 {
			q += ", "
		}
		q += "CAST(" + sqltext.Ident(c.name) + " AS VARCHAR)"
	}
	return q + " FROM " + src
}

// recordScanner turns result rows of selectText into records.
type recordScanner struct {
	im     *importer
	cols   []srcColumn
	vals   []sql.NullString
	ptrs   []any
	rec    record
	source *defaultSource
}

func (im *importer) newRecordScanner(cols []srcColumn, name string) *recordScanner {
	system := im.opt.System
	if system == "" {
		system = baseName(name)
	}
	s := &recordScanner{im: im, cols: cols, vals: make([]sql.NullString, len(cols)), ptrs: make([]any, len(cols)),
		rec: make(record, len(cols)+len(im.opt.Set)), source: newDefaultSource(system)}
	for i := range s.vals {
		s.ptrs[i] = &s.vals[i]
	}
	return s
}

// scan reads the current row into the scanner's record (reused).
func (s *recordScanner) scan(rows *sql.Rows) (record, error) {
	if err := rows.Scan(s.ptrs...); err != nil {
		return nil, err
	}
	clear(s.rec)
	for k, v := range s.im.opt.Set {
		s.rec[k] = v
	}
	for i, c := range s.cols {
		if s.vals[i].Valid {
			s.rec[c.target] = s.vals[i].String
		}
	}
	return s.rec, nil
}

// at is the parsed row's "from" (its instant, for a register reading).
func (p parsed) at() time.Time {
	if d := p.delivery; len(d.Intervals) > 0 {
		return d.Intervals[0].From
	}
	return p.delivery.Readings[0].At
}

// series is the parsed row as a delivery of its own.
func (p parsed) series() []meterstore.StoredSeries {
	return []meterstore.StoredSeries{{Delivery: p.delivery, Extra: p.extra}}
}
