package engine

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine/plan"
	"github.com/meterstore/meterstore/internal/duckstream"
)

// scanRegistry hands planned scans to the table functions by an unguessable
// token that lives only while its statement runs (plan.Registry): a statement
// cannot call meter_hot_scan with a request of its own making (the planner
// also refuses the name), so a scope pushed into the scan cannot be forged away.
type scanRegistry struct {
	mu     sync.Mutex
	scans  map[string]*plannedScan
	byScan map[*plan.Scan]*plannedScan
}

// plannedScan is a registered scan and how its reading ends.
type plannedScan struct {
	*plan.Scan
	ticket string
	// confined is the key of the confined database whose statement planned
	// the scan ("" for the engine's own): no other confined database reads it.
	confined string
	// ended is closed when the statement is released: a source DuckDB stopped
	// reading early (LIMIT) has a prefetching goroutine to end.
	ended chan struct{}

	mu     sync.Mutex
	failed error // the error the scan ended with (failure)
}

// fail records the error the scan ended with. DuckDB hands a table function's
// error on as text only; the statement's end looks here for the typed error
// (a partition archived under the scan wraps ErrBoundaryMoved).
func (p *plannedScan) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed == nil {
		p.failed = err
	}
}

// failure is the error the scan ended with, nil if none.
func (p *plannedScan) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

func (p *plannedScan) kind() string {
	if p.What == "" {
		return "hot scan"
	}
	return p.What
}

// Add registers s, planned for the engine's database, under a new token.
func (r *scanRegistry) Add(s *plan.Scan) string { return r.add(s, "") }

// add registers s, planned for the confined database of key ("" for the
// engine's own), under a new token.
func (r *scanRegistry) add(s *plan.Scan, key string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	p := &plannedScan{Scan: s, ticket: tok, confined: key, ended: make(chan struct{})}
	r.mu.Lock()
	if r.scans == nil {
		r.scans, r.byScan = map[string]*plannedScan{}, map[*plan.Scan]*plannedScan{}
	}
	r.scans[tok], r.byScan[s] = p, p
	r.mu.Unlock()
	return tok
}

// Remove ends the scan of tok: its token no longer names it.
func (r *scanRegistry) Remove(tok string) {
	r.mu.Lock()
	p, ok := r.scans[tok]
	delete(r.scans, tok)
	if ok {
		delete(r.byScan, p.Scan)
	}
	r.mu.Unlock()
	if ok {
		close(p.ended)
	}
}

// alias names the scan registered under tok by as too, until unalias: a
// statement prepared for an earlier run of a plan names that run's token,
// and reaches this run's scan through it. false if tok names none.
func (r *scanRegistry) alias(as, tok string) bool { return aliasToken(&r.mu, r.scans, as, tok) }

// unalias forgets as, an alias, leaving the scan it named registered.
func (r *scanRegistry) unalias(as string) { unaliasToken(&r.mu, r.scans, as) }

func (r *scanRegistry) get(tok string) (*plannedScan, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.scans[tok]
	return p, ok
}

// failure is the error the registered scan s ended with, nil if none.
func (r *scanRegistry) failure(s *plan.Scan) error {
	r.mu.Lock()
	p, ok := r.byScan[s]
	r.mu.Unlock()
	if !ok {
		return nil
	}
	return p.failure()
}

func typeInfo(t duckdb.Type) duckdb.TypeInfo {
	ti, err := duckdb.NewTypeInfo(t)
	if err != nil {
		panic(err)
	}
	return ti
}

func columnTypeInfo(t meterstore.ColumnType) duckdb.TypeInfo {
	switch t {
	case meterstore.TypeTimestamp:
		return typeInfo(duckdb.TYPE_TIMESTAMP_TZ)
	case meterstore.TypeDate:
		return typeInfo(duckdb.TYPE_DATE)
	case meterstore.TypeDecimal18_6:
		ti, err := duckdb.NewDecimalInfo(18, 6)
		if err != nil {
			panic(err)
		}
		return ti
	case meterstore.TypeDecimal20_0:
		ti, err := duckdb.NewDecimalInfo(20, 0)
		if err != nil {
			panic(err)
		}
		return ti
	}
	return typeInfo(duckdb.TYPE_VARCHAR)
}

