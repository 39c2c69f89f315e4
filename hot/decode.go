package hot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
)

// colKind is how a selected column is encoded on the wire and which Go type
// its field of meterstore.Row has (Row.Field): the kinds follow the column's
// type, never its position, so a column added to the layout needs no case here.
type colKind uint8

const (
	kText              colKind = iota // *string
	kTextNullable                     // **string
	kTimestamp                        // *time.Time
	kTimestampNullable                // **time.Time
	kDate                             // *time.Time, a date
	kQuantity                         // *decimal.Decimal, numeric(18,6)
	kVersion                          // *uint64, numeric(20,0)
)

// kindOf is the kind of column i of the layout, from its type and the Go type
// of the Row field that holds it.
func kindOf(def meterstore.ColumnDef, field any) colKind {
	switch def.Type {
	case meterstore.TypeTimestamp:
		if _, ok := field.(**time.Time); ok {
			return kTimestampNullable
		}
		return kTimestamp
	case meterstore.TypeDate:
		return kDate
	case meterstore.TypeDecimal18_6:
		return kQuantity
	case meterstore.TypeDecimal20_0:
		return kVersion
	}
	if _, ok := field.(**string); ok {
		return kTextNullable
	}
	return kText
}

// layoutKinds is the kind of every column of cfg's layout.
func layoutKinds(cfg meterstore.TableConfig) []colKind {
	cols := cfg.Columns()
	probe := meterstore.Row{Extra: make([]*string, len(cols)-meterstore.CoreColumnCount)}
	out := make([]colKind, len(cols))
	for i, c := range cols {
		out[i] = kindOf(c, probe.Field(i))
	}
	return out
}

// pgEpochMicros is 2000-01-01 00:00 UTC, PostgreSQL's binary time origin, in Unix µs.
const pgEpochMicros = 946_684_800_000_000

// internMax bounds each column's string cache: identifiers, codes and repeated
// JSON payloads are shared between rows; beyond the bound strings are copied.
const internMax = 4096

// decoder turns selected columns into meterstore.Row values straight from the
// wire bytes (rows.RawValues), without boxing into interfaces. Strings are
// interned per column, and the pointers of nullable fields point into one slab
// per page, so a page costs a handful of allocations rather than several per row.
// A value equal to the column's previous one is that one again, without a
// lookup: in key order a MaLo's id repeats for each of its readings, and most
// other columns hold one value for long runs. Rows then share the string a
// nullable field points to, and a value's big.Int; both are never written
// through. It is not safe for concurrent use; Scan and Page build one per plan.
type decoder struct {
	cols    []string
	pos     []int // each selected column's position in the layout (Row.Field)
	kinds   []colKind
	nExtra  int
	intern  []map[string]string
	last    []string  // per column, the previous value
	lastPtr []*string // per nullable column, the pointer to it
	lastNum []byte    // the previous value's wire bytes
	lastVal decimal.Decimal
	// values, while not nil, receives each row's value as decimal(18,6)'s
	// scaled integer (Pager.NextScaled), and Row.Value stays zero.
	values *[]int64

	// per-page slabs
	strs   []string
	times  []time.Time
	extras []*string
}

// newDecoder decodes the columns named, which must be columns of the table.
func (s *Store) newDecoder(cols []string) *decoder {
	d := &decoder{cols: cols, nExtra: len(s.cfg.ExtraColumns())}
	kinds := layoutKinds(s.cfg)
	d.pos = make([]int, len(cols))
	d.kinds = make([]colKind, len(cols))
	d.intern = make([]map[string]string, len(cols))
	d.last = make([]string, len(cols))
	d.lastPtr = make([]*string, len(cols))
	for i, c := range cols {
		d.pos[i] = s.cfg.ColumnIndex(c)
		d.kinds[i] = kinds[d.pos[i]]
		if !d.needsBinary(i) {
			d.intern[i] = map[string]string{}
		}
	}
	return d
}

func (d *decoder) selectList(prefix string) string {
	q := make([]string, len(d.cols))
	for i, c := range d.cols {
		q[i] = prefix + meterstore.QuoteIdent(c)
	}
	return strings.Join(q, ", ")
}

