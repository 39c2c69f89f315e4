// Package duckfmt renders the Go values that duckdb-go and the engine hand out
// as the text DuckDB itself prints for them (its cast to VARCHAR), given the
// column's DuckDB type name. A driver value alone cannot say how it prints: a
// TIMESTAMP and a TIMESTAMPTZ are both a time.Time, a DECIMAL(18,6) holding
// 1.5 must print 1.500000, a TIME arrives as a date in year 1, and a STRUCT's
// field order lives only in its type. Printing the Go value instead shows a
// local wall-clock time labelled UTC, drops a decimal's scale, or prints
// {0 0 900000000} for fifteen minutes — wrong values that raise no error.
//
// Text follows DuckDB 1.5's casts exactly (TestTextMatchesDuckDB compares it
// with DuckDB's own CAST(… AS VARCHAR) over generated values of every type);
// JSON gives the value to encode in JSON output: exact numbers, ISO 8601 times
// and durations.
//
//	t := duckfmt.ParseType(col.DatabaseTypeName())
//	f := duckfmt.Formatter{Location: time.UTC} // the session's TimeZone
//	fmt.Println(f.Text(v, t))
package duckfmt

import (
	"strconv"
	"strings"
)

// Kind is the family of a DuckDB type, as far as printing cares.
type Kind uint8

const (
	Unknown Kind = iota
	Boolean
	Integer // TINYINT … UBIGINT
	BigInteger
	Decimal
	Float
	Double
	Varchar // VARCHAR, ENUM and other text
	Blob
	UUID
	Bit
	JSON
	Date
	Time
	TimeTZ
	Timestamp // TIMESTAMP, TIMESTAMP_S, TIMESTAMP_MS, TIMESTAMP_NS: wall-clock time, no zone
	TimestampTZ
	Interval
	List
	Array
	Struct
	Map
	Union
)

// Type is a parsed DuckDB type name (sql.ColumnType.DatabaseTypeName, e.g.
// "DECIMAL(18,6)", "TIMESTAMPTZ[]", `STRUCT("a" INTEGER, "b" VARCHAR[])`).
type Type struct {
	Kind   Kind
	Name   string // the name as given
	Scale  int    // DECIMAL
	Nanos  bool   // TIMESTAMP_NS: nine fractional digits
	Elem   *Type  // LIST, ARRAY
	Key    *Type  // MAP
	Value  *Type  // MAP
	Fields []Field
}

// Field is a member of a STRUCT or UNION, in declaration order.
type Field struct {
	Name string
	Type Type
}

// Numeric reports whether values of t are numbers (right-aligned in tables).
func (t Type) Numeric() bool {
	switch t.Kind {
	case Integer, BigInteger, Decimal, Float, Double:
		return true
	}
	return false
}

// Temporal reports whether values of t are dates or instants (a time axis).
func (t Type) Temporal() bool {
	return t.Kind == Date || t.Kind == Timestamp || t.Kind == TimestampTZ
}

// nested reports whether t is a container, whose text is never quoted when it
// appears inside another container.
func (t Type) nested() bool {
	switch t.Kind {
	case List, Array, Struct, Map, JSON:
		return true
	}
	return false
}

var scalarKinds = map[string]Kind{
	"BOOLEAN": Boolean, "BOOL": Boolean,
	"TINYINT": Integer, "SMALLINT": Integer, "INTEGER": Integer, "INT": Integer, "BIGINT": Integer,
	"UTINYINT": Integer, "USMALLINT": Integer, "UINTEGER": Integer, "UBIGINT": Integer,
	"HUGEINT": BigInteger, "UHUGEINT": BigInteger, "BIGNUM": BigInteger, "VARINT": BigInteger,
	"FLOAT": Float, "REAL": Float, "DOUBLE": Double,
	"VARCHAR": Varchar, "ENUM": Varchar, "TEXT": Varchar,
	"BLOB": Blob, "UUID": UUID, "BIT": Bit, "JSON": JSON,
	"DATE": Date, "TIME": Time, "TIMETZ": TimeTZ, "TIME WITH TIME ZONE": TimeTZ,
	"TIMESTAMP": Timestamp, "TIMESTAMP_S": Timestamp, "TIMESTAMP_MS": Timestamp, "TIMESTAMP_NS": Timestamp,
	"TIMESTAMPTZ": TimestampTZ, "TIMESTAMP WITH TIME ZONE": TimestampTZ,
	"INTERVAL": Interval,
}

