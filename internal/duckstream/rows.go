package duckstream

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2"
)

// Open returns a *sql.DB whose one connection is conn's own DuckDB
// connection, on which a query runs as a DuckDB stream: DuckDB computes no
// further ahead of the consumer than its stream buffer (976.5 KiB by default),
// whatever the result size. It is a database/sql handle, not a bare
// driver.Rows, because engine.Rows hands out the *sql.Rows its callers already
// scan: database/sql converts the arguments (with duckdb-go's own
// NamedValueChecker, as for any duckdb-go query), scans, and closes the rows
// when ctx ends.
//
// The returned handle borrows the DuckDB connection outside conn.Raw. That is
// sound because conn is reserved for one statement: the engine uses it, or the
// stream, never both at once, and closes the stream before conn. Close the
// returned *sql.DB after its rows; it never closes the DuckDB connection.
// decimals is how its queries decode top-level DECIMAL columns. onEnd runs
// when the stream has delivered its last row, before the consumer is told so:
// an error from it is the stream's final error.
func Open(conn *sql.Conn, decimals Decimals, onEnd func() error) (*sql.DB, error) {
	return open(conn, nil, decimals, onEnd)
}

// open is Open, running kept's statement for its query (kept may be nil).
func open(conn *sql.Conn, kept *Prepared, decimals Decimals, onEnd func() error) (*sql.DB, error) {
	var sc *streamConn
	err := conn.Raw(func(dc any) error {
		d, ok := dc.(*duckdb.Conn)
		if !ok {
			return fmt.Errorf("stream: %T is not a duckdb-go connection", dc)
		}
		raw, err := Connection(d)
		if err != nil {
			return fmt.Errorf("stream: %w", err)
		}
		sc = &streamConn{duck: d, raw: raw, onEnd: onEnd, kept: kept, decimals: decimals}
		return nil
	})
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(streamConnector{sc})
	db.SetMaxOpenConns(1)
	return db, nil
}

type streamConnector struct{ conn *streamConn }

func (c streamConnector) Connect(context.Context) (driver.Conn, error) { return c.conn, nil }
func (streamConnector) Driver() driver.Driver                          { return duckdb.Driver{} }

// streamConn runs queries, and only queries, as DuckDB streams on a borrowed connection.
type streamConn struct {
	duck     *duckdb.Conn
	raw      bindings.Connection
	onEnd    func() error
	kept     *Prepared // a statement prepared for the connection's query; nil: none
	decimals Decimals  // how its rows decode top-level DECIMAL columns
}

var errStreamOnly = errors.New("a streaming connection runs queries only")

func (*streamConn) Prepare(string) (driver.Stmt, error) { return nil, errStreamOnly }
func (*streamConn) Begin() (driver.Tx, error)           { return nil, errStreamOnly }

// Close is a no-op: the engine's *sql.Conn owns the DuckDB connection.
func (*streamConn) Close() error { return nil }

// CheckNamedValue is duckdb-go's, so arguments are converted exactly as for any
// duckdb-go query.
func (c *streamConn) CheckNamedValue(nv *driver.NamedValue) error { return c.duck.CheckNamedValue(nv) }

// QueryContext prepares and binds query through duckdb-go, then executes it as
// a stream: duckdb_pending_prepared_streaming, then duckdb_execute_pending,
// which returns once DuckDB has filled its stream buffer (or finished).
func (c *streamConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	var rows *streamRows
	var err error
	interruptible(ctx, c.raw, func() { rows, err = c.start(ctx, query, args) })
	return rows, err
}

