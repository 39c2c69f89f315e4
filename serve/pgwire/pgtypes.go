package pgwire

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5/pgtype"
)

// PostgreSQL type OIDs of the columns we serve.
const (
	oidBool        = 16
	oidBytea       = 17
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidOID         = 26
	oidFloat4      = 700
	oidFloat8      = 701
	oidDate        = 1082
	oidTime        = 1083
	oidTimestamp   = 1114
	oidTimestamptz = 1184
	oidInterval    = 1186
	oidNumeric     = 1700
	oidUUID        = 2950
)

// pgColumn is one result column as PostgreSQL describes it.
type pgColumn struct {
	name   string
	oid    uint32
	size   int16
	typmod int32
	duck   string // the DuckDB type name
}

// pgTypeOf maps a DuckDB type name to a PostgreSQL type. Anything without a
// mapping (LIST, STRUCT, MAP, …) is served as text.
func pgTypeOf(duck string) (oid uint32, size int16, typmod int32) {
	name := strings.ToUpper(strings.TrimSpace(duck))
	if strings.HasPrefix(name, "DECIMAL") || strings.HasPrefix(name, "NUMERIC") {
		typmod = -1
		var p, s int
		if n, _ := fmt.Sscanf(name[strings.Index(name+"(", "("):], "(%d,%d)", &p, &s); n == 2 {
			typmod = int32(p<<16|s) + 4
		}
		return oidNumeric, -1, typmod
	}
	switch name {
	case "BOOLEAN", "BOOL":
		return oidBool, 1, -1
	case "TINYINT", "SMALLINT", "UTINYINT":
		return oidInt2, 2, -1
	case "INTEGER", "USMALLINT":
		return oidInt4, 4, -1
	case "BIGINT", "UINTEGER":
		return oidInt8, 8, -1
	case "UBIGINT", "HUGEINT", "UHUGEINT":
		return oidNumeric, -1, -1
	case "FLOAT", "REAL":
		return oidFloat4, 4, -1
	case "DOUBLE":
		return oidFloat8, 8, -1
	case "DATE":
		return oidDate, 4, -1
	case "TIME":
		return oidTime, 8, -1
	case "TIMESTAMP", "TIMESTAMP_NS", "TIMESTAMP_MS", "TIMESTAMP_S":
		return oidTimestamp, 8, -1
	case "TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE":
		return oidTimestamptz, 8, -1
	case "INTERVAL":
		return oidInterval, 16, -1
	case "UUID":
		return oidUUID, 16, -1
	case "BLOB":
		return oidBytea, -1, -1
	}
	return oidText, -1, -1
}

// formatType is PostgreSQL's format_type for a column (psql's \d "Type").
func formatType(oid uint32, typmod int32) string {
	switch oid {
	case oidBool:
		return "boolean"
	case oidBytea:
		return "bytea"
	case oidInt2:
		return "smallint"
	case oidInt4:
		return "integer"
	case oidInt8:
		return "bigint"
	case oidFloat4:
		return "real"
	case oidFloat8:
		return "double precision"
	case oidDate:
		return "date"
	case oidTime:
		return "time without time zone"
	case oidTimestamp:
		return "timestamp without time zone"
	case oidTimestamptz:
		return "timestamp with time zone"
	case oidInterval:
		return "interval"
	case oidUUID:
		return "uuid"
	case oidNumeric:
		if typmod >= 4 {
			t := typmod - 4
			return fmt.Sprintf("numeric(%d,%d)", t>>16, t&0xffff)
		}
		return "numeric"
	}
	return "text"
}

func columnsOf(cts []*sql.ColumnType) []pgColumn {
	out := make([]pgColumn, len(cts))
	for i, ct := range cts {
		oid, size, mod := pgTypeOf(ct.DatabaseTypeName())
		if oid == oidNumeric && mod < 0 {
			if p, s, ok := ct.DecimalSize(); ok {
				mod = int32(p<<16|s) + 4
			}
		}
		out[i] = pgColumn{name: ct.Name(), oid: oid, size: size, typmod: mod, duck: ct.DatabaseTypeName()}
	}
	return out
}

