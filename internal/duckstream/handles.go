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
// This package is the only place that reaches into duckdb-go's unexported
// state, through the checked reads below: the connection of a *duckdb.Conn,
// the prepared statement of a *duckdb.Stmt, and the DuckDB chunk and vector
// behind a table or scalar function's output (source.go, strings.go).
// Everything else — preparing, binding arguments, closing — goes through
// duckdb-go's public API, so parameters bind exactly as database/sql binds
// them everywhere else. Every read checks the field's name and type first and
// fails with an error rather than read garbage; TestDuckDBHandles fails loudly
// if an upgrade moves a field.

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
	p, err := nestedField[T](ptr, name)
	if err != nil {
		return *new(T), err
	}
	return *p, nil
}

// nestedField is the address of the field at path — a field's name, then
// the name of a field of that struct (or of the struct it points to), and so
// on — of the struct ptr points to; the last must be of exactly type T.
func nestedField[T any](ptr any, path ...string) (*T, error) {
	v := reflect.ValueOf(ptr)
	for _, name := range path {
		f, err := structField(v, name)
		if err != nil {
			return nil, err
		}
		v = f
	}
	return fieldAddr[T](v, path[len(path)-1])
}

// structField is the field name of the struct v points to (or of v, an
// addressable struct), itself addressable.
func structField(v reflect.Value, name string) (reflect.Value, error) {
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || !v.CanAddr() {
		return reflect.Value{}, fmt.Errorf("read %s: %s is not a pointer to a struct", name, v.Type())
	}
	f := v.FieldByName(name)
	if !f.IsValid() {
		return reflect.Value{}, fmt.Errorf("read %s: %s has no field %s (duckdb-go upgraded? see internal/duckstream/handles.go)", name, v.Type(), name)
	}
	return f, nil
}

// fieldAddr is the address of field f, which must be of exactly type T.
func fieldAddr[T any](f reflect.Value, name string) (*T, error) {
	if want := reflect.TypeFor[T](); f.Type() != want {
		return nil, fmt.Errorf("read %s: field %s is %s, want %s (duckdb-go upgraded? see internal/duckstream/handles.go)", name, name, f.Type(), want)
	}
	return (*T)(unsafe.Pointer(f.UnsafeAddr())), nil
}