func (c *streamConn) start(ctx context.Context, query string, args []driver.NamedValue) (*streamRows, error) {
	stmt, err := c.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*streamRows, error) {
		return nil, errors.Join(err, c.release(stmt))
	}
	args, err = sessionDates(ctx, c.duck, stmt, args)
	if err != nil {
		return fail(err)
	}
	if err := stmt.BindWithCtx(ctx, args); err != nil {
		return fail(err)
	}
	ps, err := duckPrepared(stmt)
	if err != nil {
		return fail(fmt.Errorf("stream: %w", err))
	}
	var pending bindings.PendingResult
	if bindings.PendingPreparedStreaming(ps, &pending) == bindings.StateError {
		// The C API gives a pending result's error as a message only.
		err := &duckdb.Error{Type: duckdb.ErrorTypeInvalid, Msg: bindings.PendingError(pending)}
		bindings.DestroyPending(&pending)
		return fail(err)
	}
	defer bindings.DestroyPending(&pending)
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	var res bindings.Result
	if err := executePending(ctx, pending, &res); err != nil {
		return fail(err)
	}
	return newStreamRows(ctx, c, stmt, res), nil
}

// prepare is the statement of query: the kept one if it was prepared for
// query, else one prepared now.
func (c *streamConn) prepare(ctx context.Context, query string) (*duckdb.Stmt, error) {
	if c.kept != nil && c.kept.query == query {
		return c.kept.stmt, nil
	}
	ds, err := c.duck.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return ds.(*duckdb.Stmt), nil
}

// release closes stmt, which a run ended with, unless it is kept.
func (c *streamConn) release(stmt *duckdb.Stmt) error {
	if c.kept != nil && c.kept.stmt == stmt {
		return nil
	}
	return stmt.Close()
}

// ErrCauseLost means DuckDB ended a streamed statement with its interrupt error
// although nothing cancelled the statement. When one of a statement's threads
// fails, DuckDB raises its interrupt flag to stop the others, and DuckDB 1.5's
// streaming fetch can see that flag before it asks for the stored error: the
// failure (a bad cast, error(), a failed hot-tier scan) then arrives as
// "Interrupted!" and its message is lost. The statement did fail; nothing it
// returned is complete.
var ErrCauseLost = errors.New("the statement failed in one of DuckDB's threads, and DuckDB reported only that it stopped the others (nothing cancelled it); run it again to see the cause")

// statementError is the error a streamed statement ended with: the context's
// too when the context ended (an interrupt is then its cancellation), or
// ErrCauseLost for an interrupt nothing asked for.
func statementError(ctx context.Context, res *bindings.Result) error {
	return failure(ctx, resultError(res))
}

func resultError(res *bindings.Result) *duckdb.Error {
	return &duckdb.Error{Type: duckdb.ErrorType(bindings.ResultErrorType(res)), Msg: bindings.ResultError(res)}
}

// failure is err, a streamed statement's DuckDB error, as statementError
// hands it on.
func failure(ctx context.Context, err *duckdb.Error) error {
	if cerr := ctx.Err(); cerr != nil {
		return errors.Join(cerr, err)
	}
	if err.Type == duckdb.ErrorTypeInterrupt {
		return fmt.Errorf("%w: DuckDB said %w", ErrCauseLost, err)
	}
	return err
}

// streamRows fetches a streaming result one DuckDB chunk at a time and decodes
// it into duckdb-go's values (see duckstream_values.go).
type streamRows struct {
	ctx   context.Context
	conn  *streamConn
	stmt  *duckdb.Stmt
	res   bindings.Result
	names []string
	types []string
	scans []reflect.Type
	cols  []column
	// colErr is a column type DuckDB can return but not be decoded here (nor by
	// duckdb-go): like duckdb-go, it fails the first row, not the statement.
	colErr    error
	chunk     bindings.DataChunk
	size, row uint64
	// drained: DuckDB reported the end and cleaned up the query itself.
	drained bool
}

func newStreamRows(ctx context.Context, c *streamConn, stmt *duckdb.Stmt, res bindings.Result) *streamRows {
	n := int(bindings.ColumnCount(&res))
	r := &streamRows{ctx: ctx, conn: c, stmt: stmt, res: res, names: make([]string, n), types: make([]string, n),
		scans: make([]reflect.Type, n), cols: make([]column, n)}
	for i := range n {
		r.names[i] = bindings.ColumnName(&res, bindings.IdxT(i))
		lt := bindings.ColumnLogicalType(&res, bindings.IdxT(i))
		r.types[i], r.scans[i] = databaseTypeName(lt), scanType(lt)
		if err := r.cols[i].init(lt); err != nil && r.colErr == nil {
			r.colErr = fmt.Errorf("column %d (%s): %w", i, r.names[i], err)
		}
		if r.cols[i].typ == duckdb.TYPE_DECIMAL && c.decimals == ExactDecimals {
			r.cols[i].get = getExactDecimal
		}
		bindings.DestroyLogicalType(&lt)
	}
	return r
}

