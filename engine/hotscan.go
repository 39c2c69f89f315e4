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
	if err := duckdb.RegisterTableUDF(conn, "meter_hot_partials", e.partialsFunction()); err != nil {
		return fmt.Errorf("register meter_hot_partials: %w", err)
	}
	return nil
}

// partialsFunction is meter_hot_partials: the partial aggregates of a hot
// half PostgreSQL computes (plan.PartialsScan), registered under a token
// by a plan of the engine's own database — a confined one plans none. Its
// columns are the query's, text; the plan casts them back.
func (e *Engine) partialsFunction() duckdb.ChunkTableFunction {
	lookup := func(tok string) (*plannedScan, error) {
		p, ok := e.scans.get(tok)
		if !ok || p.Partials == nil || p.confined != "" {
			return nil, fmt.Errorf("meter_hot_partials: unknown or expired scan (the engine plans hot partials; they cannot be called directly)")
		}
		return p, nil
	}
	return duckdb.ChunkTableFunction{
		Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{typeInfo(duckdb.TYPE_VARCHAR)}},
		BindArguments: func(named map[string]any, args ...any) (duckdb.ChunkTableSource, error) {
			tok, _ := args[0].(string)
			p, err := lookup(tok)
			if err != nil {
				return nil, err
			}
			cols := make([]duckdb.ColumnInfo, len(p.Partials.Columns))
			for i, c := range p.Partials.Columns {
				cols[i] = duckdb.ColumnInfo{Name: c, T: typeInfo(duckdb.TYPE_VARCHAR)}
			}
			return &partialsSource{tok: tok, lookup: lookup, cols: cols}, nil
		},
	}
}

// partialsSource hands DuckDB the rows of a hot partials query: one row per
// day and group, read at once. Init sends the query, so PostgreSQL computes
// while DuckDB reads the cold half; the first FillChunk waits for it.
type partialsSource struct {
	tok    string
	lookup func(tok string) (*plannedScan, error)
	cols   []duckdb.ColumnInfo

	// The run's state, set anew by Init.
	p       *plannedScan
	err     error
	pending chan partialsResult // the query Init sent
	rows    [][]*string
	read    bool
	pos     int
}

type partialsResult struct {
	rows [][]*string
	err  error
}

func (s *partialsSource) ColumnInfos() []duckdb.ColumnInfo     { return s.cols }
func (s *partialsSource) Cardinality() *duckdb.CardinalityInfo { return nil }

// Init starts a run of the statement: the scan its token names now, its
// query sent.
func (s *partialsSource) Init() {
	p, err := s.lookup(s.tok)
	*s = partialsSource{tok: s.tok, lookup: s.lookup, cols: s.cols, p: p, err: err}
	if err != nil {
		return
	}
	pending := make(chan partialsResult, 1)
	s.pending = pending
	go func() {
		rows, err := queryPartials(p)
		pending <- partialsResult{rows: rows, err: err}
	}()
}

func (s *partialsSource) FillChunk(chunk duckdb.DataChunk) error {
	if s.err != nil {
		return s.err
	}
	if !s.read {
		r := <-s.pending
		if r.err != nil {
			s.err = r.err
			return r.err
		}
		s.rows, s.read = r.rows, true
	}
	n := min(duckdb.GetDataChunkCapacity(), len(s.rows)-s.pos)
	for i, row := range s.rows[s.pos : s.pos+n] {
		for col, v := range row {
			var val any
			if v != nil {
				val = *v
			}
			if err := chunk.SetValue(col, i, val); err != nil {
				return fmt.Errorf("hot partials: column %d: %w", col, err)
			}
		}
	}
	s.pos += n
	s.p.Rows.Add(n)
	return chunk.SetSize(n)
}

// queryPartials runs p's query through its hot tier.
func queryPartials(p *plannedScan) ([][]*string, error) {
	agg, ok := p.Pager.(plan.HotAggregator)
	if !ok {
		return nil, fmt.Errorf("hot partials of %s: the hot tier computes no aggregates", p.Config.Name())
	}
	rows, err := agg.TextRows(p.Ctx, p.Partials.SQL)
	if err != nil {
		err = fmt.Errorf("%s of %s: %w", p.kind(), p.Config.Name(), err)
		p.fail(err)
		return nil, err
	}
	return rows, nil
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
	// out is each projected column of the chunk being filled.
	out   []chunkColumn
	bufs  *scanBuffers
	pages chan pageResult
	free  chan hotPage
	page  hotPage
	pos   int
	done  bool
	// drained is set when the reader has ended with every page read: both
	// page buffers are back in free.
	drained bool
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
	if err := s.bindVectors(&chunk); err != nil {
		return fmt.Errorf("hot scan: %w", err)
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
		if err := s.set(n, k); err != nil {
			return err
		}
		s.pos += k
		n += k
	}
	for i := range s.out {
		c := &s.out[i]
		if err := c.strs.Assign(&chunk, c.col); err != nil {
			return fmt.Errorf("hot scan: %w", err)
		}
	}
	s.p.Rows.Add(n)
	if s.drained {
		s.releaseBuffers()
	}
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
	s.bufs = takeScanBuffers()
	s.out = s.bufs.columns(s.p.Config, s.projected)
	scans := make([]HotScan, len(s.p.Scans))
	for i, sc := range s.p.Scans {
		sc.Columns = plan.ScanColumns(names)
		scans[i] = sc
	}
	s.pages = make(chan pageResult)
	s.free = make(chan hotPage, len(s.bufs.pages))
	for _, p := range s.bufs.pages {
		s.free <- p
	}
	go s.read(scans)
}