// readAll decodes every row of res into out (appending) and closes res.
func (d *decoder) readAll(res pgx.Rows, out []meterstore.Row) ([]meterstore.Row, error) {
	defer res.Close()
	fds := res.FieldDescriptions()
	if len(fds) != len(d.cols) {
		// No result description: the query itself failed (a lost connection,
		// a server shut down); report that, not its symptom.
		res.Close()
		if err := res.Err(); err != nil {
			return out, err
		}
		return out, fmt.Errorf("decode: %d result columns for %d selected", len(fds), len(d.cols))
	}
	var tm *pgtype.Map
	if d.values != nil {
		*d.values = (*d.values)[:0]
	}
	for res.Next() {
		if len(out) == cap(out) {
			out = append(out, meterstore.Row{})[:len(out)]
		}
		out = out[:len(out)+1]
		r := &out[len(out)-1]
		*r = meterstore.Row{} // a reused page holds the previous page's rows
		if d.nExtra > 0 {
			r.Extra = d.extraSlot()
		}
		raw := res.RawValues()
		for i, b := range raw {
			if fds[i].Format != pgx.BinaryFormatCode && d.needsBinary(i) {
				if tm == nil {
					tm = res.Conn().TypeMap()
				}
				if err := d.decodeText(tm, fds[i].DataTypeOID, i, b, r); err != nil {
					return out, fmt.Errorf("decode %s: %w", d.cols[i], err)
				}
				continue
			}
			if err := d.decodeBinary(i, b, r); err != nil {
				return out, fmt.Errorf("decode %s: %w", d.cols[i], err)
			}
		}
	}
	return out, res.Err()
}

// needsBinary reports whether column i is decoded from binary (everything but text).
func (d *decoder) needsBinary(i int) bool {
	k := d.kinds[i]
	return k != kText && k != kTextNullable
}

func (d *decoder) extraSlot() []*string {
	if len(d.extras) < d.nExtra {
		d.extras = make([]*string, d.nExtra*256)
	}
	e := d.extras[:d.nExtra:d.nExtra]
	d.extras = d.extras[d.nExtra:]
	return e
}

func (d *decoder) str(i int, b []byte) string {
	if d.last[i] == string(b) {
		return d.last[i]
	}
	m := d.intern[i]
	s, ok := m[string(b)]
	if !ok {
		s = string(b)
		if len(m) < internMax {
			m[s] = s
		}
	}
	d.last[i] = s
	return s
}

func (d *decoder) strPtr(i int, b []byte) *string {
	if b == nil {
		return nil
	}
	if p := d.lastPtr[i]; p != nil && *p == string(b) {
		return p
	}
	if len(d.strs) == 0 {
		d.strs = make([]string, 1024)
	}
	p := &d.strs[0]
	d.strs = d.strs[1:]
	*p = d.str(i, b)
	d.lastPtr[i] = p
	return p
}

func (d *decoder) timePtr(t time.Time) *time.Time {
	if len(d.times) == 0 {
		d.times = make([]time.Time, 1024)
	}
	p := &d.times[0]
	d.times = d.times[1:]
	*p = t
	return p
}

var errNull = errors.New("unexpected NULL")

func (d *decoder) decodeBinary(i int, b []byte, r *meterstore.Row) error {
	k, f := d.kinds[i], r.Field(d.pos[i])
	if b == nil {
		if k == kTextNullable || k == kTimestampNullable {
			return nil // the field stays nil
		}
		return errNull
	}
	switch k {
	case kText:
		*f.(*string) = d.str(i, b)
	case kTextNullable:
		*f.(**string) = d.strPtr(i, b)
	case kTimestamp, kTimestampNullable:
		t, err := decodeTimestamptz(b)
		if err != nil {
			return err
		}
		d.setTime(k, f, t)
	case kDate:
		if len(b) != 4 {
			return fmt.Errorf("date: %d bytes", len(b))
		}
		days := int32(binary.BigEndian.Uint32(b))
		if days == math.MaxInt32 || days == math.MinInt32 {
			return errors.New("infinite date")
		}
		*f.(*time.Time) = time.UnixMicro(pgEpochMicros + int64(days)*86_400_000_000).UTC()
	case kQuantity:
		if d.values != nil {
			v, err := decodeScaled(b)
			if err != nil {
				return err
			}
			*d.values = append(*d.values, v)
			return nil
		}
		v := f.(*decimal.Decimal)
		if d.lastNum != nil && string(d.lastNum) == string(b) {
			*v = d.lastVal
			return nil
		}
		n, err := decodeNumeric(b)
		if err != nil {
			return err
		}
		*v = n
		d.lastNum, d.lastVal = append(d.lastNum[:0], b...), n
	case kVersion:
		v, err := decodeVersion(b)
		if err != nil {
			return err
		}
		*f.(*uint64) = v
	}
	return nil
}

