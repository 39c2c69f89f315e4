package engine

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine/plan"
	"github.com/meterstore/meterstore/internal/duckstream"
)

// A confined statement's cold half is fed, not read: its relations — the
// planned files read with the scope, range and ceilings in the reader's
// filter, resolved as planned — run in the engine's own database, which the
// confined one cannot name, and reach the confined statement through
// meter_fed_scan(token), a table function filled from the engine database's
// streamed result chunks, whose vectors it references (no value passes
// through Go). The half comes as several relations that share no resolution
// key (plan.Feeder): each runs as a stream of its own on its own connection,
// and the scan's threads take them in turn, so the engine's database reads
// files on as many threads as the confined one consumes rows. Only the
// columns the statement reads are asked for. The confined database opens no
// file itself.
//
// A relation's query is prepared once and kept for its next run
// (duckstream.Statements): a reused plan (plan.Plan.Again) feeds the same
// relations, whose text carries everything their rows depend on — the
// files, the scope, range and ceilings, every value rendered — so a kept
// statement answers its text and nothing else, whichever scope runs it.
// A relation that reads a run's own meter_cold_scan token is new each run,
// and not kept.

// maxFedStatements bounds the fed relations kept prepared, each on a
// connection of the engine's database: a reused plan's halves (up to
// Streams relations each), and one more of a relation for each run of it at
// once.
const maxFedStatements = 64

// fedRegistry hands fed relations to meter_fed_scan by an unguessable token
// that lives only while its statement runs, for the confined database of one
// scope only.
type fedRegistry struct {
	mu sync.Mutex
	m  map[string]*fedRelation
}

// fedRelation is one cold half of a confined statement.
type fedRelation struct {
	e     *Engine // the engine whose database runs the relation
	ctx   context.Context
	cfg   meterstore.TableConfig
	parts []string // relations whose UNION ALL is the half
	scope string   // the confined database's key: no other may read it

	mu      sync.Mutex
	streams map[*fedStream]bool // the streams open, ended at remove
	removed bool                // the statement ended: no stream may start
}

func (r *fedRegistry) add(f *fedRelation) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]*fedRelation{}
	}
	r.m[tok] = f
	return tok
}

func (r *fedRegistry) get(tok string) (*fedRelation, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.m[tok]
	return f, ok
}

// alias names the relation fed under tok by as too, until unalias (see
// scanRegistry.alias). false if tok names none.
func (r *fedRegistry) alias(as, tok string) bool { return aliasToken(&r.mu, r.m, as, tok) }

// unalias forgets as, an alias, leaving the relation it named fed.
func (r *fedRegistry) unalias(as string) { unaliasToken(&r.mu, r.m, as) }

// remove forgets tok and ends the queries its scans started.
func (r *fedRegistry) remove(tok string) {
	r.mu.Lock()
	f := r.m[tok]
	delete(r.m, tok)
	r.mu.Unlock()
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.streams {
		s.close()
	}
	f.streams, f.removed = nil, true
}

// feeder is a confined handle's plan.Feeder: its cold halves, run by the
// engine's database, for its own confined database only.
type feeder struct{ e *Engine }

// Streams is the confined database's threads: as many streams as it
// consumes at once.
func (f feeder) Streams() int { return f.e.shared.threads() }

func (f feeder) Feed(ctx context.Context, cfg meterstore.TableConfig, rels []string) (string, string) {
	s := f.e.shared
	tok := s.fed.add(&fedRelation{e: s, ctx: ctx, cfg: cfg, parts: rels, scope: f.e.confinedKey()})
	return fmt.Sprintf("SELECT * FROM meter_fed_scan('%s')", tok), tok
}

func (f feeder) Unfeed(tok string) { f.e.shared.fed.remove(tok) }

// threads is how many threads each of the engine's DuckDB databases runs.
func (e *Engine) threads() int {
	if e.cfg.Threads > 0 {
		return e.cfg.Threads
	}
	return runtime.NumCPU()
}

