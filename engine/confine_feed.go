package engine

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/duckstream"
)

// A confined statement's cold half is fed, not read: its relation — the
// planned files read with the scope, range and ceilings in the reader's
// filter, resolved as planned — runs in the engine's own database, which the
// confined one cannot name, and reaches the confined statement through
// meter_fed_scan(token), a table function filled from the engine database's
// streamed result chunks by DuckDB's vector copy (no value passes through
// Go). Only the columns the statement reads are asked for. The confined
// database opens no file itself.

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
	sql   string
	scope string // the confined database's key: no other may read it

	mu      sync.Mutex
	sources []*fedSource
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
	for _, s := range f.sources {
		s.close()
	}
	f.sources = nil
}

// feeder is a confined handle's plan.Feeder: its cold halves, run by the
// engine's database, for its own confined database only.
type feeder struct{ e *Engine }

func (f feeder) Feed(ctx context.Context, cfg meterstore.TableConfig, rel string) (string, string) {
	s := f.e.shared
	tok := s.fed.add(&fedRelation{e: s, ctx: ctx, cfg: cfg, sql: rel, scope: f.e.confinedKey()})
	return fmt.Sprintf("SELECT * FROM meter_fed_scan('%s')", tok), tok
}

func (f feeder) Unfeed(tok string) { f.e.shared.fed.remove(tok) }

// registerFedScan installs meter_fed_scan on the confined database of key.
func (e *Engine) registerFedScan(conn *sql.Conn, key string) error {
	fn := duckdb.ChunkTableFunction{
		Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{typeInfo(duckdb.TYPE_VARCHAR)}},
		BindArguments: func(named map[string]any, args ...any) (duckdb.ChunkTableSource, error) {
			tok, _ := args[0].(string)
			f, ok := e.fed.get(tok)
			if !ok || f.scope != key {
				return nil, fmt.Errorf("meter_fed_scan: unknown or expired relation (the engine plans fed relations; they cannot be called directly)")
			}
			s := &fedSource{f: f}
			f.mu.Lock()
			defer f.mu.Unlock()
			f.sources = append(f.sources, s)
			return s, nil
		},
	}
	if err := duckdb.RegisterTableUDF(conn, "meter_fed_scan", fn); err != nil {
		return fmt.Errorf("register meter_fed_scan: %w", err)
	}
	return nil
}

// fedSource is one scan of a fed relation: on its first chunk it runs the
// relation, projected to the columns DuckDB asks for, on a connection of the
// engine's database, and hands on its chunks.
type fedSource struct {
	f    *fedRelation
	conn *sql.Conn
	src  *duckstream.Source
}

func (s *fedSource) ColumnInfos() []duckdb.ColumnInfo     { return columnInfos(s.f.cfg) }
func (s *fedSource) Cardinality() *duckdb.CardinalityInfo { return nil }
func (s *fedSource) Init()                                {}

func (s *fedSource) FillChunk(c duckdb.DataChunk) error {
	out, proj, err := duckstream.OutputChunk(&c)
	if err != nil {
		return err
	}
	if s.src == nil {
		if err := s.start(proj, c.ColumnCount()); err != nil {
			return err
		}
	}
	_, err = s.src.Fill(out)
	return err
}

func (s *fedSource) start(proj []int, n int) error {
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
	f.mu.Lock()
	defer f.mu.Unlock()
	conn, err := f.e.db.Conn(f.ctx)
	if err != nil {
		return fmt.Errorf("meter_fed_scan: a connection of the engine's database: %w", err)
	}
	src, err := duckstream.OpenSource(f.ctx, conn, "SELECT "+strings.Join(cols, ", ")+" FROM ("+f.sql+")")
	if err != nil {
		conn.Close()
		return err
	}
	s.conn, s.src = conn, src
	return nil
}

// close ends the scan's query; the caller holds the relation's lock.
func (s *fedSource) close() {
	if s.src != nil {
		s.src.Close()
		s.conn.Close()
		s.src, s.conn = nil, nil
	}
}

// registerOn runs register on a connection of db: a function registered on
// one connection is the database's.
func registerOn(ctx context.Context, db *sql.DB, register func(*sql.Conn) error) error {
	c, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return register(c)
}
