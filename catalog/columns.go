package catalog

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
)

// The data-file writer below pqarrow.
//
// pqarrow's FileWriter takes Arrow records: for archival that meant building
// an Arrow record per page and file, which pqarrow then copied again into the
// column writers' value types (a []parquet.ByteArray per string column, a
// scratch buffer per timestamp, date and decimal column, definition levels
// from the validity bitmaps) — about a third of the encoding work, all of it
// garbage, on the goroutine that competes with the PostgreSQL fetch for the
// same two cores. So rows go straight into the column writers' own value
// types, and the file is set up exactly as pqarrow.NewFileWriter sets it up
// (the Parquet schema from ArrowSchema through pqarrow.ToParquet, the
// ARROW:schema key-value entry, the same file.Writer with the same
// properties): the footers, the pages, the statistics, the page index and the
// bloom filters are those pqarrow writes for the same rows in the same batches.

// openDataFile starts a data file of cfg's layout on sink.
func openDataFile(cfg meterstore.TableConfig, sink io.Writer, props *parquet.WriterProperties) (*dataFile, error) {
	arrowSchema := ArrowSchema(cfg)
	pqSchema, err := pqarrow.ToParquet(arrowSchema, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, err
	}
	// pqarrow also copies the Arrow schema's own metadata here; ArrowSchema has none.
	meta := metadata.KeyValueMetadata{}
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(flight.SerializeSchema(arrowSchema, memory.DefaultAllocator)))
	// the batch derives balancing_day from "from" and sparte (meterstore.Encode)
	meta.Append(MarkBalancingDay, MarkBalancingDayDerived)
	batch, err := newColumnBatch(cfg, pqSchema)
	if err != nil {
		return nil, err
	}
	w, err := file.NewParquetWriterWithError(sink, pqSchema.Root(), file.WithWriterProps(props), file.WithWriteMetadata(meta))
	if err != nil {
		return nil, err
	}
	return &dataFile{w: w, batch: batch}, nil
}

// dataFile is one Parquet file being written: rows are added to its batch and
// flushed into a buffered row group of at most RowGroupRows rows.
type dataFile struct {
	w      *file.Writer
	rg     file.BufferedRowGroupWriter // nil until the first flush and after a row group ended
	rgRows int
	rows   int64 // flushed
	batch  *columnBatch
	// wrongPair: a row flushed into the file carries a (sparte, unit) pair
	// metering does not allow, so its footer does not get MarkUnitPairs.
	wrongPair bool
}

// full reports whether the batch must be flushed before another row is
// added: it fills the row group, or it reached the batch bounds.
func (f *dataFile) full() bool {
	return f.rgRows+f.batch.n >= RowGroupRows || f.batch.bytes >= batchBytes
}

// open is the rows of the file's row group in the making, flushed or not.
func (f *dataFile) open() int { return f.rgRows + f.batch.n }

// flush writes the batch into the current row group, starting one when needed,
// and ends the row group when it is full. It returns the rows of the row group
// it ended, if any.
func (f *dataFile) flush() (int, error) {
	if f.batch.n == 0 {
		return 0, nil
	}
	if f.rg == nil {
		rg, err := f.w.AppendBufferedRowGroupChecked()
		if err != nil {
			return 0, err
		}
		f.rg = rg
	}
	if err := f.batch.writeTo(f.rg); err != nil {
		return 0, err
	}
	f.wrongPair = f.wrongPair || f.batch.wrongPair
	f.rgRows += f.batch.n
	f.rows += int64(f.batch.n)
	f.batch.reset()
	if f.rgRows >= RowGroupRows {
		return f.closeRowGroup()
	}
	return 0, nil
}

// endRowGroup flushes the batch and ends the row group early, for the memory
// bound on the rows open in all files (writeFiles). It returns the rows of the
// row group it ended.
func (f *dataFile) endRowGroup() (int, error) {
	if n, err := f.flush(); n > 0 || err != nil {
		return n, err // the batch filled the row group, which flush ended
	}
	if f.rg == nil {
		return 0, nil
	}
	return f.closeRowGroup()
}

// closeRowGroup closes the row group: its pages go to the file and its column
// writers — index buffers, dictionaries, the pages held back for the
// dictionary page — are let go; the file's next rows start a new one.
func (f *dataFile) closeRowGroup() (int, error) {
	n, err := f.rgRows, f.rg.Close()
	f.rg, f.rgRows = nil, 0
	return n, err
}

// close writes the last row group and the footer, and closes the sink. The
// footer says every row's (sparte, unit) pair was checked and allowed
// (MarkUnitPairs) unless a row's was not.
func (f *dataFile) close() error {
	if _, err := f.flush(); err != nil {
		return err
	}
	if !f.wrongPair {
		if err := f.w.AppendKeyValueMetadata(MarkUnitPairs, MarkUnitPairsChecked); err != nil {
			return err
		}
	}
	return f.w.Close()
}