// registerFedScan installs meter_fed_scan on the confined database of key.
// Like meter_hot_scan's, its token is looked up when the statement is
// prepared and again each time it runs (fedSource.Init).
func (e *Engine) registerFedScan(conn *sql.Conn, key string) error {
	lookup := func(tok string) (*fedRelation, error) {
		f, ok := e.fed.get(tok)
		if !ok || f.scope != key {
			return nil, errFedExpired
		}
		return f, nil
	}
	fn := duckdb.ParallelChunkTableFunction{
		Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{typeInfo(duckdb.TYPE_VARCHAR)}},
		BindArguments: func(named map[string]any, args ...any) (duckdb.ParallelChunkTableSource, error) {
			e.shared.confinedBinds.Add(1)
			tok, _ := args[0].(string)
			f, err := lookup(tok)
			if err != nil {
				return nil, err
			}
			return &fedSource{tok: tok, lookup: lookup, cols: columnInfos(f.cfg)}, nil
		},
	}
	if err := duckdb.RegisterTableUDF(conn, "meter_fed_scan", fn); err != nil {
		return fmt.Errorf("register meter_fed_scan: %w", err)
	}
	return nil
}

// errFedExpired refuses a token that names no relation of this database now.
var errFedExpired = errors.New("meter_fed_scan: unknown or expired relation (the engine plans fed relations; they cannot be called directly)")

// fedSource is one scan of a fed relation: each of its threads takes the
// next relation not yet taken, runs it — projected to the columns DuckDB asks
// for — on a connection of the engine's database, and hands on its chunks
// until it ends; then the next, until none is left.
type fedSource struct {
	tok    string
	lookup func(tok string) (*fedRelation, error)
	cols   []duckdb.ColumnInfo

	// The run's state, set anew by Init.
	f    *fedRelation
	err  error // the token names no relation of this database now
	mu   sync.Mutex
	next int // the first relation no thread has taken
}

// fedStream is one thread's relation running in the engine's database.
type fedStream struct{ src *duckstream.Source }

func (s *fedSource) ColumnInfos() []duckdb.ColumnInfo     { return s.cols }
func (s *fedSource) Cardinality() *duckdb.CardinalityInfo { return nil }
func (s *fedSource) NewLocalState() any                   { return &fedStream{} }

// Init starts a run of the statement: the relation its token names now,
// none of its parts taken yet.
func (s *fedSource) Init() duckdb.ParallelTableSourceInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.f, s.err = s.lookup(s.tok)
	s.next = 0
	if s.err != nil {
		return duckdb.ParallelTableSourceInfo{MaxThreads: 1}
	}
	return duckdb.ParallelTableSourceInfo{MaxThreads: len(s.f.parts)}
}

func (s *fedSource) FillChunk(local any, c duckdb.DataChunk) error {
	if s.err != nil {
		return s.err
	}
	st := local.(*fedStream)
	out, proj, err := duckstream.OutputChunk(&c)
	if err != nil {
		return err
	}
	for {
		if st.src == nil {
			part, ok := s.take()
			if !ok {
				return nil
			}
			if err := s.start(st, part, proj, c.ColumnCount()); err != nil {
				return err
			}
		}
		n, err := st.src.Fill(out)
		if err != nil || n > 0 {
			return err
		}
		s.f.end(st)
	}
}

// take is the next relation no thread has taken, false when none is left.
func (s *fedSource) take() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == len(s.f.parts) {
		return "", false
	}
	s.next++
	return s.f.parts[s.next-1], true
}

func (s *fedSource) start(st *fedStream, part string, proj []int, n int) error {
	cols := make([]string, n)
	all := s.f.cfg.Columns()
	for src, at := range proj {
		if at >= 0 && at < n {
			cols[at] = meterstore.QuoteIdent(all[src].Name)
		}
	}
	for i, c := range cols {
		if c == "" {
			return fmt.Errorf("meter_fed_scan: output column %d is none of the table's", i)
		}
	}
	f := s.f
	src, err := f.e.fedStatements.Open(f.ctx, "SELECT "+strings.Join(cols, ", ")+" FROM ("+part+")", !namesRunScan(part))
	if err != nil {
		return err
	}
	st.src = src
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.removed {
		st.close()
		return errFedExpired
	}
	if f.streams == nil {
		f.streams = map[*fedStream]bool{}
	}
	f.streams[st] = true
	return nil
}

// namesRunScan is whether relation reads a scan registered for one run
// (meter_cold_scan under the run's token): its text never comes again.
func namesRunScan(relation string) bool {
	return strings.Contains(relation, plan.MeterColdScan+"(")
}

// end closes st, whose relation ended, and gives its statement back for the
// next run of the relation.
func (f *fedRelation) end(st *fedStream) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.streams, st)
	st.close()
}

// close ends the stream's query; the caller holds the relation's lock.
func (s *fedStream) close() {
	if s.src != nil {
		s.src.Close()
		s.src = nil
	}
}