// pgValue converts a DuckDB driver value to one pgtype encodes for oid.
func pgValue(oid uint32, v any) any {
	if v == nil {
		return nil
	}
	switch oid {
	case oidNumeric:
		switch x := v.(type) {
		case duckdb.Decimal:
			return pgtype.Numeric{Int: new(big.Int).Set(x.Value), Exp: -int32(x.Scale), Valid: true}
		case *big.Int:
			return pgtype.Numeric{Int: x, Valid: true}
		case uint64:
			return pgtype.Numeric{Int: new(big.Int).SetUint64(x), Valid: true}
		}
	case oidInt2:
		switch x := v.(type) {
		case int8:
			return int16(x)
		case uint8:
			return int16(x)
		}
	case oidInt4:
		if x, ok := v.(uint16); ok {
			return int32(x)
		}
	case oidInt8:
		if x, ok := v.(uint32); ok {
			return int64(x)
		}
	case oidTimestamptz, oidTimestamp, oidDate:
		if t, ok := v.(time.Time); ok {
			return t.UTC()
		}
	case oidText:
		switch x := v.(type) {
		case string:
			return x
		case []byte:
			return string(x)
		case []any:
			return arrayText(x)
		default:
			return fmt.Sprint(x)
		}
	case oidInterval:
		if x, ok := v.(duckdb.Interval); ok {
			return pgtype.Interval{Months: x.Months, Days: x.Days, Microseconds: x.Micros, Valid: true}
		}
	case oidUUID:
		switch x := v.(type) {
		case []byte:
			if len(x) == 16 {
				var u [16]byte
				copy(u[:], x)
				return pgtype.UUID{Bytes: u, Valid: true}
			}
		case fmt.Stringer:
			return x.String()
		}
	}
	return v
}

// decodeParam turns a bound parameter into an engine argument; loc is the
// session's time zone, in which a wall time is read (pgtime.go).
func decodeParam(m *pgtype.Map, loc *time.Location, oid uint32, format int16, src []byte) (any, error) {
	if src == nil {
		return nil, nil
	}
	if v, ok, err := decodeTimeParam(m, loc, oid, format, src); ok {
		return v, err
	}
	if oid == 0 || oid == oidText || oid == 1043 || oid == 705 { // unspecified, text, varchar, unknown
		if format == pgtype.TextFormatCode || oid == 0 {
			return string(src), nil
		}
	}
	if _, ok := m.TypeForOID(oid); !ok {
		if format == pgtype.TextFormatCode {
			return string(src), nil
		}
		return nil, fmt.Errorf("parameter of type oid %d in binary format is not supported", oid)
	}
	var v any
	if err := m.Scan(oid, format, src, &v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case pgtype.Numeric:
		b, err := x.MarshalJSON()
		if err != nil {
			return nil, err
		}
		return strings.Trim(string(b), `"`), nil
	case time.Time:
		return x, nil
	case [16]byte:
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16]), nil
	}
	return v, nil
}

// arrayText is a DuckDB LIST as PostgreSQL writes an array: {a,"b c",NULL},
// nested lists as {{1,2},{3,4}}, the empty list as {}.
func arrayText(list []any) string {
	var b strings.Builder
	writeArray(&b, list)
	return b.String()
}

func writeArray(b *strings.Builder, list []any) {
	b.WriteByte('{')
	for i, v := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		switch x := v.(type) {
		case nil:
			b.WriteString("NULL")
		case []any:
			writeArray(b, x)
		case string:
			writeArrayElement(b, x)
		default:
			writeArrayElement(b, fmt.Sprint(x))
		}
	}
	b.WriteByte('}')
}

