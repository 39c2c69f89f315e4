package catalog

import (
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
	iceio "github.com/apache/iceberg-go/io"

	"github.com/meterstore/meterstore"
)

// Footer marks: facts the compactor proves while it writes a file, recorded in
// the file's own Parquet key-value metadata. Foreign readers ignore them, they
// survive snapshot expiry and manifest rewrites, and a file never changes, so
// a mark read once holds for good (cached by path). A file without a mark
// proves nothing (design invariant 8).
const (
	// MarkCompaction names the compaction that wrote the file (a UUID).
	MarkCompaction = "meterstore.compaction"
	// MarkKeys = MarkKeysUnique: no resolution key (merge key + version_scope)
	// occurs twice in the file, whatever versions it holds.
	MarkKeys       = "meterstore.keys"
	MarkKeysUnique = "unique"
	// MarkSupersededBy lists (JSON array of locations) files written by the
	// same compaction that hold, for every row of this file, a row of the same
	// resolution key at a higher version.
	MarkSupersededBy = "meterstore.superseded_by"
	// MarkBalancingDay = MarkBalancingDayDerived: the file's balancing_day
	// was derived by this store's encoder with the calendar function
	// (metering.BalancingDay), so it equals the function row for row. Every
	// file the encoder writes carries it; a file another writer added holding
	// the column does not, and its stored days prove nothing.
	MarkBalancingDay        = "meterstore.balancing_day"
	MarkBalancingDayDerived = "derived"
	// MarkUnitPairs = MarkUnitPairsChecked: the encoder checked the
	// (sparte, unit) pair of every row of the file as it wrote it, and
	// metering allows each (meterstore.CheckUnitPair). The encoder writes it
	// as it closes the file, only when no row failed: it refuses no row (the
	// write paths decide that), so a file archived from a table that held a
	// wrong pair is written without it. A file without it — another
	// writer's, an older encoder's, or one holding a wrong pair — proves
	// nothing, and msql verify reads its pairs (store.Table.UnitPairViolations).
	MarkUnitPairs        = "meterstore.unit_pairs"
	MarkUnitPairsChecked = "checked"
)

// fileMarks are the marks of one file.
type fileMarks struct {
	compaction   string   // "" when not written by a compaction
	keysUnique   bool     // MarkKeys = unique
	supersededBy []string // nil when not marked
	fieldIDs     bool     // every top-level column carries a field id
	// namesAsIDs: read by name, the file reads as by field id through the
	// table's configured columns (namesAsIDs).
	namesAsIDs bool
	// holdsDay: every row of the file holds a balancing_day, found as the
	// file is read — by its field id where the file carries field ids, else
	// by its name — in a column that is REQUIRED or whose every row group's
	// statistics count no null.
	holdsDay bool
	// derivedDay: this store's encoder derived the column (MarkBalancingDay,
	// or a compaction's file: only this store's compactor writes
	// MarkCompaction, so compacted files written before MarkBalancingDay
	// existed keep their stored day).
	derivedDay bool
	// dayMarked: the footer carries MarkBalancingDay; a compaction's file
	// without it was written before the encoder derived the column and
	// holds the day its input rows carried.
	dayMarked bool
	// unitPairsChecked: the footer carries MarkUnitPairs, so every row's
	// (sparte, unit) pair is one metering allows.
	unitPairsChecked bool
}

// balancingDay reports whether the file's stored balancing_day is the
// calendar's day for every row: it holds the column and this store derived
// it. Any other file — another writer's, with or without the column, with
// nulls in it or without the statistic — proves nothing: its day is computed
// from "from".
func (m fileMarks) balancingDay() bool { return m.holdsDay && m.derivedDay }

// underivedBalancingDay reports whether the file holds a balancing_day its
// footer does not say the encoder derived: another writer's (read as
// computed) or a compaction's from before the encoder derived the column
// (answered from the stored column). msql verify reads their stored days
// (store.Table.BalancingDayMismatches); no other file can hold a day other
// than the calendar's.
func (m fileMarks) underivedBalancingDay() bool { return m.holdsDay && !m.dayMarked }

