package catalog

import (
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
	iceio "github.com/apache/iceberg-go/io"
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
)

// fileMarks are the marks of one file.
type fileMarks struct {
	compaction   string   // "" when not written by a compaction
	keysUnique   bool     // MarkKeys = unique
	supersededBy []string // nil when not marked
	fieldIDs     bool     // every top-level column carries a field id
}

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
	m, err := readMarks(fsys, loc)
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

// readMarks reads the footer of the Parquet file at loc.
func readMarks(fsys iceio.IO, loc string) (fileMarks, error) {
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
	kv := r.MetaData().KeyValueMetadata()
	m := fileMarks{fieldIDs: hasFieldIDs(r.MetaData().Schema.Root())}
	if v := kv.FindValue(MarkCompaction); v != nil {
		m.compaction = *v
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