// columnBatch holds rows column by column in the Parquet column writers'
// value types. Its slices are truncated, not freed, after each flush: adding
// a row is a few appends and no allocation. Its columns follow the layout by
// type (Row.Field), so a column added to the layout needs no code here.
type columnBatch struct {
	cfg      meterstore.TableConfig
	nExtra   int // declared columns
	n        int
	bytes    int // appended to the slices below since the last flush: the batch's size
	rowBytes int // what a row appends besides its strings
	str      []stringColumn
	ts       []int64Column   // timestamps, µs since the epoch
	dec      []decimalColumn // decimal(18,6) and decimal(20,0)
	days     []int32Column   // dates, days since the epoch
	// Scratch: the row being added, read once and checked before anything is appended.
	texts []textValue
	day   balancingDay
	pair  unitPairCheck
	// wrongPair: a row of the batch carries a pair metering does not allow
	// (handed to the file at the flush, with the rows).
	wrongPair bool
	// Flush scratch, shared by the columns (a column writer copies what it keeps).
	byteArrays []parquet.ByteArray
	fixed      []parquet.FixedLenByteArray
}

// balancingDay is the day the encoder stores for the row being added,
// derived from its "from" and sparte whatever the row carries: every file
// the encoder writes says so in its footer (MarkBalancingDay), and a row read
// back from a file another writer added with other days (a compaction's
// input) is stored with the calendar's. Rows come in key order, most in the
// day of the row before, so the day is found by comparing "from" with the
// bounds of the days last found (metering.BalancingDays), not by converting
// each row's instant to Berlin's zone.
type balancingDay struct {
	name   string // the sparte last parsed
	sparte metering.Sparte
	days   metering.BalancingDays
	date   metering.Date
	day    time.Time // date as the column's value
}

// derive sets d.day for r.
func (d *balancingDay) derive(r *meterstore.Row) error {
	if r.Sparte != d.name || d.name == "" {
		sp, err := metering.ParseSparte(r.Sparte)
		if err != nil {
			return fmt.Errorf("balancing day: %w", err)
		}
		d.name, d.sparte = r.Sparte, sp
	}
	if date := d.days.Of(r.From, d.sparte); date != d.date || d.day.IsZero() {
		d.date, d.day = date, date.Time()
	}
	return nil
}

// unitPairCheck is the encoder's check of each row's (sparte, unit) pair
// (meterstore.CheckUnitPair), which earns a file MarkUnitPairs. Rows come in
// key order, a channel's rows in one pair, so the last pair's answer is kept
// and a row costs two string comparisons.
type unitPairCheck struct {
	sparte, unit string // the pair last checked, copied: a row's strings may live in a reused buffer
	checked      bool
	allowed      bool
}

// allows reports whether metering allows r's pair.
func (c *unitPairCheck) allows(r *meterstore.Row) bool {
	if !c.checked || r.Sparte != c.sparte || r.Unit != c.unit {
		c.sparte, c.unit, c.checked = strings.Clone(r.Sparte), strings.Clone(r.Unit), true
		c.allowed = meterstore.CheckUnitPair(r.Sparte, r.Unit) == nil
	}
	return c.allowed
}

type textValue struct {
	s  string
	ok bool
}

// stringColumn is one BYTE_ARRAY column: the non-null values back to back,
// where each ends, and for a nullable column a definition level per row.
type stringColumn struct {
	leaf     int
	nullable bool
	data     []byte
	ends     []int32 // a batch holds at most batchBytes plus one row
	defs     []int16
}

// int64Column is one INT64 column: the non-null values, and for a nullable
// column a definition level per row.
type int64Column struct {
	leaf     int
	nullable bool
	vals     []int64
	defs     []int16
}

// int32Column is one INT32 date column (never null).
type int32Column struct {
	leaf int
	vals []int32
}

// decimalColumn is a decimal column as the Parquet schema stores it: the
// unscaled value as an INT64 where the precision allows (decimal(18,6), see
// writerOptions), else a FIXED_LEN_BYTE_ARRAY of its big-endian two's
// complement, width bytes per value (Parquet's minimal width for the
// precision: decimal(20,0)).
type decimalColumn struct {
	leaf  int
	width int            // FIXED_LEN_BYTE_ARRAY bytes per value; 0 for an INT64 column
	data  []byte         // FIXED_LEN_BYTE_ARRAY values
	ints  []int64        // INT64 values
	num   decimal128.Num // the row being added
}

