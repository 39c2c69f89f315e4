package pgwire

import (
	"math/big"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5/pgtype"
)

// BenchmarkMeterRows encodes a month of one meter's quarter-hours as the
// single-meter read returns them ("from", obis_code, value) into a spool, in
// text and in binary: the per-row cost of a result on the wire.
func BenchmarkMeterRows(b *testing.B) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		b.Fatal(err)
	}
	var cols []pgColumn
	for _, duck := range []string{"TIMESTAMP WITH TIME ZONE", "VARCHAR", "DECIMAL(18,6)"} {
		oid, size, mod := pgTypeOf(duck)
		cols = append(cols, pgColumn{name: duck, oid: oid, size: size, typmod: mod, duck: duck})
	}
	start := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	const rows = 2 * 96 * 31
	vals := make([][]any, rows)
	for i := range vals {
		vals[i] = []any{start.Add(time.Duration(i/2) * 15 * time.Minute), "1-0:1.29.0",
			duckdb.Decimal{Width: 18, Scale: 6, Value: big.NewInt(int64(i)*1234567 + 89)}}
	}
	for _, format := range []int16{pgtype.TextFormatCode, pgtype.BinaryFormatCode} {
		b.Run(map[int16]string{0: "text", 1: "binary"}[format], func(b *testing.B) {
			sess := &pgSession{m: pgtype.NewMap(), loc: berlin}
			for b.Loop() {
				p := &pgPortal{cols: cols, formats: []int16{format}}
				for _, v := range vals {
					if err := p.spool.addRow(func(buf []byte) ([]byte, error) { return sess.appendRow(buf, p, v) }); err != nil {
						b.Fatal(err)
					}
				}
				p.spool.discard()
			}
		})
	}
}
