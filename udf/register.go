package udf

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// definition is one SQL function name and its overloads.
type definition struct {
	name      string
	overloads []duckdb.ScalarFunc
}

// Names returns the SQL name of every function Register installs, in
// registration order.
func Names() []string {
	defs := definitions()
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.name
	}
	return out
}

func definitions() []definition {
	var defs []definition
	defs = append(defs, calendarDefinitions()...)
	defs = append(defs, obisDefinitions()...)
	defs = append(defs, qualityDefinitions()...)
	defs = append(defs, eicDefinitions()...)
	return defs
}

// Register installs every MeterStore function on conn.
//
// DuckDB's C API registers a scalar function in the database's system
// catalog, so the functions are visible from every connection of the same
// database (verified in TestRegisterVisibleOnOtherConnection), and
// registering again replaces them (it is idempotent). A caller that opens
// its own *sql.DB may therefore call Register once on any connection; Open
// and Connector do it for every new connection instead, which stays correct
// should a future driver make functions connection-local.
func Register(conn *sql.Conn) error {
	for _, d := range definitions() {
		var err error
		if len(d.overloads) == 1 {
			err = duckdb.RegisterScalarUDF(conn, d.name, d.overloads[0])
		} else {
			err = duckdb.RegisterScalarUDFSet(conn, d.name, d.overloads...)
		}
		if err != nil {
			return fmt.Errorf("register %s: %w", d.name, err)
		}
	}
	return nil
}

// Connector returns a DuckDB connector for dsn ("" is an in-memory database)
// whose connection init hook registers every function on each new
// connection, so a pooled *sql.DB built on it (sql.OpenDB) has them on every
// connection. Closing the *sql.DB closes the connector and the database.
func Connector(dsn string) (*duckdb.Connector, error) {
	c, err := duckdb.NewConnector(dsn, registerOnNewConn)
	if err != nil {
		return nil, fmt.Errorf("open duckdb %q: %w", dsn, err)
	}
	return c, nil
}

// Open is sql.OpenDB over Connector(dsn).
func Open(dsn string) (*sql.DB, error) {
	c, err := Connector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// registerOnNewConn is the connection init hook. duckdb-go hands it the bare
// driver connection, but RegisterScalarUDF wants a *sql.Conn: a throwaway
// *sql.DB whose connector yields exactly this connection provides one. The
// *sql.Conn is deliberately never closed — closing would return the driver
// connection to the throwaway pool, and closing that pool would then close
// it — and sql.DB.Close closes only idle connections, so the driver
// connection survives and is handed to the caller's pool.
func registerOnNewConn(ex driver.ExecerContext) error {
	dc, ok := ex.(driver.Conn)
	if !ok {
		return fmt.Errorf("register udfs: driver connection is %T, not a driver.Conn", ex)
	}
	tmp := sql.OpenDB(&oneConn{conn: dc})
	defer tmp.Close()
	c, err := tmp.Conn(context.Background())
	if err != nil {
		return fmt.Errorf("register udfs: %w", err)
	}
	return Register(c)
}

// oneConn is a driver.Connector that yields one given connection, once. It
// has no Close method, so the throwaway sql.DB cannot close anything real.
type oneConn struct {
	conn driver.Conn
	used bool
}

var errConnUsed = errors.New("udf: init connection already handed out")

func (o *oneConn) Connect(context.Context) (driver.Conn, error) {
	if o.used {
		return nil, errConnUsed
	}
	o.used = true
	return o.conn, nil
}

func (o *oneConn) Driver() driver.Driver { return duckdb.Driver{} }
