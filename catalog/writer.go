package catalog

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"iter"
	"net/url"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/meterstore/meterstore"
)

// The data-file writer.
//
// iceberg-go v0.7.0's writer (table.WriteRecords) builds its Parquet writer
// properties from table properties only, and has none for the page index
// (column index + offset index) or for bloom-filter sizing (every filter is
// allocated at write.parquet.bloom-filter-max-bytes whatever the row count).
// So the files are written here with arrow-go's Parquet writer, set up the way
// its pqarrow writer sets it up (columns.go) — the same Parquet
// implementation iceberg-go uses, so REQUIRED fields and the
// FLBA decimal(20,0) version column come out the same — into the table's data
// location with iceberg-go's partition paths, and registered with iceberg-go
// through table.DataFileFromMetadata: partition values, record counts and the
// column bounds (full for from and version, as the table's metrics properties
// say) come from the footer just written, exactly as iceberg-go's own writer
// records them.
//
// Footer facts: ZSTD level 3; timestamp columns DELTA_BINARY_PACKED (no
// dictionary); decimal(18,6) as INT64, DELTA_BINARY_PACKED (no dictionary),
// decimal(20,0) as FIXED_LEN_BYTE_ARRAY; row groups of RowGroupRows rows (fewer when a write has many
// version files open at once: openRowGroupRows; compaction ends them at a
// malo_id boundary after compactRowGroupRows); statistics and
// the page index on every column; split-block bloom filters on malo_id and
// obis_code at 1 % false-positive probability — malo_id sized to the distinct
// ids the row group actually holds (arrow-go's adaptive filter: the smallest
// of a ladder of candidates, 2 KiB … BloomFilterMaxBytes, that holds them),
// obis_code sized for ObisBloomNDV codes (128 B) — never more than
// BloomFilterMaxBytes; sorting_columns (malo_id, obis_code, from)
// in every row group, which the writer enforces.

// DataFileLayout names how the writer lays a data file out — the columns'
// physical types and encodings, where compaction ends a row group — and is
// changed with any of them, so that files kept from an earlier build (the
// benchmarks' fixture directories) can be told from the files this build
// writes: a reader's speed depends on the layout as much as on the reader.
const DataFileLayout = "decimal(18,6) INT64, it and timestamps DELTA_BINARY_PACKED; compacted row groups end at a malo_id boundary after 32768 rows"

// Bloom-filter tuning.
const (
	BloomFilterFPP = 0.01
	// ObisBloomNDV is the distinct OBIS codes a row group's obis_code filter is sized for.
	ObisBloomNDV = 64
	// bloomCandidates: 64 KiB halved 12 times reaches the 32-byte minimum.
	bloomCandidates = 12
	dataPageBytes   = 1 << 20
	pageBatchRows   = 20000
)

// BloomColumns are the columns carrying bloom filters.
var BloomColumns = []string{"malo_id", "obis_code"}

func writerProperties(cfg meterstore.TableConfig) *parquet.WriterProperties {
	return parquet.NewWriterProperties(writerOptions(cfg)...)
}