func columnInfos(cfg meterstore.TableConfig) []duckdb.ColumnInfo {
	cols := cfg.Columns()
	out := make([]duckdb.ColumnInfo, len(cols))
	for i, c := range cols {
		out[i] = duckdb.ColumnInfo{Name: c.Name, T: columnTypeInfo(c.Type)}
	}
	return out
}

// confinedScans is the registry a confined handle's plans register their
// scans in: each is bound to the handle's confined database.
type confinedScans struct {
	r   *scanRegistry
	key string
}

func (c confinedScans) Add(s *plan.Scan) string { return c.r.add(s, c.key) }
func (c confinedScans) Remove(tok string)       { c.r.Remove(tok) }

// registerPlannedScans installs meter_hot_scan(token) and
// meter_cold_scan(token) on the engine's database, for any plan's scans: it
// also runs the cold halves fed to confined databases.
func (e *Engine) registerPlannedScans(conn *sql.Conn) error {
	for name, kind := range map[string]string{"meter_hot_scan": "hot", "meter_cold_scan": "cold"} {
		if err := duckdb.RegisterTableUDF(conn, name, e.plannedScanFunction(name, kind, nil)); err != nil {
			return fmt.Errorf("register %s: %w", name, err)
		}
	}
	return nil
}

// registerConfinedScans installs on the confined database of key what its
// statements read through: meter_hot_scan of the scans its own statements
// planned, and meter_fed_scan. It reads no file, so it has no
// meter_cold_scan: its cold halves are fed.
func (e *Engine) registerConfinedScans(conn *sql.Conn, key string) error {
	if err := duckdb.RegisterTableUDF(conn, "meter_hot_scan", e.plannedScanFunction("meter_hot_scan", "hot", &key)); err != nil {
		return fmt.Errorf("register meter_hot_scan: %w", err)
	}
	return e.registerFedScan(conn, key)
}

// registerUnplanned installs meter_unplanned(table), which the catalog
// entries of the tables read.
func (e *Engine) registerUnplanned(conn *sql.Conn) error {
	unplanned := duckdb.ChunkTableFunction{
		Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{typeInfo(duckdb.TYPE_VARCHAR)}},
		BindArguments: func(named map[string]any, args ...any) (duckdb.ChunkTableSource, error) {
			name, _ := args[0].(string)
			t, ok := e.tableByRelation(name)
			if !ok {
				return nil, fmt.Errorf("meter_unplanned: no table %q", name)
			}
			return &unplannedSource{name: name, cols: columnInfos(t.cfg)}, nil
		},
	}
	if err := duckdb.RegisterTableUDF(conn, "meter_unplanned", unplanned); err != nil {
		return fmt.Errorf("register meter_unplanned: %w", err)
	}
	return nil
}

// plannedScanFunction is meter_hot_scan or meter_cold_scan: the source of a
// scan the planner registered under a token — for a confined database (key
// not nil), only of a scan its own statements planned. The token is looked
// up when the statement is prepared, and again each time it runs (Init): a
// statement kept prepared runs again for another run of its plan, whose
// scan its token then names (scanRegistry.alias).
func (e *Engine) plannedScanFunction(name, kind string, key *string) duckdb.ChunkTableFunction {
	lookup := func(tok string) (*plannedScan, error) {
		p, ok := e.scans.get(tok)
		if !ok || key != nil && p.confined != *key {
			return nil, fmt.Errorf("%s: unknown or expired scan (the engine plans %s scans; they cannot be called directly)", name, kind)
		}
		return p, nil
	}
	return duckdb.ChunkTableFunction{
		Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{typeInfo(duckdb.TYPE_VARCHAR)}},
		BindArguments: func(named map[string]any, args ...any) (duckdb.ChunkTableSource, error) {
			if key != nil {
				e.shared.confinedBinds.Add(1)
			}
			tok, _ := args[0].(string)
			p, err := lookup(tok)
			if err != nil {
				return nil, err
			}
			return &hotSource{tok: tok, lookup: lookup, cols: columnInfos(p.Config)}, nil
		},
	}
}

// unplannedSource backs the catalog entries of readings/readings_versions: they
// carry the schema (so DESCRIBE and information_schema work) and refuse to be
// read, because only the planner knows where the rows are. A statement that
// reached one unplanned gets an error, never an empty answer.
type unplannedSource struct {
	name string
	cols []duckdb.ColumnInfo
}