// marksCacheMax bounds the files whose marks are kept (each a few strings).
const marksCacheMax = 1 << 16

// marksOf returns the marks of the file at loc, reading its footer once.
func (t *Table) marksOf(fsys iceio.IO, loc string) (fileMarks, error) {
	t.planMu.Lock()
	m, ok := t.marks[loc]
	t.planMu.Unlock()
	if ok {
		return m, nil
	}
	m, err := readMarks(fsys, loc, t.cfg)
	if err != nil {
		return fileMarks{}, fmt.Errorf("cold table %s: %w", t.cfg.Name(), err)
	}
	t.planMu.Lock()
	if len(t.marks) >= marksCacheMax {
		clear(t.marks)
	}
	t.marks[loc] = m
	t.planMu.Unlock()
	return m, nil
}

// rememberWritten records the marks of the file at loc that this table's
// writer has just written, from the footer it wrote: planning then knows the
// file without opening it again. Nothing about who committed a file is
// trusted; a file's facts come from its own footer, read or written here.
func (t *Table) rememberWritten(loc string, meta *metadata.FileMetaData) error {
	m, err := footerMarks(meta, loc, t.cfg)
	if err != nil {
		return fmt.Errorf("cold table %s: %w", t.cfg.Name(), err)
	}
	t.planMu.Lock()
	if len(t.marks) >= marksCacheMax {
		clear(t.marks)
	}
	t.marks[loc] = m
	t.planMu.Unlock()
	return nil
}

// readMarks reads the footer of the Parquet file at loc, a file of a table
// of cfg.
func readMarks(fsys iceio.IO, loc string, cfg meterstore.TableConfig) (fileMarks, error) {
	f, err := fsys.Open(loc)
	if err != nil {
		return fileMarks{}, fmt.Errorf("open %s for its footer: %w", loc, err)
	}
	defer f.Close()
	r, err := file.NewParquetReader(f)
	if err != nil {
		return fileMarks{}, fmt.Errorf("footer of %s: %w", loc, err)
	}
	defer r.Close()
	return footerMarks(r.MetaData(), loc, cfg)
}

// footerMarks are the marks the footer of a file of a table of cfg proves.
func footerMarks(meta *metadata.FileMetaData, loc string, cfg meterstore.TableConfig) (fileMarks, error) {
	kv := meta.KeyValueMetadata()
	m := fileMarks{fieldIDs: hasFieldIDs(meta.Schema.Root()), namesAsIDs: namesAsIDs(meta.Schema.Root(), cfg)}
	m.holdsDay = holdsBalancingDay(meta, m.fieldIDs)
	if v := kv.FindValue(MarkCompaction); v != nil {
		m.compaction = *v
	}
	if v := kv.FindValue(MarkBalancingDay); v != nil && *v == MarkBalancingDayDerived {
		m.dayMarked = true
	}
	m.derivedDay = m.dayMarked || m.compaction != ""
	if v := kv.FindValue(MarkUnitPairs); v != nil && *v == MarkUnitPairsChecked {
		m.unitPairsChecked = true
	}
	if v := kv.FindValue(MarkKeys); v != nil && *v == MarkKeysUnique {
		m.keysUnique = true
	}
	if v := kv.FindValue(MarkSupersededBy); v != nil {
		if err := json.Unmarshal([]byte(*v), &m.supersededBy); err != nil {
			return fileMarks{}, fmt.Errorf("footer of %s: %s = %q: %w", loc, MarkSupersededBy, *v, err)
		}
		if len(m.supersededBy) == 0 {
			m.supersededBy = nil // superseded by nothing proves nothing
		}
	}
	return m, nil
}

