package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/pgerr"
)

// Table property values every cold table carries (seed 001, "Cold-tier layout").
const (
	RowGroupRows        = 262144
	BloomFilterMaxBytes = 64 * 1024
	monthFieldName      = "from_month"
	firstPartitionID    = 1000

	// ManifestsToMerge is how many manifests a snapshot may hold before an
	// append merges them into one: fast appends add a manifest per commit, so
	// a table archived daily would otherwise plan from one manifest per day of
	// its history.
	ManifestsToMerge = 8
)

// TableProperties are the write properties of a cold table.
func TableProperties() iceberg.Properties {
	props := iceberg.Properties{
		table.PropertyFormatVersion:                           "2",
		table.ParquetCompressionKey:                           "zstd",
		table.ParquetCompressionLevelKey:                      "3",
		table.ParquetRowGroupLimitKey:                         fmt.Sprint(RowGroupRows),
		table.ParquetBloomFilterMaxBytesKey:                   fmt.Sprint(BloomFilterMaxBytes),
		"write.parquet.bloom-filter-enabled.column.malo_id":   "true",
		"write.parquet.bloom-filter-enabled.column.obis_code": "true",
		// Version bounds decide merge elision: keep full (not truncated) metrics
		// for the columns the engine reasons about.
		"write.metadata.metrics.column.version": "full",
		"write.metadata.metrics.column.from":    "full",
	}
	maps.Copy(props, manifestMergeProperties())
	return props
}

// manifestMergeProperties make iceberg-go's appends merge the snapshot's
// manifests once there are ManifestsToMerge of them (merged entries keep their
// data sequence numbers, which the footer marks are read by).
func manifestMergeProperties() iceberg.Properties {
	return iceberg.Properties{
		table.ManifestMergeEnabledKey:  "true",
		table.ManifestMinMergeCountKey: fmt.Sprint(ManifestsToMerge),
	}
}

// missingMergeProperties are the manifest-merge properties tbl lacks (a table
// created before they were part of TableProperties).
func missingMergeProperties(tbl *table.Table) iceberg.Properties {
	missing := iceberg.Properties{}
	for k, v := range manifestMergeProperties() {
		if tbl.Properties()[k] != v {
			missing[k] = v
		}
	}
	return missing
}

// Table is a handle on one cold table. It holds the table state of its last
// load or its own last commit; Refresh reloads explicitly.
type Table struct {
	c     *Catalog
	cfg   meterstore.TableConfig
	ident table.Identifier

	mu      sync.Mutex
	tbl     *table.Table
	holdHot HotHold

	planMu    sync.Mutex
	planCache map[int64][]plannedFile
	marks     map[string]fileMarks // footer marks by file location (files never change)
}

// Config returns the table configuration the handle was opened with.
func (t *Table) Config() meterstore.TableConfig { return t.cfg }

// Iceberg returns the current iceberg-go table state.
func (t *Table) Iceberg() *table.Table {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tbl
}

// set makes tbl the handle's state unless the handle already holds newer
// metadata: a Refresh that read the catalog before a commit on this handle may
// finish after it, and putting its older state back would make the next commit
// lose its compare-and-swap against the handle's own commit.
func (t *Table) set(tbl *table.Table) {
	t.mu.Lock()
	if t.tbl == nil || !precedes(tbl, t.tbl) {
		t.tbl = tbl
	}
	t.mu.Unlock()
}

// precedes reports whether a is metadata that b replaced. A table's metadata
// files form one chain, each committed over the one before and naming its
// predecessors in its metadata-log; a log trimmed to fewer entries than the
// files between a and b leaves the sequence number, which a commit never
// lowers. A table dropped and created again is a new chain (a new UUID), which
// is not older whatever its numbers.
func precedes(a, b *table.Table) bool {
	am, bm := a.Metadata(), b.Metadata()
	if a.MetadataLocation() == b.MetadataLocation() || am.TableUUID() != bm.TableUUID() {
		return false
	}
	for e := range bm.PreviousFiles() {
		if e.MetadataFile == a.MetadataLocation() {
			return true
		}
	}
	return am.LastSequenceNumber() < bm.LastSequenceNumber()
}

