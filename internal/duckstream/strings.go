package duckstream

/*
#include <stddef.h>
#include <stdint.h>
int meterstore_assign_string(void *vector, uint64_t index, const char *str, uint64_t len, char *err, size_t errlen);
*/
import "C"

import (
	"encoding/json"
	"fmt"
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
	raw, err := unexportedField[bindings.DataChunk](chunk, "chunk")
	if err != nil {
		return err
	}
	projection, err := unexportedField[[]int](chunk, "projection")
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
	vec := bindings.DataChunkGetVector(raw, bindings.IdxT(col))
	var msg [512]C.char
	if C.meterstore_assign_string(vec.Ptr, C.uint64_t(row), (*C.char)(unsafe.Pointer(unsafe.StringData(v))), C.uint64_t(len(v)), &msg[0], C.size_t(len(msg))) != 0 {
		return fmt.Errorf("string of %d bytes into column %d: %s", len(v), col, duckDBMessage(C.GoString(&msg[0])))
	}
	return nil
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