func (s *unplannedSource) ColumnInfos() []duckdb.ColumnInfo     { return s.cols }
func (s *unplannedSource) Cardinality() *duckdb.CardinalityInfo { return nil }
func (s *unplannedSource) Init()                                {}
func (s *unplannedSource) FillChunk(duckdb.DataChunk) error {
	return fmt.Errorf("%s can only be read through the MeterStore engine (Query/Stream), which splits it across the tiers", s.name)
}

// hotSource streams the planned hot scans into DuckDB chunks. A goroutine reads
// one page ahead while DuckDB consumes the current one, so PostgreSQL and the
// engine work at the same time; two page buffers circulate between them, so
// memory stays at two pages.
type hotSource struct {
	tok    string
	lookup func(tok string) (*plannedScan, error)
	cols   []duckdb.ColumnInfo

	// The run's state, set anew by Init.
	p         *plannedScan
	err       error // the token names no scan of this database now
	projected []int // column indexes DuckDB asked for
	// strings collects each projected column's strings of the chunk being
	// filled, written into it at once when the chunk is full.
	strings []duckstream.Strings
	pages   chan pageResult
	free    chan hotPage
	page    hotPage
	pos     int
	done    bool
}

// hotPage is one page of rows; values holds their values as DECIMAL(18,6)'s
// scaled integers where the pager hands them so (plan.ScaledPages), and is
// empty where Row.Value holds them.
type hotPage struct {
	rows   []meterstore.Row
	values []int64
}

type pageResult struct {
	page hotPage
	err  error
}

func (s *hotSource) ColumnInfos() []duckdb.ColumnInfo     { return s.cols }
func (s *hotSource) Cardinality() *duckdb.CardinalityInfo { return nil }

// Init starts a run of the statement: the scan its token names now, read
// from the start.
func (s *hotSource) Init() {
	p, err := s.lookup(s.tok)
	*s = hotSource{tok: s.tok, lookup: s.lookup, cols: s.cols, p: p, err: err}
}

func (s *hotSource) FillChunk(chunk duckdb.DataChunk) error {
	if s.err != nil {
		return s.err
	}
	if s.pages == nil {
		s.start(chunk)
	}
	for i := range s.strings {
		s.strings[i].Reset()
	}
	capacity := duckdb.GetDataChunkCapacity()
	n := 0
	for n < capacity {
		if s.pos >= len(s.page.rows) {
			if s.done {
				break
			}
			if err := s.next(); err != nil {
				return err
			}
			continue
		}
		k := min(capacity-n, len(s.page.rows)-s.pos)
		if err := s.set(chunk, n, k); err != nil {
			return err
		}
		s.pos += k
		n += k
	}
	for i, col := range s.projected {
		if err := s.strings[i].Assign(&chunk, col); err != nil {
			return fmt.Errorf("hot scan: %w", err)
		}
	}
	s.p.Rows.Add(n)
	return chunk.SetSize(n)
}

// start reads which columns DuckDB projected and starts the page reader.
func (s *hotSource) start(chunk duckdb.DataChunk) {
	var names []string
	for i, c := range s.p.Config.Columns() {
		if isProjected(chunk, i) {
			s.projected = append(s.projected, i)
			names = append(names, c.Name)
		}
	}
	s.strings = make([]duckstream.Strings, len(s.projected))
	scans := make([]HotScan, len(s.p.Scans))
	for i, sc := range s.p.Scans {
		sc.Columns = plan.ScanColumns(names)
		scans[i] = sc
	}
	s.pages = make(chan pageResult)
	s.free = make(chan hotPage, 2)
	s.free <- takePage()
	s.free <- takePage()
	go s.read(scans)
}

// pageBuffers holds the page buffers of finished hot scans for the next
// ones: a page of rows grows to its largest size once, not once per
// statement. The pool lets the collector take what stays unused.
var pageBuffers sync.Pool

func takePage() hotPage {
	if p, ok := pageBuffers.Get().(*hotPage); ok {
		return *p
	}
	return hotPage{}
}

// releasePages hands the buffers of a scan read to its end back to
// pageBuffers: then the reader holds none, both are in free.
func (s *hotSource) releasePages() {
	for {
		select {
		case buf := <-s.free:
			if cap(buf.rows) > 0 {
				pageBuffers.Put(&buf)
			}
		default:
			return
		}
	}
}

