package hot

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
)

// copyFresh sends the rows classified new (ds[i] for i in fresh) with one
// binary COPY into the parent.
//
// The rows are encoded here, straight from their fields, rather than through
// pgx.CopyFrom: pgx boxes every value into an interface and looks up an encode
// plan for it, and a numeric goes through a big.Int; here a row allocates
// nothing (BenchmarkCopyStream). Numbers are binary numerics either way, never a text cast.
func (s *Store) copyFresh(ctx context.Context, tx pgx.Tx, ds []meterstore.Displacement, fresh []int) error {
	tag, err := tx.Conn().PgConn().CopyFrom(ctx, s.newCopyStream(tx.Conn().TypeMap(), ds, fresh), s.copySQL())
	if err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("write %s: %w: %w", s.cfg.Name(), ErrConcurrentWrite, err)
		}
		return fmt.Errorf("write %s: %w", s.cfg.Name(), s.mapWriteError(err))
	}
	if n := tag.RowsAffected(); n != int64(len(fresh)) {
		return fmt.Errorf("write %s: %d of %d new rows stored: %w", s.cfg.Name(), n, len(fresh), ErrConcurrentWrite)
	}
	return nil
}

// copySQL is the COPY statement a copyStream is for.
func (s *Store) copySQL() string {
	return fmt.Sprintf("COPY %s (%s) FROM STDIN (FORMAT binary)",
		meterstore.QuoteIdent(s.cfg.Name()), meterstore.QuoteIdents(s.cfg.ColumnNames()))
}

// copySignature opens a binary COPY stream: the signature, no flags, no header
// extension.
const copySignature = "PGCOPY\n\xff\r\n\x00" + "\x00\x00\x00\x00" + "\x00\x00\x00\x00"

// copyChunk is how much of the stream a copyStream encodes ahead of its reader.
const copyChunk = 64 << 10

// copyStream is the binary COPY stream (an io.Reader) of the rows ds[i], i in
// fresh, in Columns() order, encoded a chunk at a time as it is read: pgconn
// reads and sends it chunk by chunk, so encoding the next chunk overlaps the
// server's work on the last, and no buffer the size of the batch is allocated.
type copyStream struct {
	tm    *pgtype.Map // encodes the rare number appendDecimal's fast path does not cover
	kinds []colKind   // per column of the layout
	ds    []meterstore.Displacement
	fresh []int
	next  int // the next index into fresh to encode
	buf   []byte
	off   int // read position in buf
	done  bool
}

func (s *Store) newCopyStream(tm *pgtype.Map, ds []meterstore.Displacement, fresh []int) *copyStream {
	return &copyStream{tm: tm, kinds: layoutKinds(s.cfg), ds: ds, fresh: fresh,
		buf: append(make([]byte, 0, copyChunk+1024), copySignature...)}
}

func (c *copyStream) Read(p []byte) (int, error) {
	for c.off == len(c.buf) {
		if c.done {
			return 0, io.EOF
		}
		c.buf, c.off = c.buf[:0], 0
		for len(c.buf) < copyChunk && c.next < len(c.fresh) {
			var err error
			if c.buf, err = c.appendRow(c.buf, &c.ds[c.fresh[c.next]].Row); err != nil {
				return 0, err
			}
			c.next++
		}
		if c.next == len(c.fresh) {
			c.buf = binary.BigEndian.AppendUint16(c.buf, 0xffff) // the trailer: field count -1
			c.done = true
		}
	}
	n := copy(p, c.buf[c.off:])
	c.off += n
	return n, nil
}

// appendRow appends one tuple: the field count, then each field.
func (c *copyStream) appendRow(buf []byte, r *meterstore.Row) ([]byte, error) {
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(c.kinds)))
	var err error
	for i, k := range c.kinds {
		f := r.Field(i)
		switch k {
		case kText:
			buf = appendText(buf, *f.(*string))
		case kTextNullable:
			var s *string
			if f != nil { // a declared column the row does not carry is null
				s = *f.(**string)
			}
			buf = appendNullText(buf, s)
		case kTimestamp:
			buf = appendTimestamptz(buf, *f.(*time.Time))
		case kTimestampNullable:
			if t := *f.(**time.Time); t != nil {
				buf = appendTimestamptz(buf, *t)
			} else {
				buf = appendNull(buf)
			}
		case kDate:
			buf = appendDate(buf, *f.(*time.Time))
		case kQuantity:
			v := *f.(*decimal.Decimal)
			if buf, err = appendDecimal(c.tm, buf, v); err != nil {
				return buf, fmt.Errorf("encode value %s: %w", v, err)
			}
		case kVersion:
			buf, _ = appendNumeric(buf, false, *f.(*uint64), 0) // a uint64 always fits
		}
	}
	return buf, nil
}