// scanBuffers is what reading one hot scan into chunks needs — its two page
// buffers and each projected column's string buffers — kept from scan to
// scan (freeScanBuffers): they grow to a page's and a chunk's size once, not
// once per statement, which was most of the Go garbage a hot row made.
type scanBuffers struct {
	pages   [2]hotPage
	strings []duckstream.Strings
	freed   time.Time // when its last scan handed it back
}

// freeScanBuffers holds the buffers of finished hot scans for the next ones.
// A fixed few, not a sync.Pool: the pool is emptied by every other garbage
// collection, which a server running hot scans back to back runs often, and
// the buffers were then made again. The bound is what stays resident (two
// pages of up to scan_chunk_rows rows each): scans beyond it at once make
// their own. Buffers no scan took for a while are dropped
// (dropIdleScanBuffers): an idle server keeps none.
var freeScanBuffers = make(chan *scanBuffers, keptScanBuffers)

// keptScanBuffers is how many scans' buffers freeScanBuffers keeps.
const keptScanBuffers = 4

// keptStringBytes bounds a column's string buffer kept for the next scan: a
// chunk of ordinary values (identifiers, codes) holds tens of kilobytes, and
// one statement's chunk of long texts must not stay resident after it.
const keptStringBytes = 1 << 20

func takeScanBuffers() *scanBuffers {
	select {
	case b := <-freeScanBuffers:
		return b
	default:
		return &scanBuffers{}
	}
}

// columns is the chunk columns of the projected layout columns of cfg, their
// string buffers taken from b.
func (b *scanBuffers) columns(cfg meterstore.TableConfig, projected []int) []chunkColumn {
	for len(b.strings) < len(projected) {
		b.strings = append(b.strings, duckstream.Strings{})
	}
	defs := cfg.Columns()
	out := make([]chunkColumn, len(projected))
	for i, col := range projected {
		out[i] = chunkColumn{col: col, typ: defs[col].Type, strs: &b.strings[i]}
	}
	return out
}

// releaseBuffers hands the buffers of a scan read to its end back to
// freeScanBuffers, once the last chunk's strings are written: the reader
// holds none then, both pages are in free.
func (s *hotSource) releaseBuffers() {
	for i := range s.bufs.pages {
		s.bufs.pages[i] = <-s.free
	}
	for i := range s.bufs.strings {
		if s.bufs.strings[i].Capacity() > keptStringBytes {
			s.bufs.strings[i] = duckstream.Strings{}
		}
	}
	s.bufs.freed = time.Now()
	select {
	case freeScanBuffers <- s.bufs:
	default: // enough are kept
	}
	s.bufs, s.out, s.drained = nil, nil, false
}

// dropIdleScanBuffers drops the kept scan buffers no scan has taken since
// cut, and returns how many. Kept buffers grow to the largest page a scan
// read — a burst of whole-tier reads leaves tens of MB of rows — and are
// worth keeping only while scans follow each other; on an idle server they
// are the largest part of the Go heap kept live.
func dropIdleScanBuffers(cut time.Time) int {
	dropped := 0
	for range len(freeScanBuffers) {
		var b *scanBuffers
		select {
		case b = <-freeScanBuffers:
		default:
			return dropped
		}
		if b.freed.Before(cut) {
			dropped++
			continue
		}
		select {
		case freeScanBuffers <- b:
		default: // a scan ended meanwhile and took the place: as good
		}
	}
	return dropped
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
		s.done, s.drained = true, true
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
func (s *hotSource) set(at, k int) error {
	for j := range s.out {
		c := &s.out[j]
		for i := range k {
			if err := s.put(c, at+i, s.pos+i); err != nil {
				return fmt.Errorf("hot scan: column %d: %w", c.col, err)
			}
		}
	}
	return nil
}

// put writes column c of the page's row pos into the chunk's row, by the
// column's Row field (Row.Field) and its type.
func (s *hotSource) put(c *chunkColumn, row, pos int) error {
	r := &s.page.rows[pos]
	switch f := r.Field(c.col).(type) {
	case *string:
		c.strs.Add(row, *f)
	case **string:
		if *f == nil {
			c.setNull(row)
			return nil
		}
		c.strs.Add(row, **f)
	case *time.Time:
		return c.putTime(row, *f)
	case **time.Time:
		if *f == nil {
			c.setNull(row)
			return nil
		}
		return c.putTime(row, **f)
	case *decimal.Decimal:
		return c.putScaled(row, s.scaledValue(f, pos))
	case *uint64:
		return c.putVersion(row, *f)
	default: // a declared column the row does not carry
		c.setNull(row)
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