// setTime stores t in a timestamp field, the nullable one through the slab.
func (d *decoder) setTime(k colKind, f any, t time.Time) {
	if k == kTimestampNullable {
		*f.(**time.Time) = d.timePtr(t)
		return
	}
	*f.(*time.Time) = t
}

// decodeText is the fallback for a connection returning text results (the
// simple protocol): it goes through pgx's codecs.
func (d *decoder) decodeText(tm *pgtype.Map, oid uint32, i int, b []byte, r *meterstore.Row) error {
	if b == nil {
		return d.decodeBinary(i, nil, r)
	}
	k, f := d.kinds[i], r.Field(d.pos[i])
	switch k {
	case kQuantity, kVersion:
		var n pgtype.Numeric
		if err := tm.Scan(oid, pgx.TextFormatCode, b, &n); err != nil {
			return err
		}
		if !n.Valid || n.Int == nil || n.NaN || n.InfinityModifier != pgtype.Finite {
			return errors.New("not a finite number")
		}
		v := decimal.NewFromBigInt(n.Int, n.Exp)
		if k == kQuantity && d.values != nil {
			return d.appendScaled(v)
		}
		if k == kQuantity {
			*f.(*decimal.Decimal) = v
			return nil
		}
		bi := v.BigInt()
		if bi.Sign() < 0 || !bi.IsUint64() {
			return fmt.Errorf("version %s out of range", v)
		}
		*f.(*uint64) = bi.Uint64()
	default:
		var t time.Time
		if err := tm.Scan(oid, pgx.TextFormatCode, b, &t); err != nil {
			return err
		}
		if k == kDate {
			*f.(*time.Time) = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
			return nil
		}
		d.setTime(k, f, t.UTC())
	}
	return nil
}

// numericHeader is a binary numeric's header: how many base-10000 digits
// follow it (from b[8:]), the weight of the first, the sign word (0 positive,
// 0x4000 negative, else NaN or an infinity) and the display scale.
type numericHeader struct {
	ndigits, weight int
	sign            uint16
	dscale          int
}

func readNumericHeader(b []byte) (numericHeader, error) {
	if len(b) < 8 {
		return numericHeader{}, errors.New("numeric: short")
	}
	h := numericHeader{
		ndigits: int(binary.BigEndian.Uint16(b[0:])),
		weight:  int(int16(binary.BigEndian.Uint16(b[2:]))),
		sign:    binary.BigEndian.Uint16(b[4:]),
		dscale:  int(int16(binary.BigEndian.Uint16(b[6:]))),
	}
	if len(b) != 8+2*h.ndigits {
		return numericHeader{}, errors.New("numeric: bad length")
	}
	return h, nil
}

// decodeVersion decodes a binary numeric(20,0) straight into a uint64: the
// version is read for every row, and going through a decimal and a big.Int cost
// three allocations each time.
func decodeVersion(b []byte) (uint64, error) {
	h, err := readNumericHeader(b)
	if err != nil {
		return 0, err
	}
	ndigits, weight := h.ndigits, h.weight
	if h.sign != 0 {
		return 0, errors.New("version: negative, NaN or infinite")
	}
	var acc uint64
	for i := 0; i <= weight; i++ {
		var dg uint64
		if i < ndigits {
			dg = uint64(binary.BigEndian.Uint16(b[8+2*i:]))
		}
		if acc > (math.MaxUint64-dg)/10_000 {
			return 0, errors.New("version: out of range")
		}
		acc = acc*10_000 + dg
	}
	return acc, nil // digits after the decimal point (weight < i) are truncated
}

func decodeTimestamptz(b []byte) (time.Time, error) {
	if len(b) != 8 {
		return time.Time{}, fmt.Errorf("timestamptz: %d bytes", len(b))
	}
	us := int64(binary.BigEndian.Uint64(b))
	if us == math.MaxInt64 || us == math.MinInt64 {
		return time.Time{}, errors.New("infinite timestamp")
	}
	return time.UnixMicro(pgEpochMicros + us).UTC(), nil
}

var (
	pow10 = [...]uint64{1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000,
		10_000_000_000, 100_000_000_000, 1_000_000_000_000, 10_000_000_000_000, 100_000_000_000_000,
		1_000_000_000_000_000, 10_000_000_000_000_000, 100_000_000_000_000_000, 1_000_000_000_000_000_000}
	bigTenThousand = big.NewInt(10_000)
)

