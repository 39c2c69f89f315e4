package catalog

import (
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
)

var (
	tsType    = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	valueType = &arrow.Decimal128Type{Precision: 18, Scale: 6}
	verType   = &arrow.Decimal128Type{Precision: 20, Scale: 0}
	maxValue  = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
)

// ArrowType maps a column type to the Arrow type the writer takes.
func ArrowType(t meterstore.ColumnType) arrow.DataType {
	switch t {
	case meterstore.TypeTimestamp:
		return tsType
	case meterstore.TypeDecimal18_6:
		return valueType
	case meterstore.TypeDecimal20_0:
		return verType
	case meterstore.TypeDate:
		return arrow.FixedWidthTypes.Date32
	}
	return arrow.BinaryTypes.String
}

// ArrowSchema is the Arrow schema of cfg's rows (non-nullable for required columns,
// field ids in PARQUET:field_id metadata).
func ArrowSchema(cfg meterstore.TableConfig) *arrow.Schema {
	cols := cfg.Columns()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: ArrowType(c.Type), Nullable: c.Nullable,
			Metadata: arrow.NewMetadata([]string{fieldIDKey}, []string{strconv.Itoa(c.FieldID)})}
	}
	return arrow.NewSchema(fields, nil)
}

// pow10i64[i] is 10^i; 10^18 bounds a decimal(18,6) coefficient.
var pow10i64 = [...]int64{1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000,
	10_000_000_000, 100_000_000_000, 1_000_000_000_000, 10_000_000_000_000, 100_000_000_000_000,
	1_000_000_000_000_000, 10_000_000_000_000_000, 100_000_000_000_000_000, 1_000_000_000_000_000_000}

// valueToDecimal128 converts a quantity exactly to decimal128(18,6). Every
// archived row passes here, so a coefficient of at most 18 digits (every
// quantity the hot tier decodes) is scaled in int64 arithmetic, without the
// big.Int allocations of the general path.
func valueToDecimal128(v decimal.Decimal) (decimal128.Num, error) {
	if v.NumDigits() <= 18 {
		c, shift := v.CoefficientInt64(), int(v.Exponent())+6
		abs := c
		if abs < 0 {
			abs = -abs
		}
		switch {
		case c == 0:
			return decimal128.Num{}, nil
		case shift >= 0 && shift <= 18:
			if abs >= pow10i64[18-shift] {
				return decimal128.Num{}, fmt.Errorf("value %s exceeds decimal(18,6)", v)
			}
			return decimal128.FromI64(c * pow10i64[shift]), nil
		case shift < 0 && -shift <= 18:
			if c%pow10i64[-shift] != 0 {
				return decimal128.Num{}, fmt.Errorf("value %s has more than 6 decimal places", v)
			}
			return decimal128.FromI64(c / pow10i64[-shift]), nil
		}
	}
	s := v.Shift(6)
	if !s.IsInteger() {
		return decimal128.Num{}, fmt.Errorf("value %s has more than 6 decimal places", v)
	}
	bi := s.BigInt()
	if new(big.Int).Abs(bi).Cmp(maxValue) >= 0 {
		return decimal128.Num{}, fmt.Errorf("value %s exceeds decimal(18,6)", v)
	}
	return decimal128.FromBigInt(bi), nil
}

func decimal128ToValue(n decimal128.Num) decimal.Decimal {
	return decimal.NewFromBigInt(n.BigInt(), -6)
}

// RecordToRows converts a record batch read from the table back to rows. A
// column is found by its Parquet field id where the batch carries them (a
// data file read directly), else by its configured name; a declared column
// missing from the batch reads as null.
func RecordToRows(cfg meterstore.TableConfig, rec arrow.RecordBatch) ([]meterstore.Row, error) {
	return recordToRows(cfg, rec, nil)
}

