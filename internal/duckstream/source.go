package duckstream

import (
	"context"
	"database/sql"
	"fmt"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2"
)

// Source is one query run as a stream on a DuckDB connection and handed on,
// chunk by chunk, to a table function of another DuckDB database: Fill makes
// the table function's output vectors reference the source chunk's (DuckDB
// vectors share their buffers), so no value is copied or converted. The
// reading database never names the files, databases or tables the query
// reads. The source connection is reserved for the query until Close.
type Source struct {
	ctx   context.Context
	raw   bindings.Connection
	res   bindings.Result
	cols  int
	ended bool
}

// OpenSource runs query (no parameters: the caller renders its values) on
// src as a stream; DuckDB computes no further ahead than its stream buffer.
func OpenSource(ctx context.Context, src *sql.Conn, query string) (*Source, error) {
	s := &Source{ctx: ctx}
	err := src.Raw(func(dc any) error {
		d, ok := dc.(*duckdb.Conn)
		if !ok {
			return fmt.Errorf("source: %T is not a duckdb-go connection", dc)
		}
		raw, err := Connection(d)
		s.raw = raw
		return err
	})
	if err != nil {
		return nil, err
	}
	var ps bindings.PreparedStatement
	if bindings.Prepare(s.raw, query, &ps) == bindings.StateError {
		err := &duckdb.Error{Type: duckdb.ErrorTypeInvalid, Msg: bindings.PrepareError(ps)}
		bindings.DestroyPrepare(&ps)
		return nil, err
	}
	defer bindings.DestroyPrepare(&ps)
	var pending bindings.PendingResult
	if bindings.PendingPreparedStreaming(ps, &pending) == bindings.StateError {
		err := &duckdb.Error{Type: duckdb.ErrorTypeInvalid, Msg: bindings.PendingError(pending)}
		bindings.DestroyPending(&pending)
		return nil, err
	}
	defer bindings.DestroyPending(&pending)
	var state bindings.State
	interruptible(ctx, s.raw, func() { state = bindings.ExecutePending(pending, &s.res) })
	if state == bindings.StateError {
		err := statementError(ctx, &s.res)
		bindings.DestroyResult(&s.res)
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
	interruptible(s.ctx, s.raw, func() { chunk = bindings.FetchChunk(s.res) })
	if chunk.Ptr == nil {
		if bindings.ResultError(&s.res) != "" {
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

// Close ends the query. DuckDB keeps a stream's executor that did not run to
// its end on the connection until its next statement, so a trivial one runs.
func (s *Source) Close() {
	bindings.DestroyResult(&s.res)
	if !s.ended {
		var res bindings.Result
		bindings.Query(s.raw, "SELECT NULL", &res)
		bindings.DestroyResult(&res)
	}
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