// Refresh reloads the table from the catalog. A pooled connection the server
// dropped (a restart, an administrator's termination) fails its first use; the
// load is read-only, so it is retried once on a fresh connection.
//
// A handle whose metadata is still the catalog's current metadata is kept:
// the SQL catalog is asked only for the table's metadata location, and the
// metadata file, which names every snapshot of the history, is read and
// parsed again only when the location changed.
func (t *Table) Refresh(ctx context.Context) (err error) {
	defer t.explainObjectStore(&err)
	if t.current(ctx) {
		return nil
	}
	tbl, err := t.c.cat.LoadTable(ctx, t.ident)
	if pgerr.Unavailable(err) {
		tbl, err = t.c.cat.LoadTable(ctx, t.ident)
	}
	if err != nil {
		return t.c.wrapLoad(t.cfg.Name(), err)
	}
	t.set(tbl)
	return nil
}

// current reports whether the handle holds the metadata the SQL catalog names
// as the table's current one. Any doubt (another catalog kind, a namespace
// the catalog may store under another key, a failed query) is false: the
// caller loads the table.
func (t *Table) current(ctx context.Context) bool {
	tbl := t.Iceberg()
	if t.c.db == nil || tbl == nil || len(t.c.ns) != 1 || strings.Contains(t.c.ns[0], ".") {
		return false
	}
	var loc sql.NullString
	err := t.c.db.QueryRowContext(ctx, `SELECT metadata_location FROM iceberg_tables
		WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3`,
		t.c.name, t.c.ns[0], t.ident[len(t.ident)-1]).Scan(&loc)
	return err == nil && loc.Valid && loc.String == tbl.MetadataLocation()
}

func (c *Catalog) wrapLoad(name string, err error) error {
	if errors.Is(err, icecat.ErrNoSuchTable) {
		return fmt.Errorf("cold table %s.%s: %w: %w", c.opt.Namespace, name, ErrNoSuchTable, err)
	}
	return fmt.Errorf("cold table %s.%s: load: %w", c.opt.Namespace, name, err)
}

// IcebergType maps a column type to its Iceberg type.
func IcebergType(t meterstore.ColumnType) iceberg.Type {
	switch t {
	case meterstore.TypeTimestamp:
		return iceberg.PrimitiveTypes.TimestampTz
	case meterstore.TypeDecimal18_6:
		return iceberg.DecimalTypeOf(18, 6)
	case meterstore.TypeDecimal20_0:
		return iceberg.DecimalTypeOf(20, 0)
	case meterstore.TypeDate:
		return iceberg.PrimitiveTypes.Date
	}
	return iceberg.PrimitiveTypes.String
}

// Schema is the Iceberg schema of cfg: stable field ids, NOT NULL as required.
func Schema(cfg meterstore.TableConfig) *iceberg.Schema {
	cols := cfg.Columns()
	fields := make([]iceberg.NestedField, len(cols))
	for i, c := range cols {
		fields[i] = iceberg.NestedField{ID: c.FieldID, Name: c.Name, Type: IcebergType(c.Type), Required: !c.Nullable}
	}
	return iceberg.NewSchema(0, fields...)
}

func coreSchema(cfg meterstore.TableConfig) *iceberg.Schema {
	s := Schema(cfg)
	var fields []iceberg.NestedField
	for _, f := range s.Fields() {
		if f.ID < meterstore.FirstExtraFieldID {
			fields = append(fields, f)
		}
	}
	return iceberg.NewSchema(0, fields...)
}

// PartitionSpec is identity(<identity columns>) then month(from). month(from)
// has partition field id firstPartitionID in every spec, the identity columns
// the ids after it: a table with identity columns is created with month(from)
// alone and gets this spec in a second commit, and Iceberg requires an id to
// name the same field in every spec of a table (Spark refuses to read one
// that reuses an id).
func PartitionSpec(cfg meterstore.TableConfig, sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	var fields []iceberg.PartitionField
	id := firstPartitionID + 1
	for _, col := range cfg.IdentityColumns() {
		f, ok := sc.FindFieldByName(col.Name)
		if !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("identity column %s missing from schema", col.Name)
		}
		fields = append(fields, iceberg.PartitionField{SourceIDs: []int{f.ID}, FieldID: id, Name: col.Name, Transform: iceberg.IdentityTransform{}})
		id++
	}
	from, _ := sc.FindFieldByName("from")
	fields = append(fields, iceberg.PartitionField{SourceIDs: []int{from.ID}, FieldID: firstPartitionID, Name: monthFieldName, Transform: iceberg.MonthTransform{}})
	return iceberg.NewPartitionSpec(fields...), nil
}

// SortOrderColumns is the declared sort order: the keyset order of the hot scan.
var SortOrderColumns = []string{"malo_id", "obis_code", "from"}

