package duckstream

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"math/bits"
	"reflect"
	"strings"
	"time"
	"unsafe"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2"
	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// The decoding below turns a streamed DuckDB data chunk into exactly the Go
// values, type names and scan types duckdb-go's own rows produce for the same
// result (duckdb-go v2.10506: vector.go, vector_getters.go, rows.go) — they are
// not exported, and every consumer of engine.Rows (Normalize, the PostgreSQL
// wire, the shell, the Arrow stream) was written against them. TestDecodeMatchesDuckDBGo
// compares the two over every type, so an upgrade that changes duckdb-go's
// values fails there, not in a client.

// column decodes one column, or a nested child, of the current chunk.
type column struct {
	typ      duckdb.Type
	get      func(c *column, row uint64) (any, error)
	data     unsafe.Pointer
	valid    unsafe.Pointer
	children []column

	internal     duckdb.Type // DECIMAL and ENUM storage type
	width, scale uint8       // DECIMAL
	enum         []string    // ENUM dictionary
	fields       []string    // STRUCT field names
	template     map[string]any
	tags         []string // UNION member names
	arrayLen     uint64

	recent    recentStrings // VARCHAR
	words     []wordInt     // DECIMAL: what is left of the block the next values' big.Ints come from
	wordBlock int           // DECIMAL: the size of the last block
}

var errUnsupportedMapKey = errors.New("MAP key type not supported")

// init prepares c to decode values of lt.
func (c *column) init(lt bindings.LogicalType) error {
	t := bindings.GetTypeId(lt)
	switch t {
	case duckdb.TYPE_INVALID, duckdb.TYPE_ANY, duckdb.TYPE_VARIANT:
		return fmt.Errorf("unsupported data type: %s", typeNames[t])
	}
	if bindings.LogicalTypeGetAlias(lt) == "JSON" {
		c.typ, c.get = duckdb.TYPE_VARCHAR, getJSON
		return nil
	}
	c.typ = t
	switch t {
	case duckdb.TYPE_BOOLEAN:
		c.get = getPrimitive[bool]
	case duckdb.TYPE_TINYINT:
		c.get = getPrimitive[int8]
	case duckdb.TYPE_SMALLINT:
		c.get = getPrimitive[int16]
	case duckdb.TYPE_INTEGER:
		c.get = getPrimitive[int32]
	case duckdb.TYPE_BIGINT:
		c.get = getPrimitive[int64]
	case duckdb.TYPE_UTINYINT:
		c.get = getPrimitive[uint8]
	case duckdb.TYPE_USMALLINT:
		c.get = getPrimitive[uint16]
	case duckdb.TYPE_UINTEGER:
		c.get = getPrimitive[uint32]
	case duckdb.TYPE_UBIGINT:
		c.get = getPrimitive[uint64]
	case duckdb.TYPE_FLOAT:
		c.get = getPrimitive[float32]
	case duckdb.TYPE_DOUBLE:
		c.get = getPrimitive[float64]
	case duckdb.TYPE_TIMESTAMP, duckdb.TYPE_TIMESTAMP_TZ:
		c.get = getTimestamp(func(v int64) time.Time { return time.UnixMicro(v) })
	case duckdb.TYPE_TIMESTAMP_S:
		c.get = getTimestamp(func(v int64) time.Time { return time.Unix(v, 0) })
	case duckdb.TYPE_TIMESTAMP_MS:
		c.get = getTimestamp(time.UnixMilli)
	case duckdb.TYPE_TIMESTAMP_NS:
		c.get = getTimestamp(func(v int64) time.Time { return time.Unix(0, v) })
	case duckdb.TYPE_DATE:
		c.get = getDate
	case duckdb.TYPE_TIME:
		c.get = getTime
	case duckdb.TYPE_TIME_TZ:
		c.get = getTimeTZ
	case duckdb.TYPE_INTERVAL:
		c.get = getInterval
	case duckdb.TYPE_HUGEINT:
		c.get = func(c *column, row uint64) (any, error) { return hugeint(at[[2]uint64](c, row)), nil }
	case duckdb.TYPE_UHUGEINT:
		c.get = func(c *column, row uint64) (any, error) { return uhugeint(at[[2]uint64](c, row)), nil }
	case duckdb.TYPE_BIGNUM:
		c.get = getBignum
	case duckdb.TYPE_VARCHAR, duckdb.TYPE_BLOB, duckdb.TYPE_GEOMETRY:
		c.get = getBytes
	case duckdb.TYPE_BIT:
		c.get = func(c *column, row uint64) (any, error) { return duckdb.Bit{Data: []byte(borrowedString(c, row))}, nil }
	case duckdb.TYPE_DECIMAL:
		return c.initDecimal(lt)
	case duckdb.TYPE_ENUM:
		return c.initEnum(lt)
	case duckdb.TYPE_LIST, duckdb.TYPE_MAP, duckdb.TYPE_ARRAY:
		return c.initList(lt, t)
	case duckdb.TYPE_STRUCT:
		return c.initStruct(lt)
	case duckdb.TYPE_UNION:
		return c.initUnion(lt)
	case duckdb.TYPE_UUID:
		c.get = getUUID
	case duckdb.TYPE_SQLNULL:
		c.get = func(*column, uint64) (any, error) { return nil, nil }
		return nil
	default:
		return fmt.Errorf("unsupported data type: %s", typeName(t))
	}
	return nil
}

