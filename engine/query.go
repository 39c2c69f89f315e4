package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore/engine/plan"
	"github.com/meterstore/meterstore/internal/duckstream"
)

// Result is a collected answer and the boundary it was computed against.
type Result struct {
	Columns    []string
	Types      []string // DuckDB type names
	Rows       [][]any  // DECIMAL as decimal.Decimal, TIMESTAMPTZ/DATE as time.Time, NULL as nil
	Provenance *Provenance
}

// Query plans and runs one SELECT and collects its rows. Parameters ($1, ?) are
// bound, never concatenated. If an archival run moved the boundary while the
// statement read the hot tier, it is planned and run again (see Cursor) so no
// row is read from neither tier.
func (e *Engine) Query(ctx context.Context, q string, args ...any) (*Result, error) {
	c, err := e.Cursor(ctx, math.MaxInt, q, args...)
	if err != nil {
		return nil, err
	}
	return &Result{Columns: c.Columns, Types: c.Types, Rows: c.ahead, Provenance: c.Provenance}, nil
}

// ScanValues scans the current row of n columns into Go values, normalised.
func ScanValues(rows *sql.Rows, n int) ([]any, error) {
	vals := make([]any, n)
	ptrs := make([]any, n)
	return vals, scanInto(rows, vals, ptrs)
}

// scanInto scans the current row into vals, through ptrs (as long as vals,
// pointed at vals here), and normalises the values.
func scanInto(rows *sql.Rows, vals, ptrs []any) error {
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return err
	}
	for i, v := range vals {
		vals[i] = Normalize(v)
	}
	return nil
}

// Normalize converts DuckDB driver values to the types reporting code wants:
// DECIMAL becomes decimal.Decimal (exact).
func Normalize(v any) any {
	if d, ok := v.(duckdb.Decimal); ok {
		return decimal.NewFromBigInt(d.Value, -int32(d.Scale))
	}
	return v
}

// Rows is a streaming result: database/sql rows plus provenance. DuckDB
// computes the result as the rows are read, never further ahead than its
// stream buffer (streaming_buffer_size, 976.5 KiB by default), so neither Go
// nor DuckDB holds more than that however large the result (operators that
// must see all their input first — a sort, an aggregate, a join's build side —
// still do); Close stops DuckDB wherever it is. DuckDB refills the buffer
// before it hands out more rows, so with a very selective filter a Next may
// wait for a long scan although rows were already found.
//
// The boundary check (ErrBoundaryMoved: an archival moved the tier boundary
// while the statement read the hot tier) can only run once the last row is
// read, so it is the stream's final answer: after the last row, Next returns
// false and Err reports ErrBoundaryMoved — never a clean end — if the rows are
// incomplete. Close reports it too, and checks the boundary itself when the
// rows were not read to the end. Cursor and Query hold rows back and retry on
// it; a consumer of Rows that has already passed rows on cannot, and must
// discard them.
type Rows struct {
	*sql.Rows
	Provenance *Provenance
	e          *Engine
	p          *plan.Plan
	conn       *sql.Conn
	db         *duckDB  // the database it runs in
	main       *mainRun // the statement kept prepared it runs; nil: prepared on conn
	stream     *sql.DB
	ctx        context.Context
	cancel     context.CancelFunc
	closed     bool
	err        error
	// checked: the stream ran to its end and checked the boundary then.
	checked  bool
	progress *Progress // the caller's, from WithProgress; nil when none
}

// Rows plans and starts one SELECT as a DuckDB stream (see Rows).
func (e *Engine) Rows(ctx context.Context, q string, args ...any) (*Rows, error) {
	return e.rows(ctx, duckstream.DriverDecimals, q, args)
}