// SortOrder is (malo_id, obis_code, from) ascending.
func SortOrder(sc *iceberg.Schema) (table.SortOrder, error) {
	var sf []table.SortField
	for _, name := range SortOrderColumns {
		f, ok := sc.FindFieldByName(name)
		if !ok {
			return table.SortOrder{}, fmt.Errorf("sort column %s missing", name)
		}
		sf = append(sf, table.SortField{SourceIDs: []int{f.ID}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst})
	}
	return table.NewSortOrder(1, sf)
}

// CreateTable creates the cold table for cfg, or opens it if it exists; either
// way it verifies format v2, the partition spec and the sort order.
//
// iceberg-go assigns fresh, sequential field ids at creation, which would
// renumber the declared columns (101+). So the table is created with the core
// columns (ids 1–17, already sequential) and, when the table declares extra
// columns, a second catalog commit adds the full schema with its stable ids and
// the final partition spec before any data exists.
func (c *Catalog) CreateTable(ctx context.Context, cfg meterstore.TableConfig) (_ *Table, err error) {
	defer func() { err = c.explainObjectStore(err) }()
	ident := c.ident(cfg.Name())
	exists, err := c.cat.CheckTableExists(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("cold table %s: %w", cfg.Name(), err)
	}
	if !exists {
		if err := c.create(ctx, cfg, ident); err != nil && !errors.Is(err, icecat.ErrTableAlreadyExists) {
			return nil, err
		}
	}
	t, err := c.Table(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := t.verifyLayout(); err != nil {
		return nil, err
	}
	return t, nil
}

func (c *Catalog) create(ctx context.Context, cfg meterstore.TableConfig, ident table.Identifier) error {
	full := Schema(cfg)
	core := coreSchema(cfg)
	hasExtra := len(full.Fields()) != len(core.Fields())
	initialSpec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{5}, FieldID: firstPartitionID, Name: monthFieldName, Transform: iceberg.MonthTransform{}})
	if !hasExtra {
		var err error
		if initialSpec, err = PartitionSpec(cfg, full); err != nil {
			return err
		}
	}
	so, err := SortOrder(core)
	if err != nil {
		return err
	}
	tbl, err := c.cat.CreateTable(ctx, ident, core, icecat.WithPartitionSpec(&initialSpec), icecat.WithSortOrder(so), icecat.WithProperties(TableProperties()))
	if err != nil {
		return fmt.Errorf("cold table %s: create: %w", cfg.Name(), err)
	}
	if !hasExtra {
		return nil
	}
	spec, err := PartitionSpec(cfg, full)
	if err != nil {
		return err
	}
	updates := []table.Update{
		table.NewAddSchemaUpdate(full),
		table.NewSetCurrentSchemaUpdate(-1),
		table.NewAddPartitionSpecUpdate(&spec, false),
		table.NewSetDefaultSpecUpdate(-1),
	}
	reqs := []table.Requirement{
		table.AssertCurrentSchemaID(tbl.Schema().ID),
		table.AssertDefaultSpecID(tbl.Metadata().DefaultPartitionSpec()),
	}
	if _, _, err := c.cat.CommitTable(ctx, ident, reqs, updates); err != nil {
		return fmt.Errorf("cold table %s: set schema with declared field ids: %w", cfg.Name(), err)
	}
	return nil
}

// Table loads an existing cold table; the error wraps ErrNoSuchTable if there is none.
func (c *Catalog) Table(ctx context.Context, cfg meterstore.TableConfig) (_ *Table, err error) {
	defer func() { err = c.explainObjectStore(err) }()
	ident := c.ident(cfg.Name())
	tbl, err := c.cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, c.wrapLoad(cfg.Name(), err)
	}
	t := &Table{c: c, cfg: cfg, ident: ident, tbl: tbl, planCache: map[int64][]plannedFile{}, marks: map[string]fileMarks{}}
	if v := tbl.Metadata().Version(); v != 2 {
		return nil, fmt.Errorf("cold table %s has format version %d: %w", cfg.Name(), v, ErrFormatVersion)
	}
	// The resolved view, created for tables that predate it (idempotent: an
	// up-to-date view is only read). A table whose schema differs from the
	// configuration keeps its view: Evolve renders it with the columns it
	// adds, and a quarantined table's view goes on describing the stored rows.
	if len(checkSchema(cfg, tbl).Changes) == 0 {
		if _, err := c.ensureView(ctx, cfg, tbl); err != nil {
			return nil, fmt.Errorf("cold table %s: resolved view: %w", cfg.Name(), err)
		}
	}
	return t, nil
}

