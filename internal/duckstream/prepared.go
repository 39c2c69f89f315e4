package duckstream

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/duckdb/duckdb-go/v2"
)

// Prepared is a query prepared through duckdb-go on a connection reserved
// for it, kept to run again as a stream (Open) with each run's arguments:
// preparing parses, binds and optimises the query, a fixed cost a repeated
// statement would pay on every run. Its text is all it answers: a run binds
// only arguments. The connection is the statement's alone until Close.
type Prepared struct {
	query string
	conn  *sql.Conn
	stmt  *duckdb.Stmt
	bound bool // its arguments are in query (PrepareBound)
}

// Prepare prepares query on conn, which the returned statement owns from
// then on (Close closes both).
func Prepare(ctx context.Context, conn *sql.Conn, query string) (*Prepared, error) {
	p := &Prepared{query: query, conn: conn}
	err := conn.Raw(func(dc any) error {
		d, ok := dc.(*duckdb.Conn)
		if !ok {
			return fmt.Errorf("prepare: %T is not a duckdb-go connection", dc)
		}
		ds, err := d.PrepareContext(ctx, query)
		if err != nil {
			return err
		}
		p.stmt = ds.(*duckdb.Stmt)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Query is the text the statement was prepared from.
func (p *Prepared) Query() string { return p.query }

// Conn is the connection the statement is prepared on.
func (p *Prepared) Conn() *sql.Conn { return p.conn }

// Open is Open on the statement's connection: a query of the statement's
// text runs the statement, bound with the query's arguments, and the rows'
// Close leaves it prepared for the next run.
func (p *Prepared) Open(decimals Decimals, onEnd func() error) (*sql.DB, error) {
	return open(p.conn, p, decimals, onEnd)
}

// Close closes the statement and its connection.
func (p *Prepared) Close() error {
	return errors.Join(p.stmt.Close(), p.conn.Close())
}