// newColumnBatch lays a batch out over sc, the Parquet schema of cfg, and
// checks that each column has the physical type the batch writes it as.
func newColumnBatch(cfg meterstore.TableConfig, sc *schema.Schema) (*columnBatch, error) {
	cols := cfg.Columns()
	if sc.NumColumns() != len(cols) {
		return nil, fmt.Errorf("parquet schema of %s has %d columns, the table %d", cfg.Name(), sc.NumColumns(), len(cols))
	}
	b := &columnBatch{cfg: cfg, nExtra: len(cols) - meterstore.CoreColumnCount}
	want := make([]parquet.Type, len(cols))
	for leaf, c := range cols {
		switch c.Type {
		case meterstore.TypeText:
			b.str = append(b.str, stringColumn{leaf: leaf, nullable: c.Nullable})
			want[leaf] = parquet.Types.ByteArray
			b.rowBytes += 4 // its end
		case meterstore.TypeTimestamp:
			b.ts = append(b.ts, int64Column{leaf: leaf, nullable: c.Nullable})
			want[leaf] = parquet.Types.Int64
			b.rowBytes += 8
		case meterstore.TypeDecimal18_6, meterstore.TypeDecimal20_0:
			dc := decimalColumn{leaf: leaf}
			want[leaf] = parquet.Types.Int64
			b.rowBytes += 8
			if c.Type == meterstore.TypeDecimal20_0 {
				dc.width = sc.Column(leaf).TypeLength()
				want[leaf] = parquet.Types.FixedLenByteArray
				b.rowBytes += dc.width - 8
			}
			b.dec = append(b.dec, dc)
		case meterstore.TypeDate:
			b.days = append(b.days, int32Column{leaf: leaf})
			want[leaf] = parquet.Types.Int32
			b.rowBytes += 4
		}
		if c.Nullable && c.Type != meterstore.TypeDate && c.Type != meterstore.TypeDecimal18_6 && c.Type != meterstore.TypeDecimal20_0 {
			b.rowBytes += 2 // its definition level
		}
	}
	b.texts = make([]textValue, len(b.str))
	for leaf, t := range want {
		if c := sc.Column(leaf); c.PhysicalType() != t || c.Name() != cols[leaf].Name {
			return nil, fmt.Errorf("parquet column %d of %s is %s %s, the writer expects %s %s", leaf, cfg.Name(), c.Name(), c.PhysicalType(), cols[leaf].Name, t)
		}
	}
	return b, nil
}

func (b *columnBatch) reset() {
	b.n, b.bytes, b.wrongPair = 0, 0, false
	for i := range b.str {
		c := &b.str[i]
		c.data, c.ends, c.defs = c.data[:0], c.ends[:0], c.defs[:0]
	}
	for i := range b.ts {
		b.ts[i].vals, b.ts[i].defs = b.ts[i].vals[:0], b.ts[i].defs[:0]
	}
	for i := range b.dec {
		b.dec[i].data, b.dec[i].ints = b.dec[i].data[:0], b.dec[i].ints[:0]
	}
	for i := range b.days {
		b.days[i].vals = b.days[i].vals[:0]
	}
}

func (c *stringColumn) add(v textValue) int {
	if c.nullable {
		if !v.ok {
			c.defs = append(c.defs, 0)
			return 0
		}
		c.defs = append(c.defs, 1)
	}
	c.data = append(c.data, v.s...)
	c.ends = append(c.ends, int32(len(c.data)))
	return len(v.s)
}

func (c *int64Column) add(v int64, null bool) {
	if c.nullable {
		if null {
			c.defs = append(c.defs, 0)
			return
		}
		c.defs = append(c.defs, 1)
	}
	c.vals = append(c.vals, v)
}

// add appends n: as an INT64 (the value is known to fit: decimal(18,6)), or
// as its big-endian two's complement cut to the column's width (uint64
// versions).
func (c *decimalColumn) add(n decimal128.Num) {
	if c.width == 0 {
		c.ints = append(c.ints, int64(n.LowBits()))
		return
	}
	var be [16]byte
	binary.BigEndian.PutUint64(be[:8], uint64(n.HighBits()))
	binary.BigEndian.PutUint64(be[8:], n.LowBits())
	c.data = append(c.data, be[16-c.width:]...)
}

// add appends one row and returns the bytes it took. A row it refuses leaves
// the batch as it was.
func (b *columnBatch) add(r *meterstore.Row) (int, error) {
	if len(r.Extra) != b.nExtra {
		return 0, fmt.Errorf("row of malo %s carries %d declared columns, table %s declares %d", r.MaloID, len(r.Extra), b.cfg.Name(), b.nExtra)
	}
	if err := b.check(r); err != nil {
		return 0, fmt.Errorf("malo %s %s at %s: %w", r.MaloID, r.ObisCode, r.From.UTC().Format(time.RFC3339), err)
	}
	size := b.rowBytes
	for i := range b.str {
		size += b.str[i].add(b.texts[i])
	}
	for i := range b.ts {
		t, ok := r.Time(b.ts[i].leaf)
		var us int64
		if ok {
			us = t.UnixMicro()
		}
		b.ts[i].add(us, !ok)
	}
	for i := range b.dec {
		b.dec[i].add(b.dec[i].num)
	}
	for i := range b.days {
		t, _ := r.Time(b.days[i].leaf)
		if b.days[i].leaf == meterstore.ColBalancingDay {
			t = b.day.day
		}
		b.days[i].vals = append(b.days[i].vals, daysSinceEpoch(t))
	}
	if !b.pair.allows(r) {
		b.wrongPair = true
	}
	b.n++
	b.bytes += size
	return size, nil
}

