package pgwire

import (
	"math"
	"strconv"
	"strings"
)

// appendFloat appends a float4 or float8 in text as PostgreSQL's float4out and
// float8out do (extra_float_digits ≥ 1, the default): the shortest text that
// reads back exactly, in fixed notation for decimal exponents from -4 below
// the type's digits (6 for float4, 15 for float8) and in scientific notation
// with a two-digit exponent beyond (1e+300, 1e-05); Infinity, -Infinity, NaN.
// pgx writes every float in fixed notation, 301 digits for 1e300. ok is false
// for another type or the binary format.
func appendFloat(buf []byte, oid uint32, format int16, v any) (out []byte, ok bool) {
	if format != 0 || (oid != oidFloat8 && oid != oidFloat4) {
		return buf, false
	}
	var f float64
	bits, digits := 64, 15
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f, bits, digits = float64(x), 32, 6
	default:
		return buf, false
	}
	switch {
	case math.IsNaN(f):
		return append(buf, "NaN"...), true
	case math.IsInf(f, 1):
		return append(buf, "Infinity"...), true
	case math.IsInf(f, -1):
		return append(buf, "-Infinity"...), true
	}
	sci := strconv.FormatFloat(f, 'e', -1, bits)
	exp, _ := strconv.Atoi(sci[strings.IndexByte(sci, 'e')+1:])
	if f != 0 && (exp < -4 || exp >= digits) {
		return append(buf, sci...), true
	}
	return strconv.AppendFloat(buf, f, 'f', -1, bits), true
}