func (c *column) initDecimal(lt bindings.LogicalType) error {
	c.width, c.scale = bindings.DecimalWidth(lt), bindings.DecimalScale(lt)
	c.internal = bindings.DecimalInternalType(lt)
	switch c.internal {
	case duckdb.TYPE_SMALLINT, duckdb.TYPE_INTEGER, duckdb.TYPE_BIGINT, duckdb.TYPE_HUGEINT:
	default:
		return fmt.Errorf("unsupported data type: DECIMAL stored as %s", typeName(c.internal))
	}
	c.get = getDecimal
	return nil
}

func (c *column) initEnum(lt bindings.LogicalType) error {
	n := bindings.EnumDictionarySize(lt)
	c.enum = make([]string, n)
	for i := range n {
		c.enum[i] = bindings.EnumDictionaryValue(lt, bindings.IdxT(i))
	}
	c.internal = bindings.EnumInternalType(lt)
	switch c.internal {
	case duckdb.TYPE_UTINYINT, duckdb.TYPE_USMALLINT, duckdb.TYPE_UINTEGER, duckdb.TYPE_UBIGINT:
	default:
		return fmt.Errorf("unsupported data type: ENUM stored as %s", typeName(c.internal))
	}
	c.get = getEnum
	return nil
}

// initList covers LIST, MAP (a LIST of STRUCT(key, value)) and ARRAY.
func (c *column) initList(lt bindings.LogicalType, t duckdb.Type) error {
	var child bindings.LogicalType
	if t == duckdb.TYPE_ARRAY {
		c.arrayLen = uint64(bindings.ArrayTypeArraySize(lt))
		child = bindings.ArrayTypeChildType(lt)
	} else {
		child = bindings.ListTypeChildType(lt)
	}
	defer bindings.DestroyLogicalType(&child)
	c.children = make([]column, 1)
	if err := c.children[0].init(child); err != nil {
		return err
	}
	switch t {
	case duckdb.TYPE_LIST:
		c.get = getList
	case duckdb.TYPE_ARRAY:
		c.get = getArray
	case duckdb.TYPE_MAP:
		key := bindings.MapTypeKeyType(lt)
		defer bindings.DestroyLogicalType(&key)
		switch bindings.GetTypeId(key) {
		case duckdb.TYPE_UNION, duckdb.TYPE_LIST, duckdb.TYPE_STRUCT, duckdb.TYPE_MAP, duckdb.TYPE_ARRAY,
			duckdb.TYPE_BLOB, duckdb.TYPE_BIT, duckdb.TYPE_GEOMETRY:
			return errUnsupportedMapKey
		}
		c.get = getMap
	}
	return nil
}

