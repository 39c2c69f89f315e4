package duckfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// JSON is v ready for encoding/json, for JSON output. Numbers are exact
// (json.Number with DuckDB's digits: a DECIMAL keeps its scale, a HUGEINT all
// its digits); a NaN or infinity, which JSON cannot carry, is the string
// "NaN", "Infinity" or "-Infinity". Dates, times and timestamps are ISO 8601
// (a TIMESTAMPTZ with its offset in the session's zone, a TIMESTAMP without
// one), intervals ISO 8601 durations in PostgreSQL's iso_8601 style
// (P1Y2M3DT4H5M6.5S, each part signed on its own). STRUCTs are objects in
// field order, MAPs objects keyed by the keys' text, UNIONs {tag: value}.
func (f Formatter) JSON(v any, t Type) any {
	if v == nil {
		return nil
	}
	switch t.Kind {
	case Boolean:
		return v
	case Integer, BigInteger, Decimal:
		return json.Number(f.Text(v, t))
	case Float, Double:
		s := f.Text(v, t)
		switch s {
		case "nan":
			return "NaN"
		case "inf":
			return "Infinity"
		case "-inf":
			return "-Infinity"
		}
		return json.Number(s)
	case JSON:
		return json.RawMessage(jsonText(v))
	case Date:
		return f.Text(v, t)
	case Time, TimeTZ:
		tm, ok := v.(time.Time)
		if !ok {
			break
		}
		s := clockText(tm, false)
		if t.Kind == TimeTZ {
			_, off := tm.Zone()
			s += isoOffset(off)
		}
		return s
	case Timestamp, TimestampTZ:
		tm, ok := v.(time.Time)
		if !ok {
			break
		}
		s := f.Text(v, t)
		if s == "infinity" || s == "-infinity" || tm.Year() <= 0 {
			return s
		}
		if t.Kind == Timestamp {
			return ymd(tm) + "T" + clockText(tm, t.Nanos)
		}
		tm = tm.In(f.location())
		_, off := tm.Zone()
		return ymd(tm) + "T" + clockText(tm, false) + isoOffset(off)
	case Interval:
		if iv, ok := v.(duckdb.Interval); ok {
			return isoDuration(iv)
		}
	case List, Array:
		xs, ok := v.([]any)
		if !ok {
			break
		}
		out := make([]any, len(xs))
		for i, x := range xs {
			out[i] = f.JSON(x, *t.Elem)
		}
		return out
	case Struct:
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		obj := make(Object, len(t.Fields))
		for i, fl := range t.Fields {
			obj[i] = Member{fl.Name, f.JSON(m[fl.Name], fl.Type)}
		}
		return obj
	case Map:
		m, ok := v.(duckdb.OrderedMap)
		if !ok {
			break
		}
		keys, vals := m.Keys(), m.Values()
		obj := make(Object, len(keys))
		for i := range keys {
			obj[i] = Member{f.Text(keys[i], *t.Key), f.JSON(vals[i], *t.Value)}
		}
		return obj
	case Union:
		if u, ok := v.(duckdb.Union); ok {
			return Object{{u.Tag, f.JSON(u.Value, memberType(t, u.Tag))}}
		}
	case Unknown:
		return v
	}
	return f.Text(v, t)
}

// Object is a JSON object that keeps its members' order.
type Object []Member

// Member is one name and value of an Object.
type Member struct {
	Name  string
	Value any
}

// MarshalJSON writes the members in order.
func (o Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.Name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// isoOffset is an offset as ISO 8601 writes it: Z, or ±HH:MM[:SS].
func isoOffset(seconds int) string {
	if seconds == 0 {
		return "Z"
	}
	s := offsetText(seconds)
	if len(s) == 3 {
		s += ":00"
	}
	return s
}

// isoDuration is an interval in PostgreSQL's iso_8601 IntervalStyle.
func isoDuration(iv duckdb.Interval) string {
	var b strings.Builder
	b.WriteByte('P')
	part := func(n int64, unit byte) {
		if n != 0 {
			fmt.Fprintf(&b, "%d%c", n, unit)
		}
	}
	part(int64(iv.Months/12), 'Y')
	part(int64(iv.Months%12), 'M')
	part(int64(iv.Days), 'D')
	if iv.Micros != 0 {
		b.WriteByte('T')
		const us = int64(time.Second / time.Microsecond)
		h := iv.Micros / (3600 * us)
		m := iv.Micros / (60 * us) % 60
		rest := iv.Micros % (60 * us)
		part(h, 'H')
		part(m, 'M')
		if rest != 0 {
			secs, frac, sign := rest/us, rest%us, ""
			if rest < 0 {
				secs, frac, sign = -secs, -frac, "-"
			}
			fmt.Fprintf(&b, "%s%d", sign, secs)
			if frac != 0 {
				b.WriteString("." + strings.TrimRight(fmt.Sprintf("%06d", frac), "0"))
			}
			b.WriteByte('S')
		}
	}
	if b.Len() == 1 {
		return "PT0S"
	}
	return b.String()
}
