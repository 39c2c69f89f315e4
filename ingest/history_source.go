package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltext"
)

// sortMemory is the memory_limit of the DuckDB database that orders a file
// for the streamed history path; what the sort needs beyond it spills to a
// temporary directory, so the import's memory does not grow with the file.
const sortMemory = "256MB"

// historyPageRows is about how many rows of history the second read hands to
// the store at a time; a page ends where a channel's month does.
var historyPageRows = 20_000

// onHistoryPage, when set, is told the rows the second read holds as it
// hands a page over: the page and the channel's month it has begun.
var onHistoryPage func(held int)

// historyStream is the second read of a streamed file (store.SeriesSource):
// the bulk batches' rows as deliveries per channel and UTC month, in that
// order; the other accepted batches' rows collected for the routed write.
type historyStream struct {
	im        *importer
	plan      *streamPlan
	rows      *sql.Rows
	closeRows func()
	closeDB   func()
	sc        *recordScanner
	name      string                // the file's, for progress
	rest      map[string]*readGroup // by label

	// the channel's month being read: its deliveries by delivery key, and
	// the readings (merge key, scope and "from") it holds
	unit      unitOf
	unitRows  int
	series    []meterstore.StoredSeries
	prefixes  []string
	index     map[string]int
	seen      map[string]struct{}
	carryOver *parsed // the row that began the next unit
	// ended are the channels whose unit of the month being read has ended.
	ended map[unitOf]bool

	bulkRows, stamped, readings int
}

// unitOf is a channel's UTC month.
type unitOf struct {
	month      int
	malo, obis string
}

func unitOfRow(p *parsed) unitOf {
	at := p.at().UTC()
	return unitOf{month: at.Year()*12 + int(at.Month()) - 1, malo: p.delivery.MaloID.String(), obis: p.delivery.Obis.String()}
}

// openHistoryStream starts the second read: the file ordered by UTC month
// of "from", malo_id, obis_code and "from" in a database of its own (sortDB);
// from is the instant of "from" (instantSQL). A CSV file (spool) is first
// written to a Parquet file in the sort's directory with its instant as a
// column: DuckDB's sort of read_csv's rows runs out of sortMemory instead of
// spilling (1 M rows of ten text columns), the same sort of a Parquet file's
// does not.
func (im *importer) openHistoryStream(ctx context.Context, name, src string, cols []srcColumn, from string, spool bool, plan *streamPlan) (*historyStream, error) {
	db, closeDB, dir, err := sortDB(ctx)
	if err != nil {
		return nil, err
	}
	if spool {
		path := filepath.Join(dir, "rows.parquet")
		q := "COPY (SELECT *, " + from + " AS " + sqltext.Ident(sortInstant) + " FROM " + src + ") TO " + sqltext.String(path) + " (FORMAT parquet)"
		if _, err := db.ExecContext(ctx, q); err != nil {
			closeDB()
			return nil, fmt.Errorf("spool for the sort: %w", err)
		}
		src, from = readerSQL(path, Parquet), sqltext.Ident(sortInstant)
	}
	col := func(target string) string {
		for _, c := range cols {
			if c.target == target {
				return sqltext.Ident(c.name)
			}
		}
		return ""
	}
	order := []string{"date_trunc('month', " + from + ")"}
	for _, target := range []string{"malo_id", "obis_code"} {
		if c := col(target); c != "" {
			order = append(order, "CAST("+c+" AS VARCHAR)")
		}
	}
	order = append(order, from)
	rows, closeRows, err := streamOn(ctx, db, selectText(cols, src)+" ORDER BY "+strings.Join(order, ", "))
	if err != nil {
		closeDB()
		return nil, err
	}
	return &historyStream{im: im, plan: plan, rows: rows, closeRows: closeRows, closeDB: closeDB,
		sc: im.newRecordScanner(cols, name), name: name, rest: map[string]*readGroup{}, index: map[string]int{}, seen: map[string]struct{}{},
		ended: map[unitOf]bool{}}, nil
}

// sortDB is an in-memory DuckDB database of sortMemory that spills to a
// temporary directory of its own; its time zone is UTC, so date_trunc cuts
// UTC months. close closes it and removes the directory dir.
func sortDB(ctx context.Context) (db *sql.DB, close func(), dir string, err error) {
	dir, err = os.MkdirTemp("", "msql-import-sort-*")
	if err != nil {
		return nil, nil, "", err
	}
	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, "", err
	}
	db = sql.OpenDB(connector)
	close = func() {
		db.Close()
		os.RemoveAll(dir)
	}
	for _, q := range []string{"SET GLOBAL memory_limit = " + sqltext.String(sortMemory), "SET GLOBAL temp_directory = " + sqltext.String(dir),
		"SET GLOBAL TimeZone = 'UTC'", "SET GLOBAL preserve_insertion_order = false"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			close()
			return nil, nil, "", fmt.Errorf("sort database: %s: %w", q, err)
		}
	}
	return db, close, dir, nil
}

// sortInstant is the column of a spooled CSV file's instant of "from"; no
// table has a column of that name, so no file read this far has one.
const sortInstant = "msql_import_sort_instant"

func (hs *historyStream) close() {
	hs.closeRows()
	hs.closeDB()
}