func (c *column) initStruct(lt bindings.LogicalType) error {
	n := uint64(bindings.StructTypeChildCount(lt))
	c.children = make([]column, n)
	c.template = make(map[string]any, n)
	for i := range n {
		name := bindings.StructTypeChildName(lt, bindings.IdxT(i))
		if name == "" {
			return errors.New("STRUCT field without a name")
		}
		c.fields = append(c.fields, name)
		c.template[name] = nil
		child := bindings.StructTypeChildType(lt, bindings.IdxT(i))
		err := c.children[i].init(child)
		bindings.DestroyLogicalType(&child)
		if err != nil {
			return err
		}
	}
	c.get = getStruct
	return nil
}

// initUnion: a UNION vector is a STRUCT vector whose child 0 is the tag.
func (c *column) initUnion(lt bindings.LogicalType) error {
	n := int(bindings.UnionTypeMemberCount(lt))
	c.children = make([]column, n+1)
	tag := bindings.StructTypeChildType(lt, 0)
	defer bindings.DestroyLogicalType(&tag)
	if err := c.children[0].init(tag); err != nil {
		return err
	}
	for i := range n {
		member := bindings.UnionTypeMemberType(lt, bindings.IdxT(i))
		err := c.children[i+1].init(member)
		bindings.DestroyLogicalType(&member)
		if err != nil {
			return err
		}
		c.tags = append(c.tags, bindings.UnionTypeMemberName(lt, bindings.IdxT(i)))
	}
	c.get = getUnion
	return nil
}

// attach points c (and its children) at vector v of the chunk just fetched.
func (c *column) attach(v bindings.Vector) {
	c.data = bindings.VectorGetData(v)
	c.valid = bindings.VectorGetValidity(v)
	switch c.typ {
	case duckdb.TYPE_LIST, duckdb.TYPE_MAP:
		c.children[0].attach(bindings.ListVectorGetChild(v))
	case duckdb.TYPE_ARRAY:
		c.children[0].attach(bindings.ArrayVectorGetChild(v))
	case duckdb.TYPE_STRUCT, duckdb.TYPE_UNION:
		for i := range c.children {
			c.children[i].attach(bindings.StructVectorGetChild(v, bindings.IdxT(i)))
		}
	}
}

// value is the value at row, nil for NULL.
func (c *column) value(row uint64) (any, error) {
	if c.valid != nil && *(*uint64)(unsafe.Add(c.valid, row/64*8))&(1<<(row%64)) == 0 {
		return nil, nil
	}
	return c.get(c, row)
}

func at[T any](c *column, row uint64) T {
	var zero T
	return *(*T)(unsafe.Add(c.data, uintptr(row)*unsafe.Sizeof(zero)))
}

func getPrimitive[T any](c *column, row uint64) (any, error) { return at[T](c, row), nil }

func getTimestamp(of func(int64) time.Time) func(*column, uint64) (any, error) {
	return func(c *column, row uint64) (any, error) { return of(at[int64](c, row)).UTC(), nil }
}

func getDate(c *column, row uint64) (any, error) {
	d := bindings.FromDate(bindings.NewDate(at[int32](c, row)))
	y, m, day := bindings.DateStructMembers(&d)
	return time.Date(int(y), time.Month(m), int(day), 0, 0, 0, 0, time.UTC), nil
}

func getTime(c *column, row uint64) (any, error) {
	t := time.UnixMicro(at[int64](c, row)).UTC()
	return time.Date(1, time.January, 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC), nil
}

func getTimeTZ(c *column, row uint64) (any, error) {
	s := bindings.FromTimeTZ(bindings.NewTimeTZ(at[uint64](c, row)))
	ts, offset := bindings.TimeTZStructMembers(&s)
	h, m, sec, micro := bindings.TimeStructMembers(&ts)
	loc := time.UTC
	if offset != 0 {
		loc = time.FixedZone("", int(offset))
	}
	return time.Date(1, time.January, 1, int(h), int(m), int(sec), int(micro)*1000, loc), nil
}

func getInterval(c *column, row uint64) (any, error) {
	v := at[struct {
		months, days int32
		micros       int64
	}](c, row)
	return duckdb.Interval{Days: v.days, Months: v.months, Micros: v.micros}, nil
}

