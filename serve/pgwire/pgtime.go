package pgwire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5/pgtype"
)

// Dates, times and intervals cross the wire as PostgreSQL sends and reads
// them, in the session's time zone (the engine's, which SHOW TimeZone and the
// TimeZone ParameterStatus report):
//
//   - a timestamptz is written in text at the session zone's offset
//     ("2025-10-24 00:00:00+02"), as PostgreSQL writes it;
//   - ±infinity (DuckDB keeps them as the extreme values of its types) is sent
//     as PostgreSQL sends it: "infinity" in text, its int64/int32 sentinel in
//     binary — never as a date in the year 294247;
//   - a timestamp parameter (OID 1114, what psycopg and JDBC bind a naive
//     datetime as) is a wall time, which the engine reads in the session's
//     zone exactly as it reads the same literal; a date parameter likewise,
//     and a timestamptz parameter written without an offset;
//   - time and interval in text are PostgreSQL's spellings ("06:00:00",
//     "45 days 00:45:00", "1 mon 2 days").

// infinity reports which infinity a DuckDB timestamp or date value is (Finite
// for every other value). DuckDB stores timestamp ±infinity as ±MaxInt64
// microseconds and date ±infinity as ±MaxInt32 days, which duckdb-go hands
// over as the times those counts name.
func infinity(oid uint32, t time.Time) pgtype.InfinityModifier {
	var n, top int64
	switch oid {
	case oidTimestamp, oidTimestamptz:
		n, top = t.UnixMicro(), math.MaxInt64
	case oidDate:
		n, top = t.Unix()/86400, math.MaxInt32
	default:
		return pgtype.Finite
	}
	switch n {
	case top:
		return pgtype.Infinity
	case -top:
		return pgtype.NegativeInfinity
	}
	return pgtype.Finite
}

// appendTime appends a date/time value of column oid as PostgreSQL writes
// it to buf; ok is false for a value it leaves to pgtype's encoding.
func appendTime(buf []byte, m *pgtype.Map, oid uint32, format int16, v any, loc *time.Location) (out []byte, ok bool, err error) {
	switch x := v.(type) {
	case time.Time:
		if inf := infinity(oid, x); inf != pgtype.Finite {
			var val any
			switch oid {
			case oidTimestamptz:
				val = pgtype.Timestamptz{InfinityModifier: inf, Valid: true}
			case oidTimestamp:
				val = pgtype.Timestamp{InfinityModifier: inf, Valid: true}
			default:
				val = pgtype.Date{InfinityModifier: inf, Valid: true}
			}
			out, err := m.Encode(oid, format, val, buf)
			return out, true, err
		}
		if format != pgtype.TextFormatCode {
			return appendTimestampBinary(buf, oid, x)
		}
		switch oid {
		case oidTimestamptz:
			return appendTimestamptz(buf, x.In(loc)), true, nil
		case oidTime:
			x = x.UTC()
			return appendClock(buf, int64(x.Hour()), x.Minute(), x.Second(), x.Nanosecond()/1000), true, nil
		}
	case duckdb.Interval:
		if oid == oidInterval && format == pgtype.TextFormatCode {
			return append(buf, formatInterval(x.Months, x.Days, x.Micros)...), true, nil
		}
	}
	return buf, false, nil
}

// microsFromUnixEpochToY2K is PostgreSQL's epoch, 2000-01-01 00:00:00 UTC,
// in microseconds since the Unix epoch.
const microsFromUnixEpochToY2K = 946684800 * 1_000_000

// appendTimestampBinary appends a finite timestamptz or timestamp (a UTC
// time.Time, as DuckDB's rows carry both) in PostgreSQL's binary format:
// microseconds since 2000-01-01 as a big-endian int64, as pgtype writes it;
// ok is false for another column type.
func appendTimestampBinary(buf []byte, oid uint32, t time.Time) (out []byte, ok bool, err error) {
	if oid != oidTimestamptz && oid != oidTimestamp {
		return buf, false, nil
	}
	t = t.UTC()
	micros := t.Unix()*1_000_000 + int64(t.Nanosecond())/1000
	return binary.BigEndian.AppendUint64(buf, uint64(micros-microsFromUnixEpochToY2K)), true, nil
}

// appendTimestamptz appends PostgreSQL's ISO output of an instant in t's zone:
// the offset as ±HH, with :MM and :SS only where the zone has them, and BC
// years as PostgreSQL counts them (no year 0). A result's every timestamptz
// goes through here, so it appends digits without fmt, and looks the zone up
// once: the wall time is read from the instant moved by the offset, in UTC,
// where time.Time's fields need no zone lookup of their own.
func appendTimestamptz(buf []byte, t time.Time) []byte {
	_, off := t.Zone()
	wall := t.UTC().Add(time.Duration(off) * time.Second)
	y, month, day := wall.Date()
	h, m, sec := wall.Clock()
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	buf = appendDigits(buf, int64(y), 4)
	buf = append(buf, '-')
	buf = appendDigits(buf, int64(month), 2)
	buf = append(buf, '-')
	buf = appendDigits(buf, int64(day), 2)
	buf = append(buf, ' ')
	buf = appendClock(buf, int64(h), m, sec, wall.Nanosecond()/1000)
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	buf = appendDigits(append(buf, sign), int64(off/3600), 2)
	if off%3600 != 0 {
		buf = appendDigits(append(buf, ':'), int64(off%3600/60), 2)
		if off%60 != 0 {
			buf = appendDigits(append(buf, ':'), int64(off%60), 2)
		}
	}
	if bc {
		buf = append(buf, " BC"...)
	}
	return buf
}

