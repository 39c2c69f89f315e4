package duckstream

import (
	"container/list"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2"
)

// Statements keeps queries of one DuckDB database prepared, for Sources that
// run the same query again: preparing parses, binds (read_parquet opens its
// first file's schema) and plans the query, a fixed cost a repeated
// statement would pay on every run. A kept statement is a query's text and
// nothing else — the caller renders every value into it (Open takes no
// parameters) — so a statement serves exactly the rows its text asks for,
// whoever runs it. A kept statement is on a connection of its own, reserved
// while it is kept; a Source takes it for its run, so two runs of one query
// never share one, and gives it back at Close unless the run failed or was
// cancelled. At most max are kept, the least recently used closed first.
type Statements struct {
	db  *sql.DB
	max int

	mu     sync.Mutex
	idle   list.List // of *prepared, the most recently given back first
	closed bool
}

// prepared is one query prepared on a connection reserved for it.
type prepared struct {
	query string
	conn  *sql.Conn
	raw   bindings.Connection
	ps    bindings.PreparedStatement
}

// NewStatements keeps up to max statements of db; Close them before db.
func NewStatements(db *sql.DB, max int) *Statements {
	return &Statements{db: db, max: max}
}

// Open runs query (no parameters: the caller renders its values) as a
// stream, on a statement kept for it or prepared now; DuckDB computes no
// further ahead than its stream buffer. keep is whether the statement is
// kept after the run: false for a query whose text will not come again.
func (s *Statements) Open(ctx context.Context, query string, keep bool) (*Source, error) {
	p := s.take(query)
	if p == nil {
		var err error
		if p, err = s.prepare(ctx, query); err != nil {
			return nil, err
		}
	}
	src, err := start(ctx, p)
	if err != nil {
		p.close()
		return nil, err
	}
	if keep {
		src.kept = s
	}
	return src, nil
}

// take is a statement kept for query, no longer kept; nil if none is.
func (s *Statements) take(query string) *prepared {
	s.mu.Lock()
	defer s.mu.Unlock()
	for el := s.idle.Front(); el != nil; el = el.Next() {
		if p := el.Value.(*prepared); p.query == query {
			s.idle.Remove(el)
			return p
		}
	}
	return nil
}

// giveBack keeps p, whose run ended cleanly, for the next run of its query.
func (s *Statements) giveBack(p *prepared) {
	s.mu.Lock()
	if s.closed || s.max <= 0 {
		s.mu.Unlock()
		p.close()
		return
	}
	s.idle.PushFront(p)
	var evicted []*prepared
	for s.idle.Len() > s.max {
		evicted = append(evicted, s.idle.Remove(s.idle.Back()).(*prepared))
	}
	s.mu.Unlock()
	for _, p := range evicted {
		p.close()
	}
}

// Kept is the text of each statement kept, the most recently given back
// first.
func (s *Statements) Kept() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, s.idle.Len())
	for el := s.idle.Front(); el != nil; el = el.Next() {
		out = append(out, el.Value.(*prepared).query)
	}
	return out
}

// Close closes every kept statement; statements of runs still going are
// closed when they end.
func (s *Statements) Close() error {
	s.mu.Lock()
	s.closed = true
	var all []*prepared
	for el := s.idle.Front(); el != nil; el = el.Next() {
		all = append(all, el.Value.(*prepared))
	}
	s.idle.Init()
	s.mu.Unlock()
	var err error
	for _, p := range all {
		err = errors.Join(err, p.close())
	}
	return err
}

// prepare prepares query on a connection of its own.
func (s *Statements) prepare(ctx context.Context, query string) (*prepared, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("source: a connection: %w", err)
	}
	p := &prepared{query: query, conn: conn}
	err = conn.Raw(func(dc any) error {
		d, ok := dc.(*duckdb.Conn)
		if !ok {
			return fmt.Errorf("source: %T is not a duckdb-go connection", dc)
		}
		p.raw, err = Connection(d)
		return err
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	if bindings.Prepare(p.raw, query, &p.ps) == bindings.StateError {
		err := &duckdb.Error{Type: duckdb.ErrorTypeInvalid, Msg: bindings.PrepareError(p.ps)}
		p.close()
		return nil, err
	}
	return p, nil
}

// close destroys the statement and frees its connection.
func (p *prepared) close() error {
	bindings.DestroyPrepare(&p.ps)
	return p.conn.Close()
}