// Next yields the deliveries of the next page of history: whole channel
// months, about historyPageRows rows.
func (hs *historyStream) Next(ctx context.Context) ([]meterstore.StoredSeries, error) {
	var page []meterstore.StoredSeries
	rows := 0
	if p := hs.carryOver; p != nil {
		hs.carryOver = nil
		hs.addToUnit(p)
	}
	for hs.rows.Next() {
		rec, err := hs.sc.scan(hs.rows)
		if err != nil {
			return nil, err
		}
		p, err := parseRecord(hs.im.cfg, rec, hs.im.opt.TimeZone, hs.im.stamping(), hs.sc.source)
		if err != nil {
			return nil, fmt.Errorf("read again: %w", err)
		}
		key, _ := hs.im.groupOf(rec, p, true)
		g := hs.plan.groups[key]
		switch {
		case g == nil:
			return nil, fmt.Errorf("read again: batch %s: %w", key, errNotPlanned)
		case g.refusal != nil:
			continue
		case !g.bulk:
			hs.collect(g, &p)
			continue
		}
		if u := unitOfRow(&p); hs.unitRows > 0 && u != hs.unit {
			if err := hs.follows(u); err != nil {
				return nil, err
			}
			page, rows = hs.endUnit(page, rows)
			if rows >= historyPageRows {
				hs.carryOver = &p
				hs.handOver(rows + 1)
				return page, nil
			}
		}
		hs.addToUnit(&p)
	}
	if err := hs.rows.Err(); err != nil {
		return nil, err
	}
	page, rows = hs.endUnit(page, rows)
	if len(page) == 0 {
		return nil, io.EOF
	}
	hs.handOver(rows)
	return page, nil
}

// handOver reports a page of held rows handed to the store: to the
// progress, as rows read, and to onHistoryPage.
func (hs *historyStream) handOver(held int) {
	if onHistoryPage != nil {
		onHistoryPage(held)
	}
	hs.im.mu.Lock()
	hs.im.queued = hs.bulkRows
	hs.im.mu.Unlock()
	hs.im.progress(hs.name)
}

// errOutOfOrder: the second read met a channel's month after a later month
// or after the channel's month had ended (the sort read an instant otherwise
// than the row's parse).
var errOutOfOrder = errors.New("read again: a channel's month out of the sorted order")

// follows checks that u, the unit the row just read begins, comes after the
// unit being read in the sort's order: a later month, or a channel of this
// month not ended yet.
func (hs *historyStream) follows(u unitOf) error {
	switch {
	case u.month < hs.unit.month:
		return fmt.Errorf("%w: %s %s in month %d after month %d", errOutOfOrder, u.malo, u.obis, u.month, hs.unit.month)
	case u.month > hs.unit.month:
		clear(hs.ended)
	default:
		hs.ended[hs.unit] = true
	}
	if hs.ended[u] {
		return fmt.Errorf("%w: %s %s in month %d again", errOutOfOrder, u.malo, u.obis, u.month)
	}
	return nil
}

// errNotPlanned: the second read met a batch the first did not (the file
// changed between the reads).
var errNotPlanned = errors.New("a batch the first read did not meet")

// addToUnit adds a row of a bulk batch to the channel's month being read.
func (hs *historyStream) addToUnit(p *parsed) {
	hs.unit = unitOfRow(p)
	hs.unitRows++
	i, ok := hs.index[p.key]
	if !ok {
		i = len(hs.series)
		hs.index[p.key] = i
		s := meterstore.StoredSeries{Delivery: p.delivery, Extra: p.extra}
		hs.series = append(hs.series, s)
		hs.prefixes = append(hs.prefixes, hs.im.readingPrefix(s))
	} else {
		d := &hs.series[i].Delivery
		d.Intervals = append(d.Intervals, p.delivery.Intervals...)
		d.Readings = append(d.Readings, p.delivery.Readings...)
	}
	hs.seen[hs.prefixes[i]+p.at().UTC().String()] = struct{}{}
	if p.delivery.RecordedAt.Equal(hs.im.recordedAt) {
		hs.stamped++
	}
}

// endUnit appends the unit's deliveries to page and starts the next.
func (hs *historyStream) endUnit(page []meterstore.StoredSeries, rows int) ([]meterstore.StoredSeries, int) {
	page = append(page, hs.series...)
	rows += hs.unitRows
	hs.bulkRows += hs.unitRows
	hs.readings += len(hs.seen)
	hs.series, hs.prefixes, hs.unitRows = nil, nil, 0
	clear(hs.index)
	clear(hs.seen)
	return page, rows
}

// collect adds a row of a batch the routed write takes.
func (hs *historyStream) collect(g *plannedBatch, p *parsed) {
	b := hs.rest[g.label]
	if b == nil {
		b = &readGroup{batch: batch{file: g.file, label: g.label}, index: map[string]int{}}
		hs.rest[g.label] = b
	}
	b.addRow(*p)
}

// restBatches are the collected batches in the order the file first names them.
func (hs *historyStream) restBatches() []batch {
	var out []batch
	for _, g := range hs.plan.order {
		if b := hs.rest[g.label]; b != nil {
			out = append(out, b.batch)
		}
	}
	return out
}