// writerOptions are the data files' writer properties, in order (a later
// option overrides an earlier one).
func writerOptions(cfg meterstore.TableConfig) []parquet.WriterProperty {
	props := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(3),
		parquet.WithMaxRowGroupLength(RowGroupRows),
		parquet.WithDataPageSize(dataPageBytes),
		parquet.WithBatchSize(pageBatchRows),
		parquet.WithDataPageVersion(parquet.DataPageV1), // what Iceberg Java and parquet-mr write: every reader has it
		parquet.WithStats(true),
		parquet.WithPageIndexEnabled(true),
		parquet.WithMaxBloomFilterBytes(BloomFilterMaxBytes),
		parquet.WithCreatedBy("meterstore catalog (arrow-go " + parquet.DefaultCreatedBy + ")"),
		// decimal(18,6) as the INT64 of its unscaled value, as the Parquet and
		// Iceberg specs have it for a precision up to 18 (decimal(20,0) stays
		// FIXED_LEN_BYTE_ARRAY): readers take 8-byte integers as they are, where
		// a FIXED_LEN_BYTE_ARRAY is converted from big-endian bytes value by value.
		parquet.WithStoreDecimalAsInteger(true),
	}
	for _, c := range BloomColumns {
		props = append(props, parquet.WithBloomFilterEnabledFor(c, true), parquet.WithBloomFilterFPPFor(c, BloomFilterFPP))
	}
	// malo_id: sized by what the row group holds (adaptive; arrow-go's smallest
	// candidate is 2 KiB, ~1 000 distinct ids at 1 %). obis_code: a code list —
	// sized for ObisBloomNDV distinct codes (128 B); more codes only raise the
	// false-positive rate, a bloom filter never drops a present value.
	props = append(props,
		parquet.WithAdaptiveBloomFilterEnabledFor("malo_id", true),
		parquet.WithBloomFilterCandidatesFor("malo_id", bloomCandidates),
		parquet.WithBloomFilterNDVFor("obis_code", ObisBloomNDV))
	cols := cfg.Columns()
	colIdx := map[string]int{}
	for i, c := range cols {
		colIdx[c.Name] = i
		if c.Type == meterstore.TypeTimestamp || c.Type == meterstore.TypeDecimal18_6 {
			// A meter's instants step by its resolution, so their deltas pack
			// into a few bits; a dictionary of them is repeated in every row
			// group and costs most of a small one. A meter's quantities are
			// near each other too, and as many distinct as there are rows.
			props = append(props, parquet.WithDictionaryFor(c.Name, false), parquet.WithEncodingFor(c.Name, parquet.Encodings.DeltaBinaryPacked))
			continue
		}
		// Like iceberg-go: high-cardinality columns fall back from dictionary to plain.
		props = append(props, parquet.WithDictionaryCostFallbackFor(c.Name, true))
	}
	var sorting []parquet.SortingColumn
	for _, name := range SortOrderColumns {
		sorting = append(sorting, parquet.SortingColumn{ColumnIdx: int32(colIdx[name]), Descending: false, NullsFirst: true})
	}
	return append(props, parquet.WithSortingColumns(sorting))
}

// partitioner computes a row's partition from the table's spec.
type partitioner struct {
	spec   iceberg.PartitionSpec
	fields []partField
}

type partField struct {
	id    int
	name  string
	extra int  // index into Row.Extra for an identity field
	month bool // month(from)
}

func newPartitioner(cfg meterstore.TableConfig, tbl *table.Table) (*partitioner, error) {
	sc := tbl.Schema()
	spec := tbl.Spec()
	p := &partitioner{spec: spec}
	extras := cfg.ExtraColumns()
	for _, f := range spec.Fields() {
		src, _ := sc.FindColumnName(f.SourceID())
		pf := partField{id: f.FieldID, name: f.Name, extra: -1}
		switch f.Transform.(type) {
		case iceberg.MonthTransform:
			if src != "from" {
				return nil, fmt.Errorf("partition field %s: month(%s) is not supported", f.Name, src)
			}
			pf.month = true
		case iceberg.IdentityTransform:
			for i, c := range extras {
				if c.Name == src {
					pf.extra = i
				}
			}
			if pf.extra < 0 {
				return nil, fmt.Errorf("partition field %s: identity(%s) is not a declared column", f.Name, src)
			}
		default:
			return nil, fmt.Errorf("partition field %s: transform %s is not supported", f.Name, f.Transform)
		}
		p.fields = append(p.fields, pf)
	}
	return p, nil
}

func monthsSinceEpoch(t time.Time) int32 {
	t = t.UTC()
	return int32((t.Year()-1970)*12 + int(t.Month()) - 1)
}