func appendNull(b []byte) []byte { return binary.BigEndian.AppendUint32(b, math.MaxUint32) }

func appendText(b []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint32(b, uint32(len(s))), s...)
}

func appendNullText(b []byte, s *string) []byte {
	if s == nil {
		return appendNull(b)
	}
	return appendText(b, *s)
}

// appendTimestamptz appends t as µs since 2000-01-01 UTC (what pgx sends).
func appendTimestamptz(b []byte, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(b, 8), uint64(t.UnixMicro()-pgEpochMicros))
}

// appendDate appends t's calendar date (in t's location, as pgx does) as days
// since 2000-01-01.
func appendDate(b []byte, t time.Time) []byte {
	y, m, d := t.Date()
	days := (time.Date(y, m, d, 0, 0, 0, 0, time.UTC).UnixMicro() - pgEpochMicros) / 86_400_000_000
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(b, 4), uint32(int32(days)))
}

// appendDecimal appends v as a binary numeric with display scale
// max(0, -exponent), exactly as pgx encodes it: directly when the coefficient
// has at most 18 digits (every numeric(18,6) does), through tm otherwise.
func appendDecimal(tm *pgtype.Map, b []byte, v decimal.Decimal) ([]byte, error) {
	if v.NumDigits() <= 18 {
		c := v.CoefficientInt64()
		u := uint64(c)
		if c < 0 {
			u = -u
		}
		if out, ok := appendNumeric(b, c < 0, u, v.Exponent()); ok {
			return out, nil
		}
	}
	at := len(b)
	out, err := tm.Encode(pgtype.NumericOID, pgtype.BinaryFormatCode,
		pgtype.Numeric{Int: v.Coefficient(), Exp: v.Exponent(), Valid: true}, binary.BigEndian.AppendUint32(b, 0))
	if err != nil {
		return b[:at], err
	}
	binary.BigEndian.PutUint32(out[at:], uint32(len(out)-at-4))
	return out, nil
}

// appendNumeric appends the binary numeric of (-1 if neg) × coef × 10^exp with
// display scale max(0, -exp): base-10000 digits, most significant first, the
// decimal point on a digit boundary, trailing zero digits dropped. ok is false
// when the exponent is out of the range handled here or aligning the
// coefficient to a digit boundary overflows.
func appendNumeric(b []byte, neg bool, coef uint64, exp int32) (_ []byte, ok bool) {
	if exp < -1000 || exp > 1000 {
		return b, false
	}
	shift := (exp%4 + 4) % 4 // exp-shift is a multiple of 4
	for range shift {
		if coef > math.MaxUint64/10 {
			return b, false
		}
		coef *= 10
	}
	var digits [5]uint16 // least significant first; a uint64 has at most 5 base-10000 digits
	n := 0
	for ; coef > 0; coef /= 10_000 {
		digits[n] = uint16(coef % 10_000)
		n++
	}
	lo := 0
	for lo < n && digits[lo] == 0 {
		lo++
	}
	weight, sign, dscale := 0, uint16(0), 0
	if n > 0 {
		weight = n - 1 + int((exp-shift)/4)
		if neg {
			sign = 0x4000
		}
	}
	if exp < 0 {
		dscale = int(-exp)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(8+2*(n-lo)))
	b = binary.BigEndian.AppendUint16(b, uint16(n-lo))
	b = binary.BigEndian.AppendUint16(b, uint16(int16(weight)))
	b = binary.BigEndian.AppendUint16(b, sign)
	b = binary.BigEndian.AppendUint16(b, uint16(dscale))
	for i := n - 1; i >= lo; i-- {
		b = binary.BigEndian.AppendUint16(b, digits[i])
	}
	return b, true
}
