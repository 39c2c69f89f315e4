package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore/internal/duckstream"
)

// DefaultStreamBatchRows is the number of rows per Arrow record batch.
const DefaultStreamBatchRows = 65536

// Stream is a result as Arrow record batches. The description — schema and
// provenance — is available before the first batch; memory is bounded by one
// batch in Go and a few chunks in DuckDB (plus one hot page), whatever the
// result size: DuckDB computes the rows as the batches are built (see Rows),
// and Close stops it wherever it is.
//
//	s, err := eng.Stream(ctx, "SELECT … FROM readings")
//	defer s.Close()
//	for s.Next() { rec := s.Record() /* valid until the next call to Next */ }
//	err = s.Err() // ErrBoundaryMoved if the watermark moved while the hot tier was read
//
// The boundary is checked when DuckDB has delivered the last row, before the
// last batch is handed out: if it moved, Next returns false and Err reports
// ErrBoundaryMoved instead of a clean end. Batches already consumed are then
// incomplete; a consumer that forwarded them must abort, not finish.
//
// It does not need duckdb-go's Arrow API (build tag duckdb_arrow): batches are
// built from database/sql rows with arrow-go builders. DECIMAL is decimal128 at
// the column's precision and scale, TIMESTAMPTZ a UTC microsecond timestamp,
// DATE date32; a type without a mapping is its text form.
type Stream struct {
	// Schema carries the provenance in its metadata: meterstore.watermark,
	// meterstore.watermarks (JSON), meterstore.tiers, meterstore.read_mode,
	// meterstore.snapshot_ids (JSON), and meterstore.known_at / max_version / scope when set.
	Schema      *arrow.Schema
	Description *Description
	BatchRows   int

	rows  *Rows
	kinds []colKind
	mem   memory.Allocator
	rec   arrow.RecordBatch
	err   error
	done  bool
}

type colKind uint8

const (
	kString colKind = iota
	kBool
	kInt8
	kInt16
	kInt32
	kInt64
	kUint8
	kUint16
	kUint32
	kUint64
	kFloat32
	kFloat64
	kDecimal
	kDate
	kTimestampTZ
	kTimestamp
	kHugeint
)

// Stream plans and starts one SELECT and returns its description; batches
// follow through Next/Record.
func (e *Engine) Stream(ctx context.Context, q string, args ...any) (*Stream, error) {
	rows, d, err := e.describedRows(ctx, duckstream.DriverDecimals, q, args)
	if err != nil {
		return nil, err
	}
	s := &Stream{rows: rows, mem: memory.NewGoAllocator(), BatchRows: DefaultStreamBatchRows, Description: d, Schema: d.ArrowSchema()}
	for _, typ := range d.Types {
		_, kind := arrowType(typ)
		s.kinds = append(s.kinds, kind)
	}
	return s, nil
}

// ArrowSchema is the Arrow schema a stream of the described statement
// carries: every column nullable, typed as Stream builds it, and the
// provenance in the metadata. A Flight SQL server answers GetFlightInfo with
// it, so what a client reads before the rows is exactly what the rows carry.
func (d *Description) ArrowSchema() *arrow.Schema {
	fields := make([]arrow.Field, len(d.Columns))
	for i, name := range d.Columns {
		typ, _ := arrowType(d.Types[i])
		fields[i] = arrow.Field{Name: name, Type: typ, Nullable: true}
	}
	md := provenanceMetadata(d.Provenance)
	return arrow.NewSchema(fields, &md)
}

func provenanceMetadata(p *Provenance) arrow.Metadata {
	keys := []string{"meterstore.watermark", "meterstore.tiers", "meterstore.read_mode"}
	vals := []string{p.Watermark.UTC().Format(time.RFC3339Nano), p.Tiers.String(), p.Mode.String()}
	wm := map[string]string{}
	for t, w := range p.Watermarks {
		wm[t] = w.UTC().Format(time.RFC3339Nano)
	}
	b, _ := json.Marshal(wm)
	keys, vals = append(keys, "meterstore.watermarks"), append(vals, string(b))
	snaps := p.SnapshotIDs
	if snaps == nil {
		snaps = []int64{}
	}
	b, _ = json.Marshal(snaps)
	keys, vals = append(keys, "meterstore.snapshot_ids"), append(vals, string(b))
	if p.KnownAt != nil {
		keys, vals = append(keys, "meterstore.known_at"), append(vals, p.KnownAt.UTC().Format(time.RFC3339Nano))
	}
	if p.MaxVersion != nil {
		keys, vals = append(keys, "meterstore.max_version"), append(vals, strconv.FormatUint(*p.MaxVersion, 10))
	}
	if len(p.Scope) > 0 {
		keys, vals = append(keys, "meterstore.scope"), append(vals, strings.Join(p.Scope, ","))
	}
	if p.TimeZone != "" {
		keys, vals = append(keys, "meterstore.time_zone"), append(vals, p.TimeZone)
	}
	return arrow.NewMetadata(keys, vals)
}

