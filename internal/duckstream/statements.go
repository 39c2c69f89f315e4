package duckstream

import (
	"context"
	"database/sql"
	"fmt"
	"time"

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
	db   *sql.DB
	kept *Kept[string, *prepared] // by query text
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
	return &Statements{db: db, kept: NewKept[string, *prepared](max)}
}

// Open runs query (no parameters: the caller renders its values) as a
// stream, on a statement kept for it or prepared now; DuckDB computes no
// further ahead than its stream buffer. keep is whether the statement is
// kept after the run: false for a query whose text will not come again.
func (s *Statements) Open(ctx context.Context, query string, keep bool) (*Source, error) {
	p, ok := s.kept.Take(query)
	if !ok {
		var err error
		if p, err = s.prepare(ctx, query); err != nil {
			return nil, err
		}
	}
	src, err := start(ctx, p)
	if err != nil {
		p.Close()
		return nil, err
	}
	if keep {
		src.kept = s
	}
	return src, nil
}

// giveBack keeps p, whose run ended cleanly, for the next run of its query.
func (s *Statements) giveBack(p *prepared) { s.kept.GiveBack(p.query, p) }

// Kept is the text of each statement kept, the most recently given back
// first.
func (s *Statements) Kept() []string {
	var out []string
	for _, p := range s.kept.Values() {
		out = append(out, p.query)
	}
	return out
}

// CloseIdle closes the statements not run since idleSince, and returns how
// many it closed.
func (s *Statements) CloseIdle(idleSince time.Time) int { return s.kept.CloseIdle(idleSince) }

// Len is how many statements are kept.
func (s *Statements) Len() int { return s.kept.Len() }

// Close closes every kept statement; statements of runs still going are
// closed when they end.
func (s *Statements) Close() error { return s.kept.Close() }

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
		p.Close()
		return nil, err
	}
	return p, nil
}

// Close destroys the statement and frees its connection.
func (p *prepared) Close() error {
	bindings.DestroyPrepare(&p.ps)
	return p.conn.Close()
}