// hugeint decodes DuckDB's {lower uint64, upper int64}.
func hugeint(v [2]uint64) *big.Int {
	i := big.NewInt(int64(v[1]))
	i.Lsh(i, 64)
	return i.Add(i, new(big.Int).SetUint64(v[0]))
}

func uhugeint(v [2]uint64) *big.Int {
	i := new(big.Int).SetUint64(v[1])
	i.Lsh(i, 64)
	return i.Add(i, new(big.Int).SetUint64(v[0]))
}

// borrowedString is a duckdb_string_t's bytes, valid while the chunk is: a
// uint32 length, then up to 12 bytes inline or, past 12, a pointer at offset 8.
func borrowedString(c *column, row uint64) string {
	p := unsafe.Add(c.data, uintptr(row)*16)
	n := *(*uint32)(p)
	if n <= 12 {
		return unsafe.String((*byte)(unsafe.Add(p, 4)), int(n))
	}
	return unsafe.String(*(**byte)(unsafe.Add(p, 8)), int(n))
}

func getBytes(c *column, row uint64) (any, error) {
	s := borrowedString(c, row)
	if c.typ == duckdb.TYPE_VARCHAR {
		return c.recent.value(s), nil
	}
	return []byte(s), nil
}

const (
	// recentCount is how many distinct values recentStrings keeps.
	recentCount = 4
	// recentMaxLen is the longest value recentStrings keeps: a longer one is
	// rarely repeated, and costlier to compare.
	recentMaxLen = 32
)

// recentStrings are the last few distinct short values a VARCHAR column
// handed out, boxed. A column of few distinct values — an OBIS code, a MaLo
// in a meter's read, a quality flag — repeats them row after row, and handing
// out the value already made saves a copy and a box per repeat. Go strings
// are immutable, so every row may share one.
type recentStrings struct {
	strs [recentCount]string
	vals [recentCount]any // nil: the slot is free
	next int
}

// value is s, borrowed from the chunk, as a string of its own.
func (r *recentStrings) value(s string) any {
	if len(s) > recentMaxLen {
		return strings.Clone(s)
	}
	for i := range r.strs {
		if r.vals[i] != nil && r.strs[i] == s {
			return r.vals[i]
		}
	}
	own := strings.Clone(s)
	var boxed any = own
	r.strs[r.next], r.vals[r.next] = own, boxed
	r.next = (r.next + 1) % recentCount
	return boxed
}

func getJSON(c *column, row uint64) (any, error) {
	var v any
	if err := json.Unmarshal([]byte(borrowedString(c, row)), &v); err != nil {
		return nil, err
	}
	return v, nil
}

// getBignum decodes DuckDB's BIGNUM: a 3-byte header whose top bit is set for
// non-negative values, then the big-endian magnitude (complemented when negative).
func getBignum(c *column, row uint64) (any, error) {
	b := []byte(borrowedString(c, row))
	if len(b) < 4 {
		return big.NewInt(0), nil
	}
	mag := b[3:]
	if b[0]&0x80 != 0 {
		return new(big.Int).SetBytes(mag), nil
	}
	for i := range mag {
		mag[i] = ^mag[i]
	}
	i := new(big.Int).SetBytes(mag)
	return i.Neg(i), nil
}

func getDecimal(c *column, row uint64) (any, error) {
	var v *big.Int
	switch c.internal {
	case duckdb.TYPE_SMALLINT:
		v = c.oneWordInt(int64(at[int16](c, row)))
	case duckdb.TYPE_INTEGER:
		v = c.oneWordInt(int64(at[int32](c, row)))
	case duckdb.TYPE_BIGINT:
		v = c.oneWordInt(at[int64](c, row))
	default:
		v = hugeint(at[[2]uint64](c, row))
	}
	return duckdb.Decimal{Width: c.width, Scale: c.scale, Value: v}, nil
}

// wordInt is a big.Int together with the one word of its magnitude.
type wordInt struct {
	i big.Int
	w [1]big.Word
}