// writeArrayElement writes one element, double-quoted where PostgreSQL's
// array_out quotes it: empty, NULL in any case, or holding a delimiter,
// brace, quote, backslash or white space; a quote and a backslash inside
// quotes are escaped with a backslash.
func writeArrayElement(b *strings.Builder, s string) {
	if s != "" && !strings.EqualFold(s, "NULL") && !strings.ContainsAny(s, "{},\"\\ \t\n\r\v\f") {
		b.WriteString(s)
		return
	}
	b.WriteByte('"')
	for _, r := range s {
		if r == '"' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
}

// appendText appends a string of a text column: its bytes, in text and in
// binary alike, as pgtype writes them, without boxing the string again.
func appendText(buf []byte, oid uint32, v any) (out []byte, ok bool) {
	s, isString := v.(string)
	if oid != oidText || !isString {
		return buf, false
	}
	return append(buf, s...), true
}

// appendDecimal appends a DECIMAL that fits an int64 (every DECIMAL up to 18
// digits, such as a reading's value) as numeric text — its digits with the
// column's scale, as PostgreSQL prints a numeric(p,s) — without the big.Int
// text pgtype goes through; ok is false for anything else.
func appendDecimal(buf []byte, oid uint32, format int16, v any) (out []byte, ok bool) {
	d, isDecimal := v.(duckdb.Decimal)
	if oid != oidNumeric || format != pgtype.TextFormatCode || !isDecimal || d.Value == nil || !d.Value.IsInt64() {
		return buf, false
	}
	n, scale := d.Value.Int64(), int(d.Scale)
	if n < 0 {
		buf = append(buf, '-')
	}
	var digits [24]byte
	abs := strconv.AppendUint(digits[:0], absInt64(n), 10)
	if scale == 0 {
		return append(buf, abs...), true
	}
	if len(abs) <= scale {
		buf = append(buf, "0."...)
		for range scale - len(abs) {
			buf = append(buf, '0')
		}
		return append(buf, abs...), true
	}
	point := len(abs) - scale
	buf = append(append(buf, abs[:point]...), '.')
	return append(buf, abs[point:]...), true
}

// appendDecimalBinary appends a DECIMAL that fits an int64 in PostgreSQL's
// binary numeric format — ndigits, weight, sign and dscale, then base-10000
// digits — exactly as pgtype encodes the same value (its fraction padded to
// whole base-10000 digits, trailing zero digits kept), without the big.Int
// arithmetic pgtype does per value; ok is false for anything else.
func appendDecimalBinary(buf []byte, oid uint32, format int16, v any) (out []byte, ok bool) {
	d, isDecimal := v.(duckdb.Decimal)
	if oid != oidNumeric || format != pgtype.BinaryFormatCode || !isDecimal || d.Value == nil || !d.Value.IsInt64() {
		return buf, false
	}
	n := d.Value.Int64()
	scale := int(d.Scale)
	pad := (4 - scale%4) % 4 // zeros that make the fraction whole base-10000 digits
	var text [64]byte
	digits := strconv.AppendUint(text[:0], absInt64(n), 10)
	for range pad {
		digits = append(digits, '0')
	}
	fracLen := scale + pad
	var whole []byte
	if len(digits) > fracLen {
		whole = digits[:len(digits)-fracLen]
	}
	frac := digits[len(digits)-min(len(digits), fracLen):]
	if n == 0 {
		whole = nil
	}
	wholeGroups := (len(whole) + 3) / 4
	fracGroups := fracLen / 4
	buf = binary.BigEndian.AppendUint16(buf, uint16(wholeGroups+fracGroups))
	weight := -1
	if wholeGroups > 0 {
		weight = wholeGroups - 1
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	var sign uint16
	if n < 0 {
		sign = 0x4000
	}
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, uint16(scale))
	// whole digits, grouped by four from the point; the first group may be short
	for end := len(whole) - (wholeGroups-1)*4; len(whole) > 0; end = 4 {
		buf = binary.BigEndian.AppendUint16(buf, base10000(whole[:end]))
		whole = whole[end:]
	}
	// the fraction, left-padded with zeros to fracGroups×4 digits
	lead := fracLen - len(frac)
	for g := range fracGroups {
		var group uint16
		for i := g * 4; i < g*4+4; i++ {
			group *= 10
			if i >= lead {
				group += uint16(frac[i-lead] - '0')
			}
		}
		buf = binary.BigEndian.AppendUint16(buf, group)
	}
	return buf, true
}

// base10000 is the value of up to four decimal digits.
func base10000(digits []byte) uint16 {
	var v uint16
	for _, c := range digits {
		v = v*10 + uint16(c-'0')
	}
	return v
}

// absInt64 is |n|, also for math.MinInt64.
func absInt64(n int64) uint64 {
	if n < 0 {
		return uint64(-(n + 1)) + 1
	}
	return uint64(n)
}