// holdsBalancingDay reports whether every row of the file holds the stored
// balancing_day: the top-level column read as it (its field id when the
// file is read by id, its name otherwise) is REQUIRED, or every row group's
// statistics of it count no null.
func holdsBalancingDay(meta *metadata.FileMetaData, byID bool) bool {
	day := meterstore.CoreColumns(meterstore.Interval)[meterstore.ColBalancingDay]
	root := meta.Schema.Root()
	col := -1
	for i := 0; i < meta.Schema.NumColumns(); i++ {
		c := meta.Schema.Column(i)
		if c.SchemaNode().Parent() != root {
			continue // a nested column
		}
		if byID && c.SchemaNode().FieldID() == int32(day.FieldID) || !byID && c.Name() == day.Name {
			col = i
		}
	}
	if col < 0 {
		return false
	}
	if meta.Schema.Column(col).SchemaNode().RepetitionType() == parquet.Repetitions.Required {
		return true
	}
	for rg := 0; rg < meta.NumRowGroups(); rg++ {
		cc, err := meta.RowGroup(rg).ColumnChunk(col)
		if err != nil {
			return false
		}
		st, err := cc.Statistics()
		if err != nil || st == nil || !st.HasNullCount() || st.NullCount() != 0 {
			return false
		}
	}
	return true
}

// hasFieldIDs reports whether every top-level field of a Parquet schema
// carries a field id.
func hasFieldIDs(root *schema.GroupNode) bool {
	for i := 0; i < root.NumFields(); i++ {
		if root.Field(i).FieldID() < 0 {
			return false
		}
	}
	return root.NumFields() > 0
}

// namesAsIDs reports whether a file of the Parquet schema root reads the
// same by column name as by field id through cfg's columns (the engine's
// field-id schema): it holds each of cfg's columns once and no other column,
// each under the field id of the configured column of its name, with a type
// the engine reads as that column's type. A file written before a column
// was renamed, another writer's file naming ids otherwise, one without a
// column added since, one with another type or without field ids does not:
// it is read by id (or, without ids, by name as before).
func namesAsIDs(root *schema.GroupNode, cfg meterstore.TableConfig) bool {
	cols := cfg.Columns()
	if root.NumFields() != len(cols) {
		return false
	}
	byID := make(map[int]meterstore.ColumnDef, len(cols))
	for _, c := range cols {
		byID[c.FieldID] = c
	}
	for i := 0; i < root.NumFields(); i++ {
		f := root.Field(i)
		c, ok := byID[int(f.FieldID())]
		if !ok || f.Name() != c.Name || !readsAs(f, c.Type) {
			return false
		}
		delete(byID, c.FieldID) // a second column of the same id fails above
	}
	return true
}

// readsAs reports whether DuckDB's Parquet reader reads the top-level column
// n as the engine's type of t (meterstore.ColumnType.DuckDBType), so that
// casting it to that type changes no value: text as VARCHAR, timestamps in
// microseconds adjusted to UTC as TIMESTAMPTZ (a timestamp known only by
// its converted type may be read as TIMESTAMP, whose cast depends on the
// session's time zone), the decimals of their precision and scale, dates.
func readsAs(n schema.Node, t meterstore.ColumnType) bool {
	p, ok := n.(*schema.PrimitiveNode)
	if !ok || p.RepetitionType() == parquet.Repetitions.Repeated {
		return false
	}
	switch lt := p.LogicalType().(type) {
	case schema.StringLogicalType:
		return t == meterstore.TypeText && p.PhysicalType() == parquet.Types.ByteArray
	case schema.TimestampLogicalType:
		return t == meterstore.TypeTimestamp && lt.IsAdjustedToUTC() && lt.TimeUnit() == schema.TimeUnitMicros && !lt.IsFromConvertedType()
	case schema.DecimalLogicalType:
		return t == meterstore.TypeDecimal18_6 && lt.Precision() == 18 && lt.Scale() == 6 ||
			t == meterstore.TypeDecimal20_0 && lt.Precision() == 20 && lt.Scale() == 0
	case schema.DateLogicalType:
		return t == meterstore.TypeDate
	}
	return false
}
