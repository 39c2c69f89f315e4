package engine

import (
	"fmt"
	"time"
	"unsafe"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/duckstream"
)

// chunkColumn is one projected column of a hot scan's output chunk. Its
// fixed-width values are written straight into DuckDB's vector — what
// duckdb.SetChunkValue does for each value, without the column lookup, the
// type dispatch and the conversions that cost more than the write — and its
// strings are collected in strs, written at once (duckstream.Strings).
type chunkColumn struct {
	col  int                   // the column in the table's layout
	typ  meterstore.ColumnType // what its vector holds (columnTypeInfo)
	strs *duckstream.Strings

	// The chunk being filled (bindVectors).
	vec      bindings.Vector
	data     unsafe.Pointer // the vector's values
	validity unsafe.Pointer // its validity mask; nil until a NULL is written
}

// bindVectors points each projected column at its vector of chunk, the
// output chunk about to be filled: DuckDB may hand a new buffer for each.
func (s *hotSource) bindVectors(chunk *duckdb.DataChunk) error {
	raw, projection, err := duckstream.OutputChunk(chunk)
	if err != nil {
		return err
	}
	for i := range s.out {
		c := &s.out[i]
		c.strs.Reset()
		vec, projected, err := duckstream.OutputVector(raw, projection, c.col)
		if err != nil {
			return err
		}
		if !projected {
			return fmt.Errorf("column %d is projected but not in the chunk (%d columns)", c.col, bindings.DataChunkGetColumnCount(raw))
		}
		c.vec = vec
		c.data, c.validity = bindings.VectorGetData(c.vec), nil
	}
	return nil
}

// setNull marks the chunk's row NULL in c.
func (c *chunkColumn) setNull(row int) {
	if c.validity == nil {
		bindings.VectorEnsureValidityWritable(c.vec)
		c.validity = bindings.VectorGetValidity(c.vec)
	}
	bindings.ValiditySetRowInvalid(c.validity, bindings.IdxT(row))
}

// secondsPerDay turns a date's midnight into DuckDB's DATE, days since 1970.
const secondsPerDay = 86_400

// putTime writes t as the column's TIMESTAMPTZ (µs since 1970) or DATE
// (days since 1970, as duckdb-go counts them).
func (c *chunkColumn) putTime(row int, t time.Time) error {
	switch c.typ {
	case meterstore.TypeTimestamp:
		store(c.data, row, t.UnixMicro())
	case meterstore.TypeDate:
		store(c.data, row, int32(t.Unix()/secondsPerDay))
	default:
		return c.mismatch("a time")
	}
	return nil
}

// putScaled writes a DECIMAL(18,6)'s scaled integer (value × 10⁶), which is
// what its vector holds.
func (c *chunkColumn) putScaled(row int, v int64) error {
	if c.typ != meterstore.TypeDecimal18_6 {
		return c.mismatch("a quantity")
	}
	store(c.data, row, v)
	return nil
}

// hugeint is DuckDB's HUGEINT (duckdb_hugeint), DECIMAL(20,0)'s storage.
type hugeint struct {
	lower uint64
	upper int64
}

// putVersion writes a version into its DECIMAL(20,0) column.
func (c *chunkColumn) putVersion(row int, v uint64) error {
	if c.typ != meterstore.TypeDecimal20_0 {
		return c.mismatch("a version")
	}
	store(c.data, row, hugeint{lower: v})
	return nil
}

func (c *chunkColumn) mismatch(what string) error {
	return fmt.Errorf("%s for a %s column", what, c.typ.DuckDBType())
}

// store writes v as element row of the vector data holding Ts.
func store[T any](data unsafe.Pointer, row int, v T) {
	*(*T)(unsafe.Add(data, uintptr(row)*unsafe.Sizeof(v))) = v
}
