package duckstream

import (
	"context"
	"fmt"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2"
)

// Source is one query run as a stream on a DuckDB connection and handed on,
// chunk by chunk, to a table function of another DuckDB database: Fill makes
// the table function's output vectors reference the source chunk's (DuckDB
// vectors share their buffers), so no value is copied or converted. The
// reading database never names the files, databases or tables the query
// reads. The statement and its connection are the Source's until Close
// (Statements.Open).
type Source struct {
	ctx    context.Context
	stmt   *prepared
	kept   *Statements // where the statement goes back to at Close; nil: closed
	res    bindings.Result
	cols   int
	ended  bool
	failed bool // the run failed: its statement is not kept
}

// start executes p as a stream.
func start(ctx context.Context, p *prepared) (*Source, error) {
	s := &Source{ctx: ctx, stmt: p}
	var pending bindings.PendingResult
	if bindings.PendingPreparedStreaming(p.ps, &pending) == bindings.StateError {
		err := &duckdb.Error{Type: duckdb.ErrorTypeInvalid, Msg: bindings.PendingError(pending)}
		bindings.DestroyPending(&pending)
		return nil, err
	}
	defer bindings.DestroyPending(&pending)
	var err error
	interruptible(ctx, p.raw, func() { err = executePending(ctx, pending, &s.res) })
	if err != nil {
		return nil, err
	}
	s.cols = int(bindings.ColumnCount(&s.res))
	return s, nil
}

// Fill hands the next chunk of the query to out, a table function's output
// chunk with the query's columns in order (the same types), and returns its
// row count: 0 at the end.
func (s *Source) Fill(out bindings.DataChunk) (int, error) {
	if s.ended {
		return 0, nil
	}
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	if n := int(bindings.DataChunkGetColumnCount(out)); n != s.cols {
		return 0, fmt.Errorf("source: the output has %d columns, the query %d", n, s.cols)
	}
	var chunk bindings.DataChunk
	interruptible(s.ctx, s.stmt.raw, func() { chunk = bindings.FetchChunk(s.res) })
	if chunk.Ptr == nil {
		if bindings.ResultError(&s.res) != "" {
			s.failed = true
			return 0, statementError(s.ctx, &s.res)
		}
		s.ended = true
		return 0, nil
	}
	defer bindings.DestroyDataChunk(&chunk)
	for i := range s.cols {
		bindings.VectorReferenceVector(bindings.DataChunkGetVector(out, bindings.IdxT(i)), bindings.DataChunkGetVector(chunk, bindings.IdxT(i)))
	}
	n := bindings.DataChunkGetSize(chunk)
	bindings.DataChunkSetSize(out, n)
	return int(n), nil
}

// Close ends the query and gives its statement back if it is kept, unless
// the run failed or its context ended (an interrupt may still be on its way to the
// connection). DuckDB keeps a stream's executor that did not run to its end
// on the connection until its next statement, so a trivial one runs.
func (s *Source) Close() {
	bindings.DestroyResult(&s.res)
	if !s.ended {
		var res bindings.Result
		bindings.Query(s.stmt.raw, "SELECT NULL", &res)
		bindings.DestroyResult(&res)
	}
	if s.kept == nil || s.failed || s.ctx.Err() != nil {
		s.stmt.Close()
		return
	}
	s.kept.giveBack(s.stmt)
}

// OutputVector is the vector of column col of a table function's output
// chunk raw, through the statement's projection (OutputChunk's); false when
// the statement does not read the column.
func OutputVector(raw bindings.DataChunk, projection []int, col int) (bindings.Vector, bool, error) {
	if projection != nil {
		if col < 0 || col >= len(projection) {
			return bindings.Vector{}, false, fmt.Errorf("column %d of a chunk projecting %d", col, len(projection))
		}
		col = projection[col]
	}
	if col < 0 || col >= int(bindings.DataChunkGetColumnCount(raw)) {
		return bindings.Vector{}, false, nil
	}
	return bindings.DataChunkGetVector(raw, bindings.IdxT(col)), true, nil
}

// OutputChunk is the DuckDB chunk behind a duckdb-go table function's output
// and its projection: per column of the function, its position in the chunk,
// -1 when the statement does not read it.
func OutputChunk(c *duckdb.DataChunk) (bindings.DataChunk, []int, error) {
	chunk, err := unexportedField[bindings.DataChunk](c, "chunk")
	if err != nil {
		return bindings.DataChunk{}, nil, err
	}
	proj, err := unexportedField[[]int](c, "projection")
	return chunk, proj, err
}