// of returns the partition of r: its key (the path), values and the bounds
// same uses to recognise the next row of the partition without building a key.
func (p *partitioner) of(r *meterstore.Row) (*partState, error) {
	var path strings.Builder
	ps := &partState{values: make(map[int]any, len(p.fields))}
	for i, f := range p.fields {
		if i > 0 {
			path.WriteByte('/')
		}
		human := "null"
		if f.month {
			m := monthsSinceEpoch(r.From)
			ps.values[f.id] = m
			ps.monthStart = time.Date(1970+int(m)/12, time.Month(m%12+1), 1, 0, 0, 0, 0, time.UTC)
			ps.monthEnd = ps.monthStart.AddDate(0, 1, 0)
			human = fmt.Sprintf("%04d-%02d", 1970+int(m)/12, int(m)%12+1)
		} else {
			if f.extra >= len(r.Extra) || r.Extra[f.extra] == nil {
				return nil, fmt.Errorf("malo %s %s at %s: no value for partition column %s", r.MaloID, r.ObisCode, formatWatermark(r.From), f.name)
			}
			ps.values[f.id] = *r.Extra[f.extra]
			ps.idents = append(ps.idents, *r.Extra[f.extra])
			human = *r.Extra[f.extra]
		}
		path.WriteString(url.QueryEscape(f.name) + "=" + url.QueryEscape(human))
	}
	ps.key = path.String()
	return ps, nil
}

// same reports whether r belongs to ps: a window's rows arrive in runs of one
// partition, so comparing a row's "from" with the month's bounds and its
// identity values with the partition's spares building a key per row.
func (p *partitioner) same(ps *partState, r *meterstore.Row) bool {
	k := 0
	for _, f := range p.fields {
		if f.month {
			if r.From.Before(ps.monthStart) || !r.From.Before(ps.monthEnd) {
				return false
			}
			continue
		}
		if f.extra >= len(r.Extra) || r.Extra[f.extra] == nil || *r.Extra[f.extra] != ps.idents[k] {
			return false
		}
		k++
	}
	return true
}