// recordToRows is RecordToRows for a batch whose columns are named as the
// table's current schema names them (iceberg-go's scans): stored maps a field
// id to that name, so a column another engine renamed is still found.
func recordToRows(cfg meterstore.TableConfig, rec arrow.RecordBatch, stored map[int]string) ([]meterstore.Row, error) {
	cols := cfg.Columns()
	idx, err := recordColumns(cols, rec.Schema(), stored)
	if err != nil {
		return nil, err
	}
	out := make([]meterstore.Row, rec.NumRows())
	for r := range out {
		row := &out[r]
		if n := len(cols) - meterstore.CoreColumnCount; n > 0 {
			row.Extra = make([]*string, n)
		}
		for i, c := range cols {
			if idx[i] < 0 {
				continue
			}
			if err := readCell(row.Field(i), c, rec.Column(idx[i]), r); err != nil {
				return nil, fmt.Errorf("read back: column %s: %w", c.Name, err)
			}
		}
	}
	return out, nil
}

// recordColumns is the position in sc of each of cols, -1 where sc lacks it:
// by field id where sc's fields carry them, else by the stored name of the
// column's field id, else by its name.
func recordColumns(cols []meterstore.ColumnDef, sc *arrow.Schema, stored map[int]string) ([]int, error) {
	byID := map[int]int{}
	for i, f := range sc.Fields() {
		if v, ok := f.Metadata.GetValue(fieldIDKey); ok {
			// pqarrow marks a field the file gives no id with -1.
			if id, err := strconv.Atoi(v); err == nil && id >= 0 {
				byID[id] = i
			}
		}
	}
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = -1
		name := c.Name
		if n, ok := stored[c.FieldID]; ok {
			name = n
		}
		if j, ok := byID[c.FieldID]; ok {
			idx[i] = j
		} else if is := sc.FieldIndices(name); len(byID) == 0 && len(is) > 0 {
			idx[i] = is[0]
		} else if i < meterstore.CoreColumnCount && !c.Nullable {
			return nil, fmt.Errorf("read back: column %s missing", c.Name)
		}
	}
	return idx, nil
}

// fieldIDKey is the Arrow field metadata key of a Parquet field id.
const fieldIDKey = "PARQUET:field_id"

// readCell stores row r of a in f, the Row field of column c (Row.Field). A
// NULL leaves the field as it is: nil, or the zero value of a required column.
func readCell(f any, c meterstore.ColumnDef, a arrow.Array, r int) error {
	if a.IsNull(r) {
		return nil
	}
	switch f := f.(type) {
	case *string:
		*f = stringValue(a, r)
	case **string:
		s := stringValue(a, r)
		*f = &s
	case *time.Time, **time.Time:
		t, err := timeValue(c, a, r)
		if err != nil {
			return err
		}
		if p, ok := f.(*time.Time); ok {
			*p = t
		} else {
			*f.(**time.Time) = &t
		}
	case *decimal.Decimal, *uint64:
		d, ok := a.(*array.Decimal128)
		if !ok {
			return fmt.Errorf("is %s", a.DataType())
		}
		if p, ok := f.(*decimal.Decimal); ok {
			*p = decimal128ToValue(d.Value(r))
		} else {
			*f.(*uint64) = d.Value(r).BigInt().Uint64()
		}
	}
	return nil
}

func stringValue(a arrow.Array, r int) string {
	switch a := a.(type) {
	case *array.String:
		return a.Value(r)
	case *array.LargeString:
		return a.Value(r)
	case *array.Binary:
		return string(a.Value(r))
	}
	return a.ValueStr(r)
}

func timeValue(c meterstore.ColumnDef, a arrow.Array, r int) (time.Time, error) {
	switch a := a.(type) {
	case *array.Timestamp:
		return a.Value(r).ToTime(a.DataType().(*arrow.TimestampType).Unit).UTC(), nil
	case *array.Date32:
		if c.Type == meterstore.TypeDate {
			return a.Value(r).ToTime().UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("is %s", a.DataType())
}