func (r *streamRows) Columns() []string                       { return r.names }
func (r *streamRows) ColumnTypeDatabaseTypeName(i int) string { return r.types[i] }
func (r *streamRows) ColumnTypeScanType(i int) reflect.Type   { return r.scans[i] }

// Next decodes the next row into dst, fetching the next chunk when the current
// one is used up. At the end it returns the stream's error, if DuckDB reported
// one, else onEnd's, else io.EOF.
func (r *streamRows) Next(dst []driver.Value) error {
	for r.row == r.size {
		bindings.DestroyDataChunk(&r.chunk)
		if r.drained {
			return io.EOF
		}
		if err := r.ctx.Err(); err != nil {
			return err
		}
		interruptible(r.ctx, r.conn.raw, func() { r.chunk = bindings.FetchChunk(r.res) })
		if r.chunk.Ptr == nil {
			return r.end()
		}
		if r.colErr != nil {
			return r.colErr
		}
		r.size, r.row = uint64(bindings.DataChunkGetSize(r.chunk)), 0
		for i := range r.cols {
			r.cols[i].attach(bindings.DataChunkGetVector(r.chunk, bindings.IdxT(i)))
		}
	}
	for i := range dst {
		v, err := r.cols[i].value(r.row)
		if err != nil {
			return fmt.Errorf("column %d (%s): %w", i, r.names[i], err)
		}
		if b, ok := v.(duckdb.Bit); ok {
			v = b.String() // as duckdb-go's rows do, so database/sql scans BIT into a string
		}
		dst[i] = v
	}
	r.row++
	return nil
}

// end: duckdb_fetch_chunk returned no chunk, which is the end of the result or
// an error (an interrupt, a failed hot scan, a failed cast in row 10 M).
func (r *streamRows) end() error {
	if bindings.ResultError(&r.res) != "" {
		return statementError(r.ctx, &r.res)
	}
	r.drained = true
	if r.conn.onEnd != nil {
		if err := r.conn.onEnd(); err != nil {
			return err
		}
	}
	return io.EOF
}

// Close destroys the result and the statement, unless it is kept. DuckDB keeps the executor of a
// stream that did not run to its end — operator state such as a join's hash
// table, hundreds of MiB for a large build side — on the connection until that
// connection's next statement; the connection goes back to the pool and may
// idle for long, so a trivial statement runs now to make DuckDB release it.
func (r *streamRows) Close() error {
	bindings.DestroyDataChunk(&r.chunk)
	bindings.DestroyResult(&r.res)
	if !r.drained {
		var res bindings.Result
		bindings.Query(r.conn.raw, "SELECT NULL", &res)
		bindings.DestroyResult(&res)
	}
	return r.conn.release(r.stmt)
}

// interruptEvery is how often a cancelled statement's connection is interrupted
// again: DuckDB clears the flag between pipeline tasks.
const interruptEvery = 50 * time.Millisecond

// interruptible runs call, one blocking DuckDB call on raw. If ctx ends while it
// runs, raw is interrupted, again every interruptEvery, until call returns; the
// watcher is gone when interruptible returns, so it cannot interrupt a later
// statement on the connection. (One last interrupt may race call's return:
// that is harmless, DuckDB clears the flag when a statement starts.)
func interruptible(ctx context.Context, raw bindings.Connection, call func()) {
	if ctx.Done() == nil {
		call()
		return
	}
	done, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		tick := time.NewTicker(interruptEvery)
		defer tick.Stop()
		for {
			bindings.Interrupt(raw)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	call()
	close(done)
	<-watched
}
