package duckstream

import (
	"fmt"
	"reflect"
	"unsafe"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2"
)

// duckdb-go (v2.10506) runs every statement with duckdb_pending_prepared, so
// DuckDB materialises a whole result before its first row reaches Go: a 20 M row
// export held gigabytes inside DuckDB however lazily Go consumed it. The C API
// can stream (duckdb_pending_prepared_streaming, then duckdb_fetch_chunk runs the
// final pipeline a chunk at a time), but duckdb-go exposes neither that nor the
// handles needed to do it beside it (upstream: duckdb-go PR #165 discussion).
//
// This file is the only place that reaches into duckdb-go's unexported state,
// and it reads exactly two handles: the connection of a *duckdb.Conn and the
// prepared statement of a *duckdb.Stmt. Everything else — preparing, binding
// arguments, closing — goes through duckdb-go's public API, so parameters bind
// exactly as database/sql binds them everywhere else. Both reads check the
// field's name and type first and fail with an error rather than read garbage;
// TestDuckDBHandles fails loudly if an upgrade moves either field.

// Connection is the DuckDB connection handle behind a duckdb-go connection,
// for the streaming execution and for interrupting it.
func Connection(c *duckdb.Conn) (bindings.Connection, error) {
	return unexportedField[bindings.Connection](c, "conn")
}

// duckPrepared is the prepared statement handle behind a duckdb-go statement
// (prepared and bound through duckdb-go), executed here as a stream.
func duckPrepared(s *duckdb.Stmt) (bindings.PreparedStatement, error) {
	p, err := unexportedField[*bindings.PreparedStatement](s, "preparedStmt")
	if err != nil {
		return bindings.PreparedStatement{}, err
	}
	if p == nil || p.Ptr == nil {
		return bindings.PreparedStatement{}, fmt.Errorf("duckdb-go statement has no prepared statement")
	}
	return *p, nil
}

// unexportedField reads the field name, of exactly type T, of the struct ptr points to.
func unexportedField[T any](ptr any, name string) (T, error) {
	var zero T
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return zero, fmt.Errorf("read %s: %T is not a pointer to a struct", name, ptr)
	}
	f := v.Elem().FieldByName(name)
	if !f.IsValid() {
		return zero, fmt.Errorf("read %s: %T has no field %s (duckdb-go upgraded? see engine/duckstream.go)", name, ptr, name)
	}
	if want := reflect.TypeFor[T](); f.Type() != want {
		return zero, fmt.Errorf("read %s: field %s of %T is %s, want %s (duckdb-go upgraded? see engine/duckstream.go)", name, name, ptr, f.Type(), want)
	}
	return *(*T)(unsafe.Pointer(f.UnsafeAddr())), nil
}