// appendClock appends hh:mm:ss and the fraction of us microseconds
// (appendFraction).
func appendClock(buf []byte, h int64, m, s, us int) []byte {
	buf = appendDigits(buf, h, 2)
	buf = appendDigits(append(buf, ':'), int64(m), 2)
	buf = appendDigits(append(buf, ':'), int64(s), 2)
	return appendFraction(buf, us)
}

// appendDigits appends n ≥ 0 in decimal, zero-padded to at least width digits.
func appendDigits(buf []byte, n int64, width int) []byte {
	var d [20]byte
	i := len(d)
	for n >= 10 || len(d)-i < width-1 {
		i--
		d[i] = byte('0' + n%10)
		n /= 10
	}
	i--
	d[i] = byte('0' + n)
	return append(buf, d[i:]...)
}

// appendFraction appends ".ffffff" of us microseconds without trailing
// zeros, nothing for 0.
func appendFraction(buf []byte, us int) []byte {
	if us == 0 {
		return buf
	}
	buf = appendDigits(append(buf, '.'), int64(us), 6)
	for buf[len(buf)-1] == '0' {
		buf = buf[:len(buf)-1]
	}
	return buf
}

// formatInterval is PostgreSQL's interval output in IntervalStyle postgres
// (EncodeInterval, INTSTYLE_POSTGRES): "1 year 2 mons 3 days 04:05:06.5", a
// unit plural unless 1, a "+" before a positive part that follows a negative
// one, the time part present when non-zero or when nothing else is.
func formatInterval(months, days int32, micros int64) string {
	var b strings.Builder
	zero, negBefore := true, false
	part := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if !zero {
			b.WriteByte(' ')
		}
		if negBefore && v > 0 {
			b.WriteByte('+')
		}
		b.WriteString(fmt.Sprintf("%d %s", v, unit))
		if v != 1 {
			b.WriteByte('s')
		}
		negBefore, zero = v < 0, false
	}
	part(int64(months/12), "year")
	part(int64(months%12), "mon")
	part(int64(days), "day")
	if zero || micros != 0 {
		if !zero {
			b.WriteByte(' ')
		}
		switch {
		case micros < 0:
			b.WriteByte('-')
			micros = -micros
		case negBefore:
			b.WriteByte('+')
		}
		h, rest := micros/3_600_000_000, micros%3_600_000_000
		b.Write(appendClock(nil, h, int(rest/60_000_000), int(rest%60_000_000/1_000_000), int(rest%1_000_000)))
	}
	return b.String()
}

// decodeTimeParam reads a date/time parameter as PostgreSQL does; ok is false
// for any other type. A wall time (timestamp, date, a timestamptz text
// without an offset) keeps DuckDB's matching type, so the engine reads it in
// the session's zone exactly as it reads the same literal; ±infinity goes as
// its text, which DuckDB casts to its own infinity.
func decodeTimeParam(m *pgtype.Map, loc *time.Location, oid uint32, format int16, src []byte) (v any, ok bool, err error) {
	switch oid {
	case oidTimestamp:
		var ts pgtype.Timestamp
		if err := m.Scan(oid, format, src, &ts); err != nil {
			return nil, true, err
		}
		if ts.InfinityModifier != pgtype.Finite {
			return ts.InfinityModifier.String(), true, nil
		}
		return duckdb.Typed(ts.Time, duckdb.TYPE_TIMESTAMP), true, nil
	case oidDate:
		var d pgtype.Date
		if err := m.Scan(oid, format, src, &d); err != nil {
			return nil, true, err
		}
		if d.InfinityModifier != pgtype.Finite {
			return d.InfinityModifier.String(), true, nil
		}
		return duckdb.Typed(d.Time, duckdb.TYPE_DATE), true, nil
	case oidTimestamptz:
		var ts pgtype.Timestamptz
		if err := m.Scan(oid, format, src, &ts); err != nil {
			if format != pgtype.TextFormatCode {
				return nil, true, err
			}
			// No offset written: a wall time of the session's zone.
			var wall pgtype.Timestamp
			if m.Scan(oidTimestamp, format, src, &wall) != nil {
				return nil, true, err
			}
			if wall.InfinityModifier != pgtype.Finite {
				return wall.InfinityModifier.String(), true, nil
			}
			w := wall.Time
			return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc), true, nil
		}
		if ts.InfinityModifier != pgtype.Finite {
			return ts.InfinityModifier.String(), true, nil
		}
		return ts.Time, true, nil
	}
	return nil, false, nil
}
