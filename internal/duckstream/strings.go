package duckstream

/*
#cgo noescape meterstore_assign_strings
#cgo nocallback meterstore_assign_strings
#include <stdint.h>
#include <stdlib.h>
struct meterstore_assign_result {
	int failed;
	char *message;
};
struct meterstore_assign_result meterstore_assign_strings(void *vector, uint64_t n, const uint64_t *rows, const char *bytes, const uint64_t *ends);
*/
import "C"

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2"
)

// Strings is one VARCHAR column's values for some rows of a table function's
// output chunk, collected in Go and written into the chunk's vector by one
// call (Assign): a call into C per value, and the lookup of the vector behind
// duckdb-go's chunk, cost more than the copy itself. Its buffers are reused
// from chunk to chunk (Reset).
type Strings struct {
	rows  []uint64 // the chunk row of each value
	ends  []uint64 // where each value's bytes end in bytes
	bytes []byte   // the values' bytes, one after the other
}

// Reset empties s for the next chunk, keeping its buffers.
func (s *Strings) Reset() {
	s.rows, s.ends, s.bytes = s.rows[:0], s.ends[:0], s.bytes[:0]
}

// Capacity is how many bytes of values s holds without growing: what
// keeping it for later chunks keeps resident.
func (s *Strings) Capacity() int { return cap(s.bytes) }

// Add collects v as the value of the chunk's row.
func (s *Strings) Add(row int, v string) {
	s.bytes = append(s.bytes, v...)
	s.rows = append(s.rows, uint64(row))
	s.ends = append(s.ends, uint64(len(s.bytes)))
}

// Assign writes the collected values into column col of a table function's
// output chunk; DuckDB copies their bytes into the vector's string heap. It
// does what duckdb.SetChunkValue does for each string, except that an
// allocation DuckDB refuses comes back as an error: through duckdb-go the
// C++ exception would cross the callback's Go frames and abort the process
// (strings.cpp), every session of a server with it. A column the query does
// not project is skipped, as duckdb-go skips it.
func (s *Strings) Assign(chunk *duckdb.DataChunk, col int) error {
	if len(s.rows) == 0 {
		return nil
	}
	raw, projection, err := OutputChunk(chunk)
	if err != nil {
		return err
	}
	vec, projected, err := OutputVector(raw, projection, col)
	if err != nil || !projected {
		return err
	}
	if err := assignStrings(vec, s.rows, s.bytes, s.ends); err != nil {
		return fmt.Errorf("column %d: %d strings of %d bytes: %w", col, len(s.rows), len(s.bytes), err)
	}
	return nil
}

// StringResults is the executor of the scalar function name returning VARCHAR: fn
// answers each row's arguments (none NULL: DuckDB's default NULL handling
// answers those rows NULL without it) with the result and whether it is
// non-NULL. Results are written as Strings.Assign writes them, so a string
// DuckDB cannot allocate at its memory_limit fails the statement; duckdb-go's
// row executor writes them through the same C call as its setter, and the
// exception aborted the process.
func StringResults(name string, fn func(args []driver.Value) (string, bool, error)) duckdb.ChunkContextExecutorFn {
	return func(_ context.Context, it *duckdb.ChunkIteratorState) error {
		out, row, err := scalarOutput(it)
		if err != nil {
			return err
		}
		args := make([]driver.Value, it.ColumnCount())
		for r, err := range it.Rows() {
			if err != nil {
				return err
			}
			for i := range args {
				args[i] = *r.GetValuePtr(i)
			}
			s, ok, err := fn(args)
			switch {
			case err != nil:
				return err
			case !ok:
				err = r.SetResult(nil)
			default:
				if err = assignString(out, int(*row), s); err != nil {
					err = fmt.Errorf("%s: result %w", name, err)
				}
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// scalarOutput is the DuckDB vector a scalar function's chunk executor writes
// its results into, and the row its iterator is at.
func scalarOutput(it *duckdb.ChunkIteratorState) (bindings.Vector, *bindings.IdxT, error) {
	row, err := nestedField[bindings.IdxT](it, "r", "rowIdx")
	if err != nil {
		return bindings.Vector{}, nil, err
	}
	vec, err := nestedField[bindings.Vector](it, "output", "vec")
	if err != nil {
		return bindings.Vector{}, nil, err
	}
	return *vec, row, nil
}

// assignString writes v into row of vec through strings.cpp's wrapper.
func assignString(vec bindings.Vector, row int, v string) error {
	if err := assignStrings(vec, []uint64{uint64(row)}, unsafe.Slice(unsafe.StringData(v), len(v)), []uint64{uint64(len(v))}); err != nil {
		return fmt.Errorf("string of %d bytes: %w", len(v), err)
	}
	return nil
}

// assignStrings writes the strings of bytes, the i-th ending at ends[i], into
// the rows of vec through strings.cpp's wrapper, in one call; its error is
// DuckDB's message.
func assignStrings(vec bindings.Vector, rows []uint64, bytes []byte, ends []uint64) error {
	if len(bytes) == 0 { // every value empty: C still needs a valid pointer
		bytes = []byte{0}
	}
	r := C.meterstore_assign_strings(vec.Ptr, C.uint64_t(len(rows)), (*C.uint64_t)(unsafe.Pointer(&rows[0])),
		(*C.char)(unsafe.Pointer(&bytes[0])), (*C.uint64_t)(unsafe.Pointer(&ends[0])))
	if r.failed == 0 {
		return nil
	}
	msg := "an exception without a message (none could be allocated)"
	if r.message != nil {
		msg = duckDBMessage(C.GoString(r.message))
		C.free(unsafe.Pointer(r.message))
	}
	return errors.New(msg)
}

// duckDBMessage is the message of an exception's text, which DuckDB writes
// as JSON ({"exception_type": …, "exception_message": …}).
func duckDBMessage(what string) string {
	var e struct {
		Type    string `json:"exception_type"`
		Message string `json:"exception_message"`
	}
	if json.Unmarshal([]byte(what), &e) != nil || e.Message == "" {
		return what
	}
	return e.Type + ": " + e.Message
}
