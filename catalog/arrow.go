package catalog

import (
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shopspring/decimal"

	"meterstore"
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
			Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(c.FieldID)})}
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

type rowBuilder struct {
	cfg  meterstore.TableConfig
	cols []meterstore.ColumnDef
	b    *array.RecordBuilder
}

func newRowBuilder(cfg meterstore.TableConfig, mem memory.Allocator) *rowBuilder {
	return &rowBuilder{cfg: cfg, cols: cfg.Columns(), b: array.NewRecordBuilder(mem, ArrowSchema(cfg))}
}

func appendStr(b array.Builder, s string) { b.(*array.StringBuilder).Append(s) }
func appendStrPtr(b array.Builder, s *string) {
	if s == nil {
		b.AppendNull()
		return
	}
	b.(*array.StringBuilder).Append(*s)
}
func appendTS(b array.Builder, t time.Time) {
	b.(*array.TimestampBuilder).Append(arrow.Timestamp(t.UnixMicro()))
}

func (rb *rowBuilder) append(r *meterstore.Row) error {
	nExtra := len(rb.cols) - 17
	if len(r.Extra) != nExtra {
		return fmt.Errorf("row of malo %s carries %d declared columns, table %s declares %d", r.MaloID, len(r.Extra), rb.cfg.Name(), nExtra)
	}
	v, err := valueToDecimal128(r.Value)
	if err != nil {
		return fmt.Errorf("malo %s %s at %s: %w", r.MaloID, r.ObisCode, r.From.UTC().Format(time.RFC3339), err)
	}
	f := rb.b.Fields()
	appendStr(f[0], r.MaloID)
	appendStrPtr(f[1], r.MeloID)
	appendStr(f[2], r.ObisCode)
	appendStr(f[3], r.Sparte)
	appendTS(f[4], r.From)
	if r.To == nil {
		f[5].AppendNull()
	} else {
		appendTS(f[5], *r.To)
	}
	f[6].(*array.Decimal128Builder).Append(v)
	appendStr(f[7], r.Unit)
	appendStr(f[8], r.Quality)
	appendStrPtr(f[9], r.Resolution)
	appendStr(f[10], r.SourceKind)
	appendStrPtr(f[11], r.SourceDetail)
	appendStrPtr(f[12], r.Provenance)
	f[13].(*array.Decimal128Builder).Append(decimal128.FromU64(r.Version))
	appendStr(f[14], r.VersionScope)
	appendTS(f[15], r.RecordedAt)
	f[16].(*array.Date32Builder).Append(arrow.Date32FromTime(r.BalancingDay))
	for i, x := range r.Extra {
		appendStrPtr(f[17+i], x)
	}
	return nil
}

// RowsToRecord converts rows to one Arrow record batch in cfg's layout.
func RowsToRecord(cfg meterstore.TableConfig, rows []meterstore.Row, mem memory.Allocator) (arrow.RecordBatch, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	rb := newRowBuilder(cfg, mem)
	defer rb.b.Release()
	for i := range rows {
		if err := rb.append(&rows[i]); err != nil {
			return nil, err
		}
	}
	return rb.b.NewRecordBatch(), nil
}

// RecordToRows converts a record batch read from the table back to rows. Columns
// are found by name; a declared column missing from the batch reads as null.
func RecordToRows(cfg meterstore.TableConfig, rec arrow.RecordBatch) ([]meterstore.Row, error) {
	cols := cfg.Columns()
	idx := make([]int, len(cols))
	sc := rec.Schema()
	for i, c := range cols {
		idx[i] = -1
		if is := sc.FieldIndices(c.Name); len(is) > 0 {
			idx[i] = is[0]
		}
	}
	for i := 0; i < 17; i++ {
		if idx[i] < 0 && !cols[i].Nullable {
			return nil, fmt.Errorf("read back: column %s missing", cols[i].Name)
		}
	}
	n := int(rec.NumRows())
	out := make([]meterstore.Row, n)
	str := func(ci, row int) (string, bool) {
		if idx[ci] < 0 {
			return "", false
		}
		a := rec.Column(idx[ci])
		if a.IsNull(row) {
			return "", false
		}
		switch a := a.(type) {
		case *array.String:
			return a.Value(row), true
		case *array.LargeString:
			return a.Value(row), true
		case *array.Binary:
			return string(a.Value(row)), true
		}
		return a.ValueStr(row), true
	}
	strPtr := func(ci, row int) *string {
		if s, ok := str(ci, row); ok {
			return &s
		}
		return nil
	}
	ts := func(ci, row int) (time.Time, bool) {
		if idx[ci] < 0 {
			return time.Time{}, false
		}
		a := rec.Column(idx[ci]).(*array.Timestamp)
		if a.IsNull(row) {
			return time.Time{}, false
		}
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(row).ToTime(unit).UTC(), true
	}
	dec := func(ci, row int) (decimal128.Num, error) {
		a, ok := rec.Column(idx[ci]).(*array.Decimal128)
		if !ok {
			return decimal128.Num{}, fmt.Errorf("read back: column %s is %s", cols[ci].Name, rec.Column(idx[ci]).DataType())
		}
		return a.Value(row), nil
	}
	for r := 0; r < n; r++ {
		row := &out[r]
		row.MaloID, _ = str(0, r)
		row.MeloID = strPtr(1, r)
		row.ObisCode, _ = str(2, r)
		row.Sparte, _ = str(3, r)
		row.From, _ = ts(4, r)
		if to, ok := ts(5, r); ok {
			row.To = &to
		}
		v, err := dec(6, r)
		if err != nil {
			return nil, err
		}
		row.Value = decimal128ToValue(v)
		row.Unit, _ = str(7, r)
		row.Quality, _ = str(8, r)
		row.Resolution = strPtr(9, r)
		row.SourceKind, _ = str(10, r)
		row.SourceDetail = strPtr(11, r)
		row.Provenance = strPtr(12, r)
		ver, err := dec(13, r)
		if err != nil {
			return nil, err
		}
		row.Version = ver.BigInt().Uint64()
		row.VersionScope, _ = str(14, r)
		row.RecordedAt, _ = ts(15, r)
		if d, ok := rec.Column(idx[16]).(*array.Date32); ok && !d.IsNull(r) {
			row.BalancingDay = d.Value(r).ToTime().UTC()
		}
		if len(cols) > 17 {
			row.Extra = make([]*string, len(cols)-17)
			for i := range row.Extra {
				row.Extra[i] = strPtr(17+i, r)
			}
		}
	}
	return out, nil
}