// arrowType maps a DuckDB type name (as DESCRIBE and the driver's column
// types spell it) to its Arrow type and the builder that fills it.
func arrowType(duck string) (arrow.DataType, colKind) {
	name := strings.ToUpper(strings.TrimSpace(duck))
	if strings.HasPrefix(name, "DECIMAL") {
		var p, s int32 = 38, 0
		fmt.Sscanf(name, "DECIMAL(%d,%d)", &p, &s)
		return &arrow.Decimal128Type{Precision: p, Scale: s}, kDecimal
	}
	switch name {
	case "BOOLEAN":
		return arrow.FixedWidthTypes.Boolean, kBool
	case "TINYINT":
		return arrow.PrimitiveTypes.Int8, kInt8
	case "SMALLINT":
		return arrow.PrimitiveTypes.Int16, kInt16
	case "INTEGER":
		return arrow.PrimitiveTypes.Int32, kInt32
	case "BIGINT":
		return arrow.PrimitiveTypes.Int64, kInt64
	case "UTINYINT":
		return arrow.PrimitiveTypes.Uint8, kUint8
	case "USMALLINT":
		return arrow.PrimitiveTypes.Uint16, kUint16
	case "UINTEGER":
		return arrow.PrimitiveTypes.Uint32, kUint32
	case "UBIGINT":
		return arrow.PrimitiveTypes.Uint64, kUint64
	case "FLOAT":
		return arrow.PrimitiveTypes.Float32, kFloat32
	case "DOUBLE":
		return arrow.PrimitiveTypes.Float64, kFloat64
	case "DATE":
		return arrow.FixedWidthTypes.Date32, kDate
	case "TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE":
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, kTimestampTZ
	case "TIMESTAMP":
		return &arrow.TimestampType{Unit: arrow.Microsecond}, kTimestamp
	case "HUGEINT":
		return &arrow.Decimal128Type{Precision: 38, Scale: 0}, kHugeint
	}
	return arrow.BinaryTypes.String, kString
}

// Next builds the next batch; false at the end or on an error (see Err). The
// previous batch is released: Retain it to keep it.
func (s *Stream) Next() bool {
	if s.rec != nil {
		s.rec.Release()
		s.rec = nil
	}
	if s.done || s.err != nil {
		return false
	}
	b := array.NewRecordBuilder(s.mem, s.Schema)
	defer b.Release()
	n := len(s.kinds)
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	count := 0
	for count < s.BatchRows {
		if !s.rows.Next() {
			s.done = true
			if err := s.rows.Close(); err != nil {
				s.err = err
				return false
			}
			break
		}
		for i := range vals {
			vals[i] = nil
		}
		if err := s.rows.Scan(ptrs...); err != nil {
			s.err = err
			return false
		}
		for i, v := range vals {
			if err := appendValue(b.Field(i), s.kinds[i], v); err != nil {
				s.err = fmt.Errorf("column %s: %w", s.Schema.Field(i).Name, err)
				return false
			}
		}
		count++
	}
	if count == 0 {
		return false
	}
	s.rec = b.NewRecordBatch()
	return true
}

// Record is the current batch, valid until the next call to Next or Close.
func (s *Stream) Record() arrow.RecordBatch { return s.rec }

// Err is the error that ended the stream, if any: DuckDB's (a failure part-way
// through the result), the context's, or ErrBoundaryMoved — the watermark moved
// while the hot tier was read, so the batches are incomplete.
func (s *Stream) Err() error { return s.err }

// Provenance is the boundary the result is computed against.
func (s *Stream) Provenance() *Provenance { return s.Description.Provenance }

// Close ends the statement, stopping DuckDB if the stream was not read to its end.
func (s *Stream) Close() error {
	if s.rec != nil {
		s.rec.Release()
		s.rec = nil
	}
	err := s.rows.Close()
	if s.err != nil && !errors.Is(err, s.err) {
		return s.err
	}
	return err
}

var epochDay = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

func appendValue(b array.Builder, kind colKind, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch kind {
	case kBool:
		b.(*array.BooleanBuilder).Append(v.(bool))
	case kInt8:
		b.(*array.Int8Builder).Append(v.(int8))
	case kInt16:
		b.(*array.Int16Builder).Append(v.(int16))
	case kInt32:
		b.(*array.Int32Builder).Append(v.(int32))
	case kInt64:
		b.(*array.Int64Builder).Append(v.(int64))
	case kUint8:
		b.(*array.Uint8Builder).Append(v.(uint8))
	case kUint16:
		b.(*array.Uint16Builder).Append(v.(uint16))
	case kUint32:
		b.(*array.Uint32Builder).Append(v.(uint32))
	case kUint64:
		b.(*array.Uint64Builder).Append(v.(uint64))
	case kFloat32:
		b.(*array.Float32Builder).Append(v.(float32))
	case kFloat64:
		b.(*array.Float64Builder).Append(v.(float64))
	case kDecimal:
		d, ok := v.(duckdb.Decimal)
		if !ok {
			return fmt.Errorf("DECIMAL arrived as %T", v)
		}
		b.(*array.Decimal128Builder).Append(decimal128.FromBigInt(d.Value))
	case kHugeint:
		i, ok := v.(*big.Int)
		if !ok {
			return fmt.Errorf("HUGEINT arrived as %T", v)
		}
		b.(*array.Decimal128Builder).Append(decimal128.FromBigInt(i))
	case kDate:
		t := v.(time.Time)
		d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		b.(*array.Date32Builder).Append(arrow.Date32(d.Sub(epochDay) / (24 * time.Hour)))
	case kTimestampTZ, kTimestamp:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(v.(time.Time).UnixMicro()))
	default:
		switch x := v.(type) {
		case string:
			b.(*array.StringBuilder).Append(x)
		case []byte:
			b.(*array.StringBuilder).Append(string(x))
		default:
			b.(*array.StringBuilder).Append(fmt.Sprint(x))
		}
	}
	return nil
}