// decodeNumeric decodes PostgreSQL's binary numeric (base-10000 digits) into a
// decimal with exponent -dscale (as pgx's own codec does): without big.Int when
// the coefficient fits 63 bits, which every numeric(18,6) does.
func decodeNumeric(b []byte) (decimal.Decimal, error) {
	h, err := readNumericHeader(b)
	if err != nil {
		return decimal.Decimal{}, err
	}
	ndigits, weight, sign, dscale := h.ndigits, h.weight, h.sign, h.dscale
	if sign != 0 && sign != 0x4000 {
		return decimal.Decimal{}, errors.New("numeric: NaN or infinity")
	}
	if ndigits == 0 {
		return decimal.New(0, 0), nil
	}
	var acc uint64
	small := true
	var bacc *big.Int
	for i := 0; i < ndigits; i++ {
		dg := uint64(binary.BigEndian.Uint16(b[8+2*i:]))
		if small && acc > (math.MaxInt64-dg)/10_000 {
			small = false
			bacc = new(big.Int).SetUint64(acc)
		}
		if small {
			acc = acc*10_000 + dg
		} else {
			bacc.Mul(bacc, bigTenThousand)
			bacc.Add(bacc, new(big.Int).SetUint64(dg))
		}
	}
	exp := (weight - ndigits + 1) * 4
	if dscale > 0 {
		frac := (ndigits - weight - 1) * 4
		switch {
		case dscale > frac:
			m := dscale - frac
			if small && m < len(pow10) && acc <= math.MaxInt64/pow10[m] {
				acc *= pow10[m]
			} else {
				if small {
					small, bacc = false, new(big.Int).SetUint64(acc)
				}
				bacc.Mul(bacc, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(m)), nil))
			}
		case dscale < frac:
			m := frac - dscale
			if small && m < len(pow10) {
				acc /= pow10[m]
			} else {
				if small {
					small, bacc = false, new(big.Int).SetUint64(acc)
				}
				bacc.Quo(bacc, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(m)), nil))
			}
		}
		exp = -dscale
	}
	if small {
		v := int64(acc)
		if sign == 0x4000 {
			v = -v
		}
		return decimal.New(v, int32(exp)), nil
	}
	if sign == 0x4000 {
		bacc.Neg(bacc)
	}
	return decimal.NewFromBigInt(bacc, int32(exp)), nil
}

// quantityScale is the number of decimal places of a quantity (numeric(18,6)).
const quantityScale = 6

// maxScaled bounds a decimal(18,6)'s scaled integer: 18 digits.
const maxScaled = 999_999_999_999_999_999

var (
	errNotFinite   = errors.New("numeric: NaN or infinity is not a quantity (decimal(18,6) holds finite values only)")
	errTooPrecise  = errors.New("numeric: more than 6 decimal places, which decimal(18,6) cannot hold exactly")
	errOutOfScaled = errors.New("numeric: more than 18 digits, which decimal(18,6) cannot hold")
)

// decodeScaled decodes a binary numeric (base-10000 digits, the first of
// weight `weight`) straight into decimal(18,6)'s scaled integer, value × 10⁶,
// exactly: a value it cannot hold exactly is an error, never rounded.
func decodeScaled(b []byte) (int64, error) {
	h, err := readNumericHeader(b)
	if err != nil {
		return 0, err
	}
	if h.sign != 0 && h.sign != 0x4000 {
		return 0, errNotFinite
	}
	var acc uint64
	for i := 0; i < h.ndigits; i++ {
		dg := uint64(binary.BigEndian.Uint16(b[8+2*i:]))
		// e is the power of ten this digit's units have in the scaled integer.
		e := 4*(h.weight-i) + quantityScale
		switch {
		case dg == 0:
		case e < 0 && -e >= 4:
			return 0, errTooPrecise
		case e < 0:
			if dg%pow10[-e] != 0 {
				return 0, errTooPrecise
			}
			acc += dg / pow10[-e]
		case e >= len(pow10) || dg > (maxScaled-acc)/pow10[e]:
			return 0, errOutOfScaled
		default:
			acc += dg * pow10[e]
		}
	}
	if acc > maxScaled {
		return 0, errOutOfScaled
	}
	if h.sign == 0x4000 {
		return -int64(acc), nil
	}
	return int64(acc), nil
}

// appendScaled appends v, a quantity read as text, to d.values as
// decimal(18,6)'s scaled integer, exactly.
func (d *decoder) appendScaled(v decimal.Decimal) error {
	scaled := v.Shift(quantityScale)
	if !scaled.IsInteger() {
		return errTooPrecise
	}
	if scaled.Abs().Cmp(decimal.New(maxScaled, 0)) > 0 {
		return errOutOfScaled
	}
	*d.values = append(*d.values, scaled.IntPart())
	return nil
}