// check reads the row's text and decimal values into the batch's scratch and
// refuses a NULL in a required column or a quantity decimal(18,6) cannot hold.
func (b *columnBatch) check(r *meterstore.Row) error {
	if err := b.day.derive(r); err != nil {
		return err
	}
	for i := range b.dec {
		c := &b.dec[i]
		switch f := r.Field(c.leaf).(type) {
		case *decimal.Decimal:
			n, err := valueToDecimal128(*f)
			if err != nil {
				return err
			}
			c.num = n
		case *uint64:
			c.num = decimal128.FromU64(*f)
		}
	}
	for i := range b.str {
		c := &b.str[i]
		s, ok := r.Text(c.leaf)
		if !ok && !c.nullable {
			return fmt.Errorf("column %s is null", b.cfg.Columns()[c.leaf].Name)
		}
		b.texts[i] = textValue{s, ok}
	}
	for i := range b.ts {
		if c := &b.ts[i]; !c.nullable {
			if _, ok := r.Time(c.leaf); !ok {
				return fmt.Errorf("column %q is null", b.cfg.Columns()[c.leaf].Name)
			}
		}
	}
	return nil
}

// daysSinceEpoch is arrow.Date32FromTime, floor(Unix seconds / 86 400),
// without the time.Truncate that made it a tenth of a row's conversion.
func daysSinceEpoch(t time.Time) int32 {
	s := t.Unix()
	d := s / 86_400
	if s%86_400 < 0 {
		d--
	}
	return int32(d)
}

// writeTo writes the batch's rows into the row group's column writers.
func (b *columnBatch) writeTo(rg file.BufferedRowGroupWriter) error {
	column := func(leaf int) (file.ColumnChunkWriter, error) {
		cw, err := rg.Column(leaf)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", b.cfg.Columns()[leaf].Name, err)
		}
		return cw, nil
	}
	levels := func(nullable bool, defs []int16) []int16 {
		if nullable {
			return defs
		}
		return nil
	}
	for i := range b.str {
		c := &b.str[i]
		cw, err := column(c.leaf)
		if err != nil {
			return err
		}
		vals, start := b.byteArrays[:0], int32(0)
		for _, end := range c.ends {
			vals = append(vals, c.data[start:end:end])
			start = end
		}
		b.byteArrays = vals
		if _, err := cw.(*file.ByteArrayColumnChunkWriter).WriteBatch(vals, levels(c.nullable, c.defs), nil); err != nil {
			return fmt.Errorf("column %s: %w", b.cfg.Columns()[c.leaf].Name, err)
		}
	}
	for i := range b.ts {
		c := &b.ts[i]
		cw, err := column(c.leaf)
		if err != nil {
			return err
		}
		if _, err := cw.(*file.Int64ColumnChunkWriter).WriteBatch(c.vals, levels(c.nullable, c.defs), nil); err != nil {
			return fmt.Errorf("column %s: %w", b.cfg.Columns()[c.leaf].Name, err)
		}
	}
	for i := range b.dec {
		c := &b.dec[i]
		cw, err := column(c.leaf)
		if err != nil {
			return err
		}
		if c.width == 0 {
			if _, err := cw.(*file.Int64ColumnChunkWriter).WriteBatch(c.ints, nil, nil); err != nil {
				return fmt.Errorf("column %s: %w", b.cfg.Columns()[c.leaf].Name, err)
			}
			continue
		}
		vals := b.fixed[:0]
		for i := 0; i+c.width <= len(c.data); i += c.width {
			vals = append(vals, c.data[i:i+c.width:i+c.width])
		}
		b.fixed = vals
		if _, err := cw.(*file.FixedLenByteArrayColumnChunkWriter).WriteBatch(vals, nil, nil); err != nil {
			return fmt.Errorf("column %s: %w", b.cfg.Columns()[c.leaf].Name, err)
		}
	}
	for i := range b.days {
		c := &b.days[i]
		cw, err := column(c.leaf)
		if err != nil {
			return err
		}
		if _, err := cw.(*file.Int32ColumnChunkWriter).WriteBatch(c.vals, nil, nil); err != nil {
			return fmt.Errorf("column %s: %w", b.cfg.Columns()[c.leaf].Name, err)
		}
	}
	return nil
}