// isProjected reports whether DuckDB asked for column i. The pinned duckdb-go
// shows the projection only through SetValue, which ignores a value for an
// unprojected column and refuses, for a projected one, a value that no SQL
// type takes (a channel); the row it probes is written before it is read.
func isProjected(chunk duckdb.DataChunk, i int) bool {
	return chunk.SetValue(i, 0, make(chan struct{})) != nil
}

// read pages every scan in turn, one page ahead of the consumer.
func (s *hotSource) read(scans []HotScan) {
	defer close(s.pages)
	send := func(r pageResult) bool {
		select {
		case s.pages <- r:
			return true
		case <-s.p.ended:
			return false
		}
	}
	for _, sc := range scans {
		pages, err := s.p.Pager.Pages(sc)
		if err != nil {
			send(pageResult{err: fmt.Errorf("%s of %s: %w", s.p.kind(), sc.Table, err)})
			return
		}
		for {
			var buf hotPage
			select {
			case buf = <-s.free:
			case <-s.p.ended:
				return
			}
			if err := s.p.Ctx.Err(); err != nil {
				send(pageResult{err: fmt.Errorf("%s cancelled: %w", s.p.kind(), err)})
				return
			}
			page, err := nextPage(s.p.Ctx, pages, buf)
			if err != nil {
				send(pageResult{err: fmt.Errorf("%s of %s: %w", s.p.kind(), sc.Table, err)})
				return
			}
			if len(page.rows) == 0 {
				s.free <- page
				break
			}
			if !send(pageResult{page: page}) {
				return
			}
		}
	}
}

// nextPage reads the next page of pages into buf's storage, its values as
// scaled integers where the pager can hand them so.
func nextPage(ctx context.Context, pages plan.RowPages, buf hotPage) (hotPage, error) {
	if sp, ok := pages.(plan.ScaledPages); ok {
		rows, values, err := sp.NextScaled(ctx, buf.rows, buf.values)
		return hotPage{rows: rows, values: values}, err
	}
	rows, err := pages.Next(ctx, buf.rows)
	return hotPage{rows: rows, values: buf.values[:0]}, err
}

// next hands the consumed page back to the reader and takes the next one.
func (s *hotSource) next() error {
	if s.page.rows != nil {
		s.free <- s.page
	}
	s.page, s.pos = hotPage{}, 0
	r, ok := <-s.pages
	if !ok {
		s.done = true
		s.releasePages()
		return nil
	}
	if r.err != nil {
		s.done = true
		s.p.fail(r.err)
		return r.err
	}
	s.page = r.page
	return nil
}

// set writes k rows of the page, from s.pos on, into the chunk's rows from
// at, column by column: a column's strings are only collected here, and
// written into the chunk by one call when it is full (FillChunk).
func (s *hotSource) set(chunk duckdb.DataChunk, at, k int) error {
	for j, col := range s.projected {
		for i := range k {
			if err := s.setValue(chunk, &s.strings[j], col, at+i, s.pos+i); err != nil {
				return fmt.Errorf("hot scan: column %d: %w", col, err)
			}
		}
	}
	return nil
}

// setValue writes column col of the page's row pos into the chunk's row, by
// the column's Row field (Row.Field): the Go type of the field picks the
// DuckDB value. A string is collected in strs.
func (s *hotSource) setValue(chunk duckdb.DataChunk, strs *duckstream.Strings, col, row, pos int) error {
	r := &s.page.rows[pos]
	switch f := r.Field(col).(type) {
	case *string:
		strs.Add(row, *f)
	case **string:
		if *f == nil {
			return chunk.SetValue(col, row, nil)
		}
		strs.Add(row, **f)
	case *time.Time:
		return duckdb.SetChunkValue(chunk, col, row, *f)
	case **time.Time:
		if *f == nil {
			return chunk.SetValue(col, row, nil)
		}
		return duckdb.SetChunkValue(chunk, col, row, **f)
	case *decimal.Decimal:
		return duckdb.SetChunkValue(chunk, col, row, s.scaledValue(f, pos))
	case *uint64:
		return duckdb.SetChunkValue(chunk, col, row, *f)
	default: // a declared column the row does not carry
		return chunk.SetValue(col, row, nil)
	}
	return nil
}

// scaledValue is the page's row pos's value as DECIMAL(18,6)'s scaled
// integer: from the page's values where the pager handed them so, else from v.
func (s *hotSource) scaledValue(v *decimal.Decimal, pos int) int64 {
	if len(s.page.values) > 0 {
		return s.page.values[pos]
	}
	return v.Shift(6).IntPart()
}