// rows is Rows, its stream decoding top-level DECIMAL columns as decimals says.
func (e *Engine) rows(ctx context.Context, decimals duckstream.Decimals, q string, args []any) (*Rows, error) {
	ctx, cancel := context.WithCancel(ctx)
	conn, db, err := e.conn(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	p, err := e.plan(ctx, conn, db, q, args)
	if err != nil {
		conn.Close()
		e.afterFailure(db, err)
		cancel()
		return nil, err
	}
	args = p.Args
	readWith(ctx, p)
	r := &Rows{Provenance: &p.Provenance, e: e, p: p, conn: conn, db: db, ctx: ctx, cancel: cancel, progress: progressOf(ctx)}
	r.main, err = e.prepareMain(ctx, conn, db, p)
	query := p.SQL
	if r.main != nil {
		r.conn, query = r.main.m.stmt.Conn(), r.main.m.stmt.Query()
		if r.main.m.stmt.Bound() {
			args = nil
		}
	}
	if r.progress != nil {
		if raw, err := rawConnection(r.conn); err == nil {
			r.progress.attach(raw, p.Provenance.HotRows)
		}
	}
	if err == nil {
		r.stream, err = r.open(decimals, func() error {
			r.checked = true
			return p.CheckBoundary(ctx)
		})
	}
	if err == nil {
		r.Rows, err = r.stream.QueryContext(ctx, query, args...)
	}
	if err != nil {
		if r.stream != nil {
			r.stream.Close()
		}
		err = plan.InUserStatement(e.movedOr(ctx, p, err), q, p.SQL)
		r.stopProgress()
		r.release(false)
		e.afterFailure(db, err)
		cancel()
		return nil, fmt.Errorf("run: %w", err)
	}
	return r, nil
}

// open opens the stream the statement runs on: on the kept statement's
// connection, running it, if there is one.
func (r *Rows) open(decimals duckstream.Decimals, onEnd func() error) (*sql.DB, error) {
	if r.main != nil {
		return r.main.m.stmt.Open(decimals, onEnd)
	}
	return duckstream.Open(r.conn, decimals, onEnd)
}

// release ends the plan's scans and gives the connection back, or its kept
// statement if the run ended cleanly (ok). The scans end first: a statement
// kept names the tokens of the run that prepared it, and once it is given
// back another run of the plan names its own scans and halves by them
// (mainRun) — ending this run's tokens after that would end that run's.
func (r *Rows) release(ok bool) {
	r.p.Release()
	if r.main == nil {
		r.conn.Close()
		return
	}
	r.main.end(ok && r.ctx.Err() == nil)
}

// describedRows starts q (see Rows) and describes its rows: columns, DuckDB
// types and provenance.
func (e *Engine) describedRows(ctx context.Context, decimals duckstream.Decimals, q string, args []any) (*Rows, *Description, error) {
	rows, err := e.rows(ctx, decimals, q, args)
	if err != nil {
		return nil, nil, err
	}
	cts, err := rows.ColumnTypes()
	if err != nil {
		rows.Close()
		return nil, nil, err
	}
	d := &Description{Provenance: rows.Provenance}
	for _, ct := range cts {
		d.Columns = append(d.Columns, ct.Name())
		d.Types = append(d.Types, ct.DatabaseTypeName())
	}
	return rows, d, nil
}

// movedOr returns err, or ErrBoundaryMoved with err when an archival moved the
// boundary while the statement ran: a hot scan that failed because its partition
// was detached or dropped under it is then retried by Query, not reported.
func (e *Engine) movedOr(ctx context.Context, p *plan.Plan, err error) error {
	if err == nil || errors.Is(err, ErrBoundaryMoved) {
		return err
	}
	if moved := e.scanMoved(p); moved != nil {
		return moved
	}
	if !p.ReadsHot() {
		return err
	}
	if moved := p.CheckBoundary(context.WithoutCancel(ctx)); errors.Is(moved, ErrBoundaryMoved) {
		return errors.Join(moved, err)
	}
	return err
}

// scanMoved is the error of a scan of the plan that failed because an archival
// moved its rows (it wraps ErrBoundaryMoved); nil if none did. DuckDB reports
// the failure as text; this is the typed error behind it.
func (e *Engine) scanMoved(p *plan.Plan) error {
	for _, s := range p.Scans {
		if err := e.shared.scans.failure(s); errors.Is(err, ErrBoundaryMoved) {
			return err
		}
	}
	return nil
}

// Close ends the statement — DuckDB stops where the stream is — and reports
// the error that ended it or, if none, whether the boundary it read moved.
func (r *Rows) Close() error {
	if r.closed {
		return r.err
	}
	r.closed = true
	err := r.Rows.Close()
	if err == nil {
		err = r.Rows.Err()
	}
	if err == nil && !r.checked {
		err = r.p.CheckBoundary(r.ctx)
	}
	err = r.e.movedOr(r.ctx, r.p, err)
	r.stream.Close()
	r.stopProgress()
	r.release(err == nil)
	r.e.afterFailure(r.db, err)
	r.cancel()
	r.err = err
	return err
}

func (r *Rows) stopProgress() {
	if r.progress != nil {
		r.progress.detach()
	}
}

// Description is a statement planned but not run: its schema and the boundary
// it would read.
type Description struct {
	Columns    []string
	Types      []string
	Provenance *Provenance
}

// Describe plans a statement without running it: a syntax error, an unknown
// column or relation is reported here.
func (e *Engine) Describe(ctx context.Context, q string, args ...any) (_ *Description, err error) {
	conn, db, err := e.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { e.afterFailure(db, err) }()
	defer conn.Close()
	p, err := e.plan(ctx, conn, db, q, args)
	if err != nil {
		return nil, err
	}
	defer p.Release()
	args = p.Args
	rows, err := conn.QueryContext(ctx, "DESCRIBE "+p.SQL, args...)
	if err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	defer rows.Close()
	d := &Description{Provenance: &p.Provenance}
	cols, _ := rows.Columns()
	for rows.Next() {
		vals, err := ScanValues(rows, len(cols))
		if err != nil {
			return nil, err
		}
		name, _ := vals[0].(string)
		typ, _ := vals[1].(string)
		d.Columns = append(d.Columns, name)
		d.Types = append(d.Types, typ)
	}
	return d, rows.Err()
}

// Explain shows how a statement is split: per reference the range, watermark,
// files kept and pruned, whether resolution was elided, and the SQL sent to
// PostgreSQL — then DuckDB's own plan of the rewritten statement. q may begin
// with EXPLAIN; with EXPLAIN ANALYZE the rewritten statement runs, and DuckDB's
// plan carries its profile (rows and time per operator).
func (e *Engine) Explain(ctx context.Context, q string, args ...any) (_ string, err error) {
	q, analyze := stripExplain(q)
	conn, db, err := e.conn(ctx)
	if err != nil {
		return "", err
	}
	defer func() { e.afterFailure(db, err) }()
	defer conn.Close()
	p, err := e.plan(ctx, conn, db, q, args)
	if err != nil {
		return "", err
	}
	defer p.Release()
	args = p.Args
	readWith(ctx, p)
	if err := p.CompleteHotLines(ctx, conn, args); err != nil {
		return "", fmt.Errorf("explain: %w", plan.InUserStatement(err, q, p.SQL))
	}
	var session []string
	if e.Confined() {
		session = append(session, e.confinementLine())
	}
	var b strings.Builder
	b.WriteString(p.ExplainText(session...))
	explain, title := "EXPLAIN ", "DuckDB plan"
	if analyze {
		explain, title = "EXPLAIN ANALYZE ", "DuckDB plan, run and profiled (EXPLAIN ANALYZE)"
	}
	b.WriteString(title + ":\n")
	rows, err := conn.QueryContext(ctx, explain+p.SQL, args...)
	if err != nil {
		return "", fmt.Errorf("explain: %w", plan.InUserStatement(err, q, p.SQL))
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return "", err
		}
		b.WriteString(v + "\n")
	}
	return b.String(), rows.Err()
}

// readWith makes p's scans read with ctx, the context of the call running
// it: a plan reused from the cache still carries the context of the run it
// was made in, cancelled when that run ended.
func readWith(ctx context.Context, p *plan.Plan) {
	for _, s := range p.Scans {
		s.Ctx = ctx
	}
}

// ErrCauseLost means a streamed statement failed in one of DuckDB's threads and
// DuckDB reported only that it stopped the others: the statement did fail and
// nothing it returned is complete; run it again to see the cause.
var ErrCauseLost = duckstream.ErrCauseLost
