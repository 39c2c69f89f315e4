package catalog

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
)

// rowsToRecord converts rows to one Arrow record batch in cfg's layout: rows
// as a foreign writer would hand them to Iceberg, for the tests that write
// files without the archiver's writer.
func rowsToRecord(cfg meterstore.TableConfig, rows []meterstore.Row, mem memory.Allocator) (arrow.RecordBatch, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	b := array.NewRecordBuilder(mem, ArrowSchema(cfg))
	defer b.Release()
	nExtra := len(cfg.Columns()) - meterstore.CoreColumnCount
	for i := range rows {
		r := &rows[i]
		if len(r.Extra) != nExtra {
			return nil, fmt.Errorf("row of malo %s carries %d declared columns, table %s declares %d", r.MaloID, len(r.Extra), cfg.Name(), nExtra)
		}
		for c, f := range b.Fields() {
			if err := appendCell(f, r.Field(c)); err != nil {
				return nil, fmt.Errorf("malo %s %s at %s: %w", r.MaloID, r.ObisCode, r.From.UTC().Format(time.RFC3339), err)
			}
		}
	}
	return b.NewRecordBatch(), nil
}

// appendCell appends the Row field f (Row.Field) to its column's builder.
func appendCell(b array.Builder, f any) error {
	switch f := f.(type) {
	case *string:
		b.(*array.StringBuilder).Append(*f)
	case **string:
		if *f == nil {
			b.AppendNull()
		} else {
			b.(*array.StringBuilder).Append(**f)
		}
	case **time.Time:
		if *f == nil {
			b.AppendNull()
		} else {
			return appendCell(b, *f)
		}
	case *time.Time:
		if d, ok := b.(*array.Date32Builder); ok {
			d.Append(arrow.Date32FromTime(*f))
		} else {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(f.UnixMicro()))
		}
	case *decimal.Decimal:
		v, err := valueToDecimal128(*f)
		if err != nil {
			return err
		}
		b.(*array.Decimal128Builder).Append(v)
	case *uint64:
		b.(*array.Decimal128Builder).Append(decimal128.FromU64(*f))
	}
	return nil
}