type countingWriter struct {
	w io.WriteCloser
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
func (c *countingWriter) Close() error { return c.w.Close() }

// MaxVersionFilesPerPartition bounds how many files one write (an archival
// window, a cold append) opens per partition to keep versions apart.
//
// The engine skips version resolution for a run of cold files only when the
// files' statistics prove a single version (design invariant 8: version
// min = max in every file of a run of files whose "from" bounds overlap, and
// the same version across the run). MSCONS versions are per delivery, i.e. per
// balancing day (Berlin local day, gas day), so a UTC-day window holds rows of
// two balancing days at two versions; written as one file per partition, every
// file would hold two versions and elision would never fire. So rows are
// written in files per (partition, version): a window's files are
// version-homogeneous and, the versions being per balancing day, the versions
// cover disjoint "from" ranges (a version's rows continue in a new file after
// maxRowGroupsPerFile row groups; its files are one run of one version).
//
// Versions derived from arrival (per delivery) could make a window hold many
// versions per partition, and one file each would explode the file count and
// the memory of open writers. So the first MaxVersionFilesPerPartition - 1
// versions of a partition get a file each and the last file takes every
// further version (it holds several; its runs are resolved, not elided).
// Correctness never depends on this split — resolution reads every version
// wherever it is — only elision does.
const MaxVersionFilesPerPartition = 8

// Memory bounds, whatever the window's size, the width of its rows and the
// number of files it opens.
//
// Batches: a file's rows are copied into its column batch as they arrive and
// handed to its column writers when the batch holds batchBytes or fills the
// row group; when the batches of all files together hold bufferedBytes, every
// batch of at least minFlushRows rows is handed over (the largest, if none is
// that big). A batch's buffers are reused from one flush to the next, so they
// keep the size of the most it held; a window's versions can arrive in long
// runs, one file at a time, so the bound has to be per file. And a column
// chunk does not start with a handful of rows, for arrow-go decides between
// dictionary and plain encoding on a chunk's first writes.
//
// Row groups: a buffered row group holds, per column, the dictionary indices
// of the page in the making (4 bytes a row until the page is cut at
// dataPageBytes of values, which for a narrow column is most of the row
// group) and the pages held back for the dictionary page — ~60 bytes a row in
// all. A window of many versions opens a file per version, each with its row
// group in the making; so when the row groups open in all files together reach
// openRowGroupRows rows, the largest is ended early. One row group's worth in
// all: the archiver's memory must be the same for a window of a million rows
// and one of ten million, so its bounds must be met early in the smaller one.
// A UTC-day window of per-day versions
// (two files per partition, ~92 % and ~8 % of the rows) writes row groups of
// about 92 % of RowGroupRows; one of eight equal versions writes row groups of
// an eighth to a quarter.
const (
	batchBytes       = 1 << 20
	bufferedBytes    = 8 << 20
	minFlushRows     = 1_024
	openRowGroupRows = RowGroupRows
)

// Footer bounds. arrow-go keeps what a file's footer needs until the file is
// closed: per row group, malo_id's bloom filter candidates (up to ~125 KiB),
// the column chunks' metadata and statistics, and the page index — with long
// JSON source details in the statistics, about half a MiB a row group. So that state is bounded, whatever the window's
// size: a file is closed after maxRowGroupsPerFile row groups (8 full row
// groups are 2 M rows, a file of a size Iceberg readers handle well; Iceberg's
// own writers roll at a target file size too), and when the open files
// together hold maxFooterRowGroups row groups, the one holding most is closed
// early — as many as one file may hold, so that a window of many versions
// meets the bound early too (see openRowGroupRows). Its version continues in a
// new file, opened when its next row comes. A window of per-day versions
// (two files per partition, one of them small) meets the second bound only
// when the small one has ended a row group too, or several of its partitions
// (tenants) are large.
const (
	maxRowGroupsPerFile = 8
	maxFooterRowGroups  = maxRowGroupsPerFile
)

// fileBounds are the bounds on the files of a write.
type fileBounds struct {
	versions        int   // writers (slots) per partition, 0 = no bound (see MaxVersionFilesPerPartition)
	rowGroups       int   // row groups per file
	footerRowGroups int   // row groups in all open files
	targetBytes     int64 // a file is closed once it holds this many bytes (checked as a row group ends); 0 = no bound
	openRows        int   // rows in the row groups in the making of all files; 0 = openRowGroupRows
	// rowGroupRows: a row group ends at the first malo_id boundary after it
	// holds this many rows (0: only at RowGroupRows), so that a meter's rows
	// of the file sit in one small row group whose malo_id statistics let a
	// reader skip every other one.
	rowGroupRows int
	// maloBoundary: a file due to close takes the rest of its last malo_id
	// first, so the files of a partition have disjoint malo_id bounds (the
	// engine groups runs by them).
	maloBoundary bool
}

var defaultBounds = fileBounds{versions: MaxVersionFilesPerPartition, rowGroups: maxRowGroupsPerFile, footerRowGroups: maxFooterRowGroups}

// partState is one partition of a write: its slot files, the bounds that
// recognise its rows, and the sort key of the last row seen, for the order check.
type partState struct {
	key                  string
	values               map[int]any
	monthStart, monthEnd time.Time
	idents               []string // identity partition values, in spec order
	bySlot               map[uint64]*partWriter
	files                []*partWriter // creation order; len ≤ the fan-out bound
	lastSlot             uint64
	lastFile             *partWriter // the file of lastSlot
	last                 sortKey
	seen                 bool
}

// sortKey is a row's position in the (malo_id, obis_code, from) order.
type sortKey struct {
	malo, obis string
	from       time.Time
}

// after reports whether r may follow k in (malo_id, obis_code, from) order.
func (k *sortKey) after(r *meterstore.Row) bool {
	if k.malo != r.MaloID {
		return k.malo < r.MaloID
	}
	if k.obis != r.ObisCode {
		return k.obis < r.ObisCode
	}
	return !r.From.Before(k.from)
}

// partWriter writes one slot of a partition (a version, for archival): its
// open data file, if any, and the files it already finished (closed at a
// footer bound).
type partWriter struct {
	part      *partState
	slot      uint64 // the slot it was opened for
	path      string
	sink      *countingWriter
	file      *dataFile    // nil between files
	batch     *columnBatch // kept between files, for its buffers
	rowGroups int          // row groups the open file has ended
	lastMalo  string       // of the last row added to the open file
	due       bool         // the open file is closed at the next malo_id (fileBounds.maloBoundary)
	paths     []string     // every file opened, finished or not, in order
	finished  []iceberg.DataFile
}

// fanout streams rows into data files per (partition, slot) — a window's rows
// of several partitions and versions arrive interleaved — and registers them
// as iceberg DataFiles. A partition gets at most bounds.versions writers (0 =
// no bound); the last one takes every slot beyond (see
// MaxVersionFilesPerPartition). A writer's file is closed at the footer bounds
// (bounds.rowGroups, bounds.footerRowGroups, bounds.targetBytes) and the
// writer's next row opens a new one.
//
// Rows must arrive in (malo_id, obis_code, from) order per partition, which
// the footers declare; a row out of order is an error. Each file holds a
// subsequence of its partition's rows, so it is in that order too. On error
// (abort) the files written so far are removed.
//
// Memory: the column batches (bufferedBytes in all) plus the row groups in the
// making (openRowGroupRows rows in all) plus the footer state of the open files
// (bounds.footerRowGroups row groups in all); see the constants above.
type fanout struct {
	t      *Table
	tbl    *table.Table
	bounds fileBounds
	part   *partitioner
	fsys   iceio.IO
	wfs    iceio.WriteFileIO
	locs   table.LocationProvider
	props  *parquet.WriterProperties
	id     string // this write's, in every file name
	// footer, when set, returns key-value entries for the footer of w's file
	// about to be closed.
	footer func(w *partWriter) map[string]string

	parts     map[string]*partState
	cur       *partState
	order     []*partWriter
	written   []string // every file created, for the removal on abort
	buffered  int      // bytes in all batches
	openRows  int      // rows in all row groups in the making, batched or flushed
	footerRGs int      // row groups ended in all open files
}

func (t *Table) newFanout(ctx context.Context, tbl *table.Table, bounds fileBounds) (*fanout, error) {
	name := t.cfg.Name()
	if err := t.agreedLayout(tbl); err != nil {
		return nil, err
	}
	part, err := newPartitioner(t.cfg, tbl)
	if err != nil {
		return nil, fmt.Errorf("cold table %s: %w", name, err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("cold table %s: file system: %w", name, err)
	}
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("cold table %s: the warehouse file system cannot write", name)
	}
	locs, err := table.LoadLocationProvider(tbl.Location(), tbl.Properties())
	if err != nil {
		return nil, fmt.Errorf("cold table %s: location provider: %w", name, err)
	}
	return &fanout{t: t, tbl: tbl, bounds: bounds, part: part, fsys: fsys, wfs: wfs, locs: locs,
		props: writerProperties(t.cfg), id: uuid.New().String(), parts: map[string]*partState{}}, nil
}

// writeFiles streams row pages into data files per (partition, version)
// (fanout) and returns them registered.
func (t *Table) writeFiles(ctx context.Context, tbl *table.Table, pages iter.Seq2[[]meterstore.Row, error], bounds fileBounds) ([]iceberg.DataFile, error) {
	f, err := t.newFanout(ctx, tbl, bounds)
	if err != nil {
		return nil, err
	}
	for page, perr := range pages {
		if perr == nil {
			perr = ctx.Err()
		}
		if perr != nil {
			f.abort()
			return nil, perr
		}
		for i := range page {
			if err := f.add(&page[i], page[i].Version); err != nil {
				f.abort()
				return nil, err
			}
		}
	}
	files, err := f.close()
	if err != nil {
		f.abort()
		return nil, err
	}
	return files, nil
}

// start opens a data file for w, with w's batch if it had one before.
func (f *fanout) start(w *partWriter) error {
	fileName := fmt.Sprintf("00000-%d-%s-%05d.parquet", len(f.written), f.id, 1)
	loc := f.locs.NewDataLocation(w.part.key + "/" + fileName)
	out, err := f.wfs.Create(loc)
	if err != nil {
		return fmt.Errorf("create %s: %w", loc, err)
	}
	f.written = append(f.written, loc)
	sink := &countingWriter{w: out}
	df, err := openDataFile(f.t.cfg, sink, f.props)
	if err != nil {
		out.Close()
		return fmt.Errorf("parquet writer %s: %w", loc, err)
	}
	if w.batch != nil {
		df.batch = w.batch
	}
	w.path, w.sink, w.file, w.batch = loc, sink, df, df.batch
	w.paths = append(w.paths, loc)
	return nil
}

func (f *fanout) open(p *partState, slot uint64) (*partWriter, error) {
	w := &partWriter{part: p, slot: slot}
	if err := f.start(w); err != nil {
		return nil, err
	}
	f.order = append(f.order, w)
	p.files = append(p.files, w)
	return w, nil
}

// finish closes w's file — its last row group, its footer — and registers it.
func (f *fanout) finish(w *partWriter) error {
	df := w.file
	f.buffered -= df.batch.bytes
	f.openRows -= df.open()
	f.footerRGs -= w.rowGroups
	if f.footer != nil {
		for k, v := range f.footer(w) {
			if err := df.w.AppendKeyValueMetadata(k, v); err != nil {
				return fmt.Errorf("footer of %s: %w", w.path, err)
			}
		}
	}
	w.file, w.rowGroups, w.due = nil, 0, false
	if err := df.close(); err != nil { // closes the sink too
		return fmt.Errorf("close %s: %w", w.path, err)
	}
	meta, err := df.w.FileMetadata()
	if err != nil {
		return fmt.Errorf("footer of %s: %w", w.path, err)
	}
	tbl := f.tbl
	reg, err := table.DataFileFromMetadata(table.DataFileArgs{
		Schema:          tbl.Schema(),
		Spec:            tbl.Spec(),
		Format:          iceberg.ParquetFile,
		Metadata:        meta,
		FilePath:        w.path,
		FileSize:        w.sink.n,
		Content:         iceberg.EntryContentData,
		PartitionValues: w.part.values,
		SortOrderID:     tbl.SortOrder().OrderID(),
		Properties:      tbl.Properties(),
		FormatVersion:   tbl.Metadata().Version(),
	})
	if err != nil {
		return fmt.Errorf("register %s: %w", w.path, err)
	}
	if reg.Count() != df.rows {
		return fmt.Errorf("%s holds %d rows, %d written", w.path, reg.Count(), df.rows)
	}
	if err := f.t.rememberWritten(w.path, meta); err != nil {
		return err
	}
	w.finished = append(w.finished, reg)
	return nil
}

// retire closes w's file now, or with bounds.maloBoundary marks it due, to be
// closed before a row of the next malo_id.
func (f *fanout) retire(w *partWriter) error {
	if f.bounds.maloBoundary {
		w.due = true
		return nil
	}
	return f.finish(w)
}

// writerFor returns the writer of slot s in p, opening it within the bound.
func (f *fanout) writerFor(p *partState, s uint64) (*partWriter, error) {
	if p.lastFile != nil && p.lastSlot == s {
		return p.lastFile, nil
	}
	w := p.bySlot[s]
	switch {
	case w != nil:
	case f.bounds.versions > 0 && len(p.files) >= f.bounds.versions:
		w = p.files[len(p.files)-1] // the last writer takes every further slot
	default:
		opened, err := f.open(p, s)
		if err != nil {
			return nil, err
		}
		w = opened
	}
	p.bySlot[s] = w
	p.lastSlot, p.lastFile = s, w
	return w, nil
}

// largest is the writer with an open file that has the most of what by measures.
func (f *fanout) largest(by func(*partWriter) int) *partWriter {
	var l *partWriter
	for _, w := range f.order {
		if w.file != nil && (l == nil || by(w) > by(l)) {
			l = w
		}
	}
	return l
}

// mostRowGroups is the open file not yet due that has ended most row groups.
func (f *fanout) mostRowGroups() *partWriter {
	var l *partWriter
	for _, w := range f.order {
		if w.file != nil && !w.due && (l == nil || w.rowGroups > l.rowGroups) {
			l = w
		}
	}
	return l
}

// flush hands w's batch over, or with end also ends its row group; a row
// group ended counts against the footer bounds.
func (f *fanout) flush(w *partWriter, end bool) error {
	f.buffered -= w.file.batch.bytes
	var ended int
	var err error
	if end {
		ended, err = w.file.endRowGroup()
	} else {
		ended, err = w.file.flush()
	}
	f.openRows -= ended
	if err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if ended == 0 {
		return nil
	}
	w.rowGroups++
	f.footerRGs++
	switch {
	case w.due:
	case w.rowGroups >= f.bounds.rowGroups, f.bounds.targetBytes > 0 && w.sink.n >= f.bounds.targetBytes:
		return f.retire(w)
	case f.footerRGs >= f.bounds.footerRowGroups:
		if l := f.mostRowGroups(); l != nil {
			return f.retire(l)
		}
	}
	return nil
}

// bound hands batches over or ends the largest row group when all files
// together reach a bound.
func (f *fanout) bound() error {
	if f.buffered >= bufferedBytes {
		for _, w := range f.order {
			if w.file != nil && w.file.batch.n >= minFlushRows {
				if err := f.flush(w, false); err != nil {
					return err
				}
			}
		}
		if f.buffered >= bufferedBytes {
			if err := f.flush(f.largest(func(w *partWriter) int { return w.file.batch.bytes }), false); err != nil {
				return err
			}
		}
	}
	if f.openRows >= cmp.Or(f.bounds.openRows, openRowGroupRows) {
		return f.flush(f.largest(func(w *partWriter) int { return w.file.open() }), true)
	}
	return nil
}

// add writes r into its partition's file of slot s.
func (f *fanout) add(r *meterstore.Row, s uint64) error {
	name := f.t.cfg.Name()
	if f.cur == nil || !f.part.same(f.cur, r) {
		p, err := f.part.of(r)
		if err != nil {
			return fmt.Errorf("cold table %s: %w", name, err)
		}
		if f.cur = f.parts[p.key]; f.cur == nil {
			p.bySlot = map[uint64]*partWriter{}
			f.cur = p
			f.parts[p.key] = p
		}
	}
	cur := f.cur
	if cur.seen && !cur.last.after(r) {
		return fmt.Errorf("cold table %s: rows out of (malo_id, obis_code, from) order: %s %s %s after %s %s %s",
			name, r.MaloID, r.ObisCode, formatWatermark(r.From), cur.last.malo, cur.last.obis, formatWatermark(cur.last.from))
	}
	cur.last, cur.seen = sortKey{malo: r.MaloID, obis: r.ObisCode, from: r.From}, true
	w, err := f.writerFor(cur, s)
	if err == nil && f.rowGroupDue(w, r) {
		err = f.flush(w, true)
	}
	if err == nil && w.due && w.lastMalo != r.MaloID {
		err = f.finish(w)
	}
	if err == nil && w.file == nil {
		err = f.start(w)
	}
	if err != nil {
		return fmt.Errorf("cold table %s: %w", name, err)
	}
	size, err := w.file.batch.add(r)
	if err != nil {
		return fmt.Errorf("cold table %s: %w", name, err)
	}
	w.lastMalo = r.MaloID
	f.buffered += size
	f.openRows++
	if w.file.full() {
		err = f.flush(w, false)
	}
	if err == nil {
		err = f.bound()
	}
	if err != nil {
		return fmt.Errorf("cold table %s: %w", name, err)
	}
	return nil
}

// rowGroupDue reports whether w's row group ends before r: r starts another
// malo_id and the row group reached bounds.rowGroupRows.
func (f *fanout) rowGroupDue(w *partWriter, r *meterstore.Row) bool {
	return f.bounds.rowGroupRows > 0 && w.file != nil && !w.due && w.lastMalo != r.MaloID && w.file.open() >= f.bounds.rowGroupRows
}

// close finishes every open file and returns all files written, per writer in
// creation order.
func (f *fanout) close() ([]iceberg.DataFile, error) {
	var files []iceberg.DataFile
	for _, w := range f.order {
		if w.file != nil {
			if err := f.finish(w); err != nil {
				return nil, fmt.Errorf("cold table %s: %w", f.t.cfg.Name(), err)
			}
		}
		files = append(files, w.finished...)
	}
	return files, nil
}

// abort closes what is open and removes every file written.
func (f *fanout) abort() {
	for _, w := range f.order {
		if w.file != nil {
			_ = w.sink.Close()
		}
	}
	for _, loc := range f.written {
		_ = f.fsys.Remove(loc)
	}
}

// rowPages yields rows in pages of n.
func rowPages(rows []meterstore.Row, n int) iter.Seq2[[]meterstore.Row, error] {
	return func(yield func([]meterstore.Row, error) bool) {
		for i := 0; i < len(rows); i += n {
			if !yield(rows[i:min(i+n, len(rows))], nil) {
				return
			}
		}
	}
}
