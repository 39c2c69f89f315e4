package duckstream

/*
#include <stdint.h>
#include <stdlib.h>
struct meterstore_assign_result {
	int failed;
	char *message;
};
struct meterstore_assign_result meterstore_assign_string(void *vector, uint64_t index, const char *str, uint64_t len);
*/
import "C"

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"reflect"
	"unsafe"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2"
)

// AssignString writes v into row of column col of a table function's output
// chunk; DuckDB copies its bytes into the vector's string heap. It does what
// duckdb.SetChunkValue does for a string, except that an allocation DuckDB
// refuses comes back as an error: through duckdb-go the C++ exception would
// cross the callback's Go frames and abort the process (strings.cpp), every
// session of a server with it. A column the query does not project is
// skipped, as duckdb-go skips it.
func AssignString(chunk *duckdb.DataChunk, col, row int, v string) error {
	raw, projection, err := OutputChunk(chunk)
	if err != nil {
		return err
	}
	if projection != nil {
		if col < 0 || col >= len(projection) {
			return fmt.Errorf("column %d of a chunk projecting %d", col, len(projection))
		}
		col = projection[col]
	}
	if col < 0 || col >= int(bindings.DataChunkGetColumnCount(raw)) {
		return nil // not projected
	}
	if err := assignString(bindings.DataChunkGetVector(raw, bindings.IdxT(col)), row, v); err != nil {
		return fmt.Errorf("column %d: %w", col, err)
	}
	return nil
}

// StringResults is the executor of the scalar function name returning VARCHAR: fn
// answers each row's arguments (none NULL: DuckDB's default NULL handling
// answers those rows NULL without it) with the result and whether it is
// non-NULL. Results are written as AssignString writes them, so a string
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
	itv := reflect.ValueOf(it)
	r, err := structField(itv, "r")
	if err != nil {
		return bindings.Vector{}, nil, err
	}
	rowField, err := structField(r, "rowIdx")
	if err != nil {
		return bindings.Vector{}, nil, err
	}
	row, err := fieldAddr[bindings.IdxT](rowField, "rowIdx")
	if err != nil {
		return bindings.Vector{}, nil, err
	}
	output, err := structField(itv, "output")
	if err != nil {
		return bindings.Vector{}, nil, err
	}
	vecField, err := structField(output, "vec")
	if err != nil {
		return bindings.Vector{}, nil, err
	}
	vec, err := fieldAddr[bindings.Vector](vecField, "vec")
	if err != nil {
		return bindings.Vector{}, nil, err
	}
	return *vec, row, nil
}

// assignString writes v into row of vec through strings.cpp's wrapper.
func assignString(vec bindings.Vector, row int, v string) error {
	r := C.meterstore_assign_string(vec.Ptr, C.uint64_t(row), (*C.char)(unsafe.Pointer(unsafe.StringData(v))), C.uint64_t(len(v)))
	if r.failed == 0 {
		return nil
	}
	msg := "an exception without a message (none could be allocated)"
	if r.message != nil {
		msg = duckDBMessage(C.GoString(r.message))
		C.free(unsafe.Pointer(r.message))
	}
	return fmt.Errorf("string of %d bytes: %s", len(v), msg)
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