// ParseType parses a DuckDB type name. A name it does not know parses as
// Unknown, whose values print with Go's default formatting.
func ParseType(name string) Type {
	p := typeParser{s: name}
	t := p.parse()
	t.Name = name
	return t
}

type typeParser struct {
	s string
	i int
}

func (p *typeParser) parse() Type {
	t := p.base()
	for {
		p.space()
		if !p.eat('[') {
			return t
		}
		j := strings.IndexByte(p.s[p.i:], ']')
		if j < 0 {
			return Type{Kind: Unknown}
		}
		elem := t
		kind := List
		if j > 0 {
			kind = Array
		}
		p.i += j + 1
		t = Type{Kind: kind, Elem: &elem}
	}
}

func (p *typeParser) base() Type {
	p.space()
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != '(' && p.s[p.i] != '[' && p.s[p.i] != ',' && p.s[p.i] != ')' {
		p.i++
	}
	word := strings.ToUpper(strings.TrimSpace(p.s[start:p.i]))
	switch word {
	case "DECIMAL", "NUMERIC":
		t := Type{Kind: Decimal, Scale: 3} // DuckDB's default DECIMAL(18,3)
		if args, ok := p.parens(); ok {
			if _, s, ok := strings.Cut(args, ","); ok {
				t.Scale, _ = strconv.Atoi(strings.TrimSpace(s))
			} else {
				t.Scale = 0
			}
		}
		return t
	case "ENUM":
		p.parens()
		return Type{Kind: Varchar}
	case "STRUCT", "UNION":
		t := Type{Kind: Struct}
		if word == "UNION" {
			t.Kind = Union
		}
		if !p.eat('(') {
			return Type{Kind: Unknown}
		}
		for {
			p.space()
			name := p.ident()
			f := Field{Name: name, Type: p.parse()}
			t.Fields = append(t.Fields, f)
			p.space()
			if p.eat(')') {
				return t
			}
			if !p.eat(',') {
				return Type{Kind: Unknown}
			}
		}
	case "MAP":
		if !p.eat('(') {
			return Type{Kind: Unknown}
		}
		k := p.parse()
		p.space()
		if !p.eat(',') {
			return Type{Kind: Unknown}
		}
		v := p.parse()
		p.space()
		if !p.eat(')') {
			return Type{Kind: Unknown}
		}
		return Type{Kind: Map, Key: &k, Value: &v}
	}
	kind, ok := scalarKinds[word]
	if !ok {
		p.parens()
		return Type{Kind: Unknown}
	}
	p.parens() // VARCHAR(n), BIT(n)…: the arguments change nothing printed
	return Type{Kind: kind, Nanos: word == "TIMESTAMP_NS"}
}

// ident reads a field name: "quoted" (doubled quotes inside) or a bare word.
func (p *typeParser) ident() string {
	if p.eat('"') {
		var b strings.Builder
		for p.i < len(p.s) {
			c := p.s[p.i]
			p.i++
			if c == '"' {
				if p.eat('"') {
					b.WriteByte('"')
					continue
				}
				break
			}
			b.WriteByte(c)
		}
		return b.String()
	}
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != ' ' {
		p.i++
	}
	return p.s[start:p.i]
}

// parens skips a balanced (…) and returns what it held.
func (p *typeParser) parens() (string, bool) {
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '(' {
		return "", false
	}
	depth, start := 0, p.i+1
	inQuote := byte(0)
	for ; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		switch {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			}
		case c == '\'' || c == '"':
			inQuote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				p.i++
				return p.s[start : p.i-1], true
			}
		}
	}
	return p.s[start:], true
}

func (p *typeParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *typeParser) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}
