package duckfmt

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/shopspring/decimal"
)

// Formatter renders values for one session.
type Formatter struct {
	// Location is the session's TimeZone, in which DuckDB prints a
	// TIMESTAMPTZ; nil means UTC.
	Location *time.Location
}

// Text is v as DuckDB casts it to VARCHAR; NULL is "NULL".
func (f Formatter) Text(v any, t Type) string {
	if v == nil {
		return "NULL"
	}
	switch t.Kind {
	case Boolean, Integer, Varchar, Bit:
		return fmt.Sprint(v)
	case BigInteger:
		switch x := v.(type) {
		case *big.Int:
			return x.String()
		case decimal.Decimal: // a HUGEINT that came through Arrow's decimal128
			return x.String()
		}
	case Decimal:
		if s, ok := decimalText(v, t.Scale); ok {
			return s
		}
	case Float:
		if x, ok := v.(float32); ok {
			return floatText(float64(x), 32)
		}
	case Double:
		if x, ok := v.(float64); ok {
			return floatText(x, 64)
		}
	case Blob:
		if b, ok := v.([]byte); ok {
			return blobText(b)
		}
	case UUID:
		if b, ok := v.([]byte); ok && len(b) == 16 {
			return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
		}
	case JSON:
		return jsonText(v)
	case Date:
		if tm, ok := v.(time.Time); ok {
			return dateText(tm)
		}
	case Time:
		if tm, ok := v.(time.Time); ok {
			return clockText(tm, false)
		}
	case TimeTZ:
		if tm, ok := v.(time.Time); ok {
			_, off := tm.Zone()
			return clockText(tm, false) + offsetText(off)
		}
	case Timestamp:
		if tm, ok := v.(time.Time); ok {
			return timestampText(tm.UTC(), t.Nanos, false)
		}
	case TimestampTZ:
		if tm, ok := v.(time.Time); ok {
			return timestampText(tm.In(f.location()), false, true)
		}
	case Interval:
		if iv, ok := v.(duckdb.Interval); ok {
			return intervalText(iv)
		}
	case List, Array:
		if xs, ok := v.([]any); ok {
			parts := make([]string, len(xs))
			for i, x := range xs {
				if t.Kind == Array { // DuckDB 1.5 quotes nothing inside a fixed-size array
					parts[i] = f.Text(x, *t.Elem)
				} else {
					parts[i] = f.nestedText(x, *t.Elem)
				}
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
	case Struct:
		if m, ok := v.(map[string]any); ok {
			parts := make([]string, len(t.Fields))
			for i, fl := range t.Fields {
				parts[i] = quoteNested(fl.Name) + ": " + f.nestedText(m[fl.Name], fl.Type)
			}
			return "{" + strings.Join(parts, ", ") + "}"
		}
	case Map:
		if m, ok := v.(duckdb.OrderedMap); ok {
			keys, vals := m.Keys(), m.Values()
			parts := make([]string, len(keys))
			for i := range keys {
				parts[i] = f.nestedText(keys[i], *t.Key) + "=" + f.nestedText(vals[i], *t.Value)
			}
			return "{" + strings.Join(parts, ", ") + "}"
		}
	case Union:
		if u, ok := v.(duckdb.Union); ok {
			return f.Text(u.Value, memberType(t, u.Tag))
		}
	}
	if s, ok := v.(fmt.Stringer); ok {
		return s.String()
	}
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}

func (f Formatter) location() *time.Location {
	if f.Location == nil {
		return time.UTC
	}
	return f.Location
}

// nestedText is a value inside a LIST, STRUCT or MAP: containers as they
// are, scalars quoted where DuckDB quotes them.
func (f Formatter) nestedText(v any, t Type) string {
	if v == nil {
		return "NULL"
	}
	s := f.Text(v, t)
	if t.nested() {
		return s
	}
	if needsQuotes(s) {
		return quoteNested(s)
	}
	return s
}

func memberType(t Type, tag string) Type {
	for _, fl := range t.Fields {
		if fl.Name == tag {
			return fl.Type
		}
	}
	return Type{Kind: Unknown}
}

// needsQuotes is DuckDB's rule for a scalar inside a nested value
// (NestedToVarcharCast): empty, surrounding space, the word null, or one of
// the characters that delimit nested values.
func needsQuotes(s string) bool {
	if s == "" || isSpace(s[0]) || len(s) >= 2 && isSpace(s[len(s)-1]) || strings.EqualFold(s, "null") {
		return true
	}
	return strings.ContainsAny(s, `"'(),:=[]{}`)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// quoteNested quotes s with ', escaping ' and \ with a backslash.
func quoteNested(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}

func decimalText(v any, scale int) (string, bool) {
	switch x := v.(type) {
	case decimal.Decimal:
		return x.StringFixed(int32(scale)), true
	case duckdb.Decimal:
		return decimal.NewFromBigInt(x.Value, -int32(x.Scale)).StringFixed(int32(x.Scale)), true
	}
	return "", false
}

// floatText is DuckDB's shortest round-trip form: fixed notation with at
// least one decimal for exponents in [-4, 16), else d.ddde±XX.
func floatText(x float64, bits int) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(x, 'e', -1, bits)
	mant, exp, _ := strings.Cut(e, "e")
	n, _ := strconv.Atoi(exp)
	if n >= -4 && n < 16 {
		s := strconv.FormatFloat(x, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	sign := "+"
	if n < 0 {
		sign, n = "-", -n
	}
	return fmt.Sprintf("%se%s%02d", mant, sign, n)
}

// blobText is printable ASCII as itself and every other byte (and the
// quotes and backslash) as \xHH.
func blobText(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		if c >= 32 && c <= 126 && c != '\\' && c != '\'' && c != '"' {
			s.WriteByte(c)
		} else {
			fmt.Fprintf(&s, `\x%02X`, c)
		}
	}
	return s.String()
}

// jsonText is a JSON value's text. duckdb-go hands JSON over decoded
// (objects as maps, numbers as float64), so the text is re-encoded from that;
// a json.RawMessage is printed as it is.
func jsonText(v any) string {
	switch x := v.(type) {
	case json.RawMessage:
		return string(x)
	case string:
		b, _ := json.Marshal(x)
		return string(b)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// DuckDB's infinities: the largest and the smallest value of the storage.
const (
	dateInfinity = math.MaxInt32
	tsInfinity   = math.MaxInt64
)

func dateText(t time.Time) string {
	switch days := t.Unix() / 86400; days {
	case dateInfinity:
		return "infinity"
	case -dateInfinity:
		return "-infinity"
	}
	return ymd(t)
}

// ymd is the date part: years with at least four digits, (BC) before year 1.
func ymd(t time.Time) string {
	y, m, d := t.Date()
	if y <= 0 {
		return fmt.Sprintf("%04d-%02d-%02d (BC)", 1-y, m, d)
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, m, d)
}

// clockText is HH:MM:SS with the fraction's trailing zeros dropped.
func clockText(t time.Time, nanos bool) string {
	s := fmt.Sprintf("%02d:%02d:%02d", t.Hour(), t.Minute(), t.Second())
	frac := t.Nanosecond()
	digits := 9
	if !nanos {
		frac /= 1000
		digits = 6
	}
	if frac == 0 {
		return s
	}
	return s + "." + strings.TrimRight(fmt.Sprintf("%0*d", digits, frac), "0")
}

func timestampText(t time.Time, nanos, zone bool) string {
	switch {
	case t.UnixMicro() == tsInfinity || nanos && t.UnixNano() == tsInfinity:
		return "infinity"
	case t.UnixMicro() == -tsInfinity || nanos && t.UnixNano() == -tsInfinity:
		return "-infinity"
	}
	s := ymd(t) + " " + clockText(t, nanos)
	if zone {
		_, off := t.Zone()
		s += offsetText(off)
	}
	return s
}

// offsetText is a UTC offset as DuckDB prints it: +HH, +HH:MM or +HH:MM:SS.
func offsetText(seconds int) string {
	sign := "+"
	if seconds < 0 {
		sign, seconds = "-", -seconds
	}
	h, m, s := seconds/3600, seconds/60%60, seconds%60
	switch {
	case s != 0:
		return fmt.Sprintf("%s%02d:%02d:%02d", sign, h, m, s)
	case m != 0:
		return fmt.Sprintf("%s%02d:%02d", sign, h, m)
	}
	return fmt.Sprintf("%s%02d", sign, h)
}

// intervalText is DuckDB's interval text: "1 year 2 months 3 days 04:05:06.5",
// "00:15:00", "-1 day 02:00:00".
func intervalText(iv duckdb.Interval) string {
	var parts []string
	unit := func(n int64, name string) {
		if n == 0 {
			return
		}
		if n != 1 && n != -1 {
			name += "s"
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, name))
	}
	unit(int64(iv.Months/12), "year")
	unit(int64(iv.Months%12), "month")
	unit(int64(iv.Days), "day")
	if iv.Micros != 0 || len(parts) == 0 {
		parts = append(parts, durationText(iv.Micros))
	}
	return strings.Join(parts, " ")
}

// durationText is microseconds as [-]HH:MM:SS[.ffffff]; hours may exceed 24.
func durationText(micros int64) string {
	sign := ""
	if micros < 0 {
		sign, micros = "-", -micros
	}
	const us = int64(time.Second / time.Microsecond)
	secs, frac := micros/us, micros%us
	s := fmt.Sprintf("%s%02d:%02d:%02d", sign, secs/3600, secs/60%60, secs%60)
	if frac != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
	}
	return s
}