// oneWordInt is big.NewInt(v) for a value of c, without an allocation of
// its own: the Int and its magnitude's word come from a block of c's (see
// word). Where a word is narrower than int64 it is big.NewInt(v).
func (c *column) oneWordInt(v int64) *big.Int {
	if bits.UintSize < 64 {
		return big.NewInt(v)
	}
	u := uint64(v)
	if v < 0 {
		u = -u
	}
	n := c.word()
	n.w[0] = big.Word(u)
	n.i.SetBits(n.w[:])
	if v < 0 {
		n.i.Neg(&n.i)
	}
	return &n.i
}

const (
	// firstWords and maxWords bound the blocks word allocates: a small result
	// allocates little, a large one a block per chunk (DuckDB's vectors hold
	// 2048 values).
	firstWords = 16
	maxWords   = 2048
)

// word is a fresh wordInt from c's current block, allocating the next block
// — twice the last, up to maxWords — when it is used up: a DECIMAL column of
// a large result decodes a value per row, and one allocation per block
// replaces one per value. A value handed out keeps its block in memory for
// as long as the consumer keeps the value.
func (c *column) word() *wordInt {
	if len(c.words) == 0 {
		c.wordBlock = min(max(2*c.wordBlock, firstWords), maxWords)
		c.words = make([]wordInt, c.wordBlock)
	}
	n := &c.words[0]
	c.words = c.words[1:]
	return n
}

// Decimals is how a stream decodes its top-level DECIMAL columns.
type Decimals bool

const (
	// DriverDecimals decodes them as duckdb-go's rows do, into
	// duckdb.Decimal: what the PostgreSQL wire and the Arrow stream encode.
	DriverDecimals Decimals = false
	// ExactDecimals decodes them straight into decimal.Decimal — exactly what
	// engine.Normalize makes of duckdb-go's duckdb.Decimal — for a consumer
	// that normalises every value: the duckdb.Decimal and its big.Int are then
	// never made. DECIMALs nested in lists, structs or maps stay duckdb.Decimal.
	ExactDecimals Decimals = true
)

// getExactDecimal is getDecimal's value as decimal.Decimal.
func getExactDecimal(c *column, row uint64) (any, error) {
	exp := -int32(c.scale)
	switch c.internal {
	case duckdb.TYPE_SMALLINT:
		return decimal.New(int64(at[int16](c, row)), exp), nil
	case duckdb.TYPE_INTEGER:
		return decimal.New(int64(at[int32](c, row)), exp), nil
	case duckdb.TYPE_BIGINT:
		return decimal.New(at[int64](c, row), exp), nil
	default:
		return decimal.NewFromBigInt(hugeint(at[[2]uint64](c, row)), exp), nil
	}
}

func getEnum(c *column, row uint64) (any, error) {
	var i uint64
	switch c.internal {
	case duckdb.TYPE_UTINYINT:
		i = uint64(at[uint8](c, row))
	case duckdb.TYPE_USMALLINT:
		i = uint64(at[uint16](c, row))
	case duckdb.TYPE_UINTEGER:
		i = uint64(at[uint32](c, row))
	default:
		i = at[uint64](c, row)
	}
	return c.enum[i], nil
}

func getUUID(c *column, row uint64) (any, error) {
	v := at[[2]uint64](c, row)
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], v[1]^1<<63)
	binary.BigEndian.PutUint64(b[8:], v[0])
	return b[:], nil
}