// WithConfig is a handle on the same table, in its current state, read and
// written in cfg: a quarantined table's handle in its stored layout
// (StoredLayout), whose plans and reads name columns as that layout does.
func (t *Table) WithConfig(cfg meterstore.TableConfig) *Table {
	return &Table{c: t.c, cfg: cfg, ident: t.ident, tbl: t.Iceberg(), planCache: map[int64][]plannedFile{}, marks: map[string]fileMarks{}}
}

// FormatVersion is the Iceberg format version of the loaded table state.
func (t *Table) FormatVersion() int { return t.Iceberg().Metadata().Version() }

// verifyLayout checks what no configuration changes: format v2, a partition
// spec of identity fields and month(from), the sort order (malo_id,
// obis_code, from) — by field id, so a column renamed by another engine is
// still the column it was. Which columns the identity fields partition by is
// the schema check's (CheckSchema): a change there quarantines the table.
func (t *Table) verifyLayout() error {
	tbl := t.Iceberg()
	if v := tbl.Metadata().Version(); v != 2 {
		return fmt.Errorf("cold table %s has format version %d: %w", t.cfg.Name(), v, ErrFormatVersion)
	}
	sc := tbl.Schema()
	cols := t.cfg.Columns()
	spec := tbl.Spec()
	if !identityAndMonth(spec, cols[meterstore.ColFrom].FieldID) {
		return fmt.Errorf("cold table %s: partition spec is %s, declared identity columns and month(from): %w", t.cfg.Name(), describeSpec(spec, sc), ErrLayout)
	}
	so := tbl.SortOrder()
	var sorted []int
	for _, f := range so.Fields() {
		if f.Direction != table.SortASC {
			sorted = append(sorted, -1)
			continue
		}
		sorted = append(sorted, f.SourceID())
	}
	var want []int
	for _, name := range SortOrderColumns {
		want = append(want, cols[t.cfg.ColumnIndex(name)].FieldID)
	}
	if !slices.Equal(sorted, want) {
		return fmt.Errorf("cold table %s: sort order is (%s), declared (%s): %w", t.cfg.Name(), describeSort(so, sc), strings.Join(SortOrderColumns, ","), ErrLayout)
	}
	return nil
}

// identityAndMonth reports whether spec partitions by identity fields and
// exactly one month of the field from.
func identityAndMonth(spec iceberg.PartitionSpec, from int) bool {
	months := 0
	for _, f := range spec.Fields() {
		switch f.Transform.(type) {
		case iceberg.IdentityTransform:
		case iceberg.MonthTransform:
			if f.SourceID() != from {
				return false
			}
			months++
		default:
			return false
		}
	}
	return months == 1
}

func describeSpec(spec iceberg.PartitionSpec, sc *iceberg.Schema) string {
	var parts []string
	for _, f := range spec.Fields() {
		name, _ := sc.FindColumnName(f.SourceID())
		parts = append(parts, fmt.Sprintf("%s(%s)", f.Transform, name))
	}
	return strings.Join(parts, ",")
}

func describeSort(so table.SortOrder, sc *iceberg.Schema) string {
	var parts []string
	for _, f := range so.Fields() {
		name, _ := sc.FindColumnName(f.SourceID())
		if f.Direction != table.SortASC {
			name += " desc"
		}
		parts = append(parts, name)
	}
	return strings.Join(parts, ",")
}

// PurgeTable drops the cold table and deletes its files.
func (c *Catalog) PurgeTable(ctx context.Context, cfg meterstore.TableConfig) (err error) {
	defer func() { err = c.explainObjectStore(err) }()
	ident := c.ident(cfg.Name())
	p, ok := c.cat.(icecat.PurgeableTable)
	if !ok {
		return fmt.Errorf("cold table %s: the %s catalog cannot purge", cfg.Name(), c.opt.Kind)
	}
	if err := c.dropView(ctx, cfg); err != nil {
		return fmt.Errorf("cold table %s: purge: %w", cfg.Name(), err)
	}
	if err := p.PurgeTable(ctx, ident); err != nil {
		if errors.Is(err, icecat.ErrNoSuchTable) {
			return c.wrapLoad(cfg.Name(), err)
		}
		return fmt.Errorf("cold table %s: purge: %w", cfg.Name(), err)
	}
	return nil
}