func (c *column) slice(offset, n uint64) ([]any, error) {
	out := make([]any, 0, n)
	child := &c.children[0]
	for i := range n {
		v, err := child.value(offset + i)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func getList(c *column, row uint64) (any, error) {
	e := at[[2]uint64](c, row) // duckdb_list_entry{offset, length}
	return c.slice(e[0], e[1])
}

func getArray(c *column, row uint64) (any, error) {
	return c.slice(row*c.arrayLen, c.arrayLen)
}

func getMap(c *column, row uint64) (any, error) {
	entries, err := getList(c, row)
	if err != nil {
		return nil, err
	}
	var m duckdb.OrderedMap
	for _, e := range entries.([]any) {
		kv := e.(map[string]any)
		key := kv["key"]
		if key != nil && !reflect.TypeOf(key).Comparable() {
			return nil, errUnsupportedMapKey
		}
		m.Set(key, kv["value"])
	}
	return m, nil
}

func getStruct(c *column, row uint64) (any, error) {
	m := maps.Clone(c.template)
	for i := range c.children {
		v, err := c.children[i].value(row)
		if err != nil {
			return nil, err
		}
		m[c.fields[i]] = v
	}
	return m, nil
}

func getUnion(c *column, row uint64) (any, error) {
	tag := at[uint8](&c.children[0], row)
	v, err := c.children[tag+1].value(row)
	if err != nil {
		return nil, err
	}
	return duckdb.Union{Tag: c.tags[tag], Value: v}, nil
}

// typeNames are duckdb-go's names of DuckDB's type ids (DatabaseTypeName).
var typeNames = map[duckdb.Type]string{
	duckdb.TYPE_INVALID: "INVALID", duckdb.TYPE_BOOLEAN: "BOOLEAN", duckdb.TYPE_TINYINT: "TINYINT",
	duckdb.TYPE_SMALLINT: "SMALLINT", duckdb.TYPE_INTEGER: "INTEGER", duckdb.TYPE_BIGINT: "BIGINT",
	duckdb.TYPE_UTINYINT: "UTINYINT", duckdb.TYPE_USMALLINT: "USMALLINT", duckdb.TYPE_UINTEGER: "UINTEGER",
	duckdb.TYPE_UBIGINT: "UBIGINT", duckdb.TYPE_FLOAT: "FLOAT", duckdb.TYPE_DOUBLE: "DOUBLE",
	duckdb.TYPE_TIMESTAMP: "TIMESTAMP", duckdb.TYPE_DATE: "DATE", duckdb.TYPE_TIME: "TIME",
	duckdb.TYPE_INTERVAL: "INTERVAL", duckdb.TYPE_HUGEINT: "HUGEINT", duckdb.TYPE_UHUGEINT: "UHUGEINT",
	duckdb.TYPE_VARCHAR: "VARCHAR", duckdb.TYPE_BLOB: "BLOB", duckdb.TYPE_DECIMAL: "DECIMAL",
	duckdb.TYPE_TIMESTAMP_S: "TIMESTAMP_S", duckdb.TYPE_TIMESTAMP_MS: "TIMESTAMP_MS", duckdb.TYPE_TIMESTAMP_NS: "TIMESTAMP_NS",
	duckdb.TYPE_ENUM: "ENUM", duckdb.TYPE_LIST: "LIST", duckdb.TYPE_STRUCT: "STRUCT", duckdb.TYPE_MAP: "MAP",
	duckdb.TYPE_ARRAY: "ARRAY", duckdb.TYPE_UUID: "UUID", duckdb.TYPE_UNION: "UNION", duckdb.TYPE_BIT: "BIT",
	duckdb.TYPE_TIME_TZ: "TIMETZ", duckdb.TYPE_TIMESTAMP_TZ: "TIMESTAMPTZ", duckdb.TYPE_ANY: "ANY",
	duckdb.TYPE_BIGNUM: "BIGNUM", duckdb.TYPE_SQLNULL: "SQLNULL", duckdb.TYPE_GEOMETRY: "GEOMETRY",
	duckdb.TYPE_VARIANT: "VARIANT",
}

func typeName(t duckdb.Type) string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("unknown type (%d)", t)
}

// databaseTypeName is duckdb-go's DatabaseTypeName of a result column.
func databaseTypeName(lt bindings.LogicalType) string {
	if bindings.LogicalTypeGetAlias(lt) == "JSON" {
		return "JSON"
	}
	return logicalTypeName(lt)
}

func logicalTypeName(lt bindings.LogicalType) string {
	child := func(get func(bindings.LogicalType) bindings.LogicalType) string {
		c := get(lt)
		defer bindings.DestroyLogicalType(&c)
		return logicalTypeName(c)
	}
	members := func(n bindings.IdxT, name func(bindings.LogicalType, bindings.IdxT) string, typ func(bindings.LogicalType, bindings.IdxT) bindings.LogicalType) string {
		parts := make([]string, n)
		for i := range n {
			c := typ(lt, i)
			parts[i] = sqltext.Ident(name(lt, i)) + " " + logicalTypeName(c)
			bindings.DestroyLogicalType(&c)
		}
		return strings.Join(parts, ", ")
	}
	switch t := bindings.GetTypeId(lt); t {
	case duckdb.TYPE_DECIMAL:
		return fmt.Sprintf("DECIMAL(%d,%d)", bindings.DecimalWidth(lt), bindings.DecimalScale(lt))
	case duckdb.TYPE_LIST:
		return child(bindings.ListTypeChildType) + "[]"
	case duckdb.TYPE_ARRAY:
		return fmt.Sprintf("%s[%d]", child(bindings.ArrayTypeChildType), bindings.ArrayTypeArraySize(lt))
	case duckdb.TYPE_MAP:
		return fmt.Sprintf("MAP(%s, %s)", child(bindings.MapTypeKeyType), child(bindings.MapTypeValueType))
	case duckdb.TYPE_STRUCT:
		return "STRUCT(" + members(bindings.StructTypeChildCount(lt), bindings.StructTypeChildName, bindings.StructTypeChildType) + ")"
	case duckdb.TYPE_UNION:
		return "UNION(" + members(bindings.UnionTypeMemberCount(lt), bindings.UnionTypeMemberName, bindings.UnionTypeMemberType) + ")"
	default:
		return typeNames[t]
	}
}

// scanType is duckdb-go's ScanType of a result column.
func scanType(lt bindings.LogicalType) reflect.Type {
	if bindings.LogicalTypeGetAlias(lt) == "JSON" {
		return reflect.TypeFor[any]()
	}
	switch bindings.GetTypeId(lt) {
	case duckdb.TYPE_BOOLEAN:
		return reflect.TypeFor[bool]()
	case duckdb.TYPE_TINYINT:
		return reflect.TypeFor[int8]()
	case duckdb.TYPE_SMALLINT:
		return reflect.TypeFor[int16]()
	case duckdb.TYPE_INTEGER:
		return reflect.TypeFor[int32]()
	case duckdb.TYPE_BIGINT:
		return reflect.TypeFor[int64]()
	case duckdb.TYPE_UTINYINT:
		return reflect.TypeFor[uint8]()
	case duckdb.TYPE_USMALLINT:
		return reflect.TypeFor[uint16]()
	case duckdb.TYPE_UINTEGER:
		return reflect.TypeFor[uint32]()
	case duckdb.TYPE_UBIGINT:
		return reflect.TypeFor[uint64]()
	case duckdb.TYPE_FLOAT:
		return reflect.TypeFor[float32]()
	case duckdb.TYPE_DOUBLE:
		return reflect.TypeFor[float64]()
	case duckdb.TYPE_TIMESTAMP, duckdb.TYPE_TIMESTAMP_S, duckdb.TYPE_TIMESTAMP_MS, duckdb.TYPE_TIMESTAMP_NS,
		duckdb.TYPE_DATE, duckdb.TYPE_TIME, duckdb.TYPE_TIME_TZ, duckdb.TYPE_TIMESTAMP_TZ:
		return reflect.TypeFor[time.Time]()
	case duckdb.TYPE_INTERVAL:
		return reflect.TypeFor[duckdb.Interval]()
	case duckdb.TYPE_HUGEINT, duckdb.TYPE_UHUGEINT, duckdb.TYPE_BIGNUM:
		return reflect.TypeFor[*big.Int]()
	case duckdb.TYPE_VARCHAR, duckdb.TYPE_ENUM, duckdb.TYPE_BIT:
		return reflect.TypeFor[string]()
	case duckdb.TYPE_BLOB, duckdb.TYPE_GEOMETRY, duckdb.TYPE_UUID:
		return reflect.TypeFor[[]byte]()
	case duckdb.TYPE_DECIMAL:
		return reflect.TypeFor[duckdb.Decimal]()
	case duckdb.TYPE_LIST, duckdb.TYPE_ARRAY:
		return reflect.TypeFor[[]any]()
	case duckdb.TYPE_STRUCT:
		return reflect.TypeFor[map[string]any]()
	case duckdb.TYPE_MAP:
		return reflect.TypeFor[duckdb.OrderedMap]()
	case duckdb.TYPE_UNION:
		return reflect.TypeFor[duckdb.Union]()
	}
	return nil
}
