package plan

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/meterstore/meterstore"
)

// Table is one configured table and its two tiers, as a statement sees them.
type Table struct {
	Config meterstore.TableConfig
	Hot    HotTier
	Cold   ColdTier
}

// ColdFile is one Iceberg data file the planner may read, with the statistics
// and footer marks elision is proven from. A nil bound is a missing statistic,
// and a false mark an absent one: either proves nothing.
type ColdFile struct {
	Path                   string
	Records                int64
	FromMin, FromMax       *time.Time
	VersionMin, VersionMax *uint64
	// MaloMin and MaloMax are exact bounds of malo_id (nil where the
	// statistic is missing or truncated).
	MaloMin, MaloMax *string
	// KeysUnique: the compactor proved that no resolution key (merge key +
	// version_scope) occurs twice in the file, whatever versions it holds.
	KeysUnique bool
	// Superseded: every row of the file has a row of the same resolution key
	// at a higher version in files all held by the planned snapshot.
	Superseded bool
	// FieldIDs: every column carries its Iceberg field id, and the file is
	// read by id; false reads it by column name.
	FieldIDs bool
	// NamesAsIDs: read by column name, the file reads as by field id — it
	// holds each of the table's columns once, under its field id, name and
	// type, and no other — so it is read without read_parquet's field-id
	// schema, which DuckDB binds anew at every run of a statement.
	NamesAsIDs bool
	// BalancingDay: every row holds the stored balancing_day column, as the
	// file is read, and the store's encoder derived it (its footer's mark);
	// false (a file another writer added, with or without the column)
	// computes the column from "from" and sparte with meter_balancing_day, so
	// the column — and the stored-day rewrite that reads it — is never NULL
	// and never another writer's day.
	BalancingDay bool
}

// ColdPlan is the cold tier pinned to one snapshot: the watermark recorded in
// that snapshot and the files that may hold rows of the requested range.
type ColdPlan struct {
	SnapshotID int64
	Files      []ColdFile
	Pruned     int // files of the snapshot the range, partition values and column statistics excluded
	// MetadataLocation is the table metadata file the plan was made from (it
	// lists the snapshot), for the iceberg extension's iceberg_scan.
	MetadataLocation string
	// StoredNames maps each field id of the table's current schema to its
	// name there: iceberg_scan names columns so, and a half of a table
	// another engine renamed a column of is read through read_parquet
	// instead (nil: not known, nothing is checked).
	StoredNames map[int]string
}

// ColdTier is a table's Iceberg side as the planner reads it: a pinned
// snapshot and its watermark, the files of a range, where they lie.
type ColdTier interface {
	// Watermark pins a snapshot (0 = the current one) and returns its id and the
	// watermark recorded in it (zero time when nothing is archived; snapshot 0
	// when the table has none). An unknown snapshot wraps ErrNoSnapshot.
	Watermark(ctx context.Context, snapshot int64) (int64, time.Time, error)
	// Plan returns the files of snapshot that may hold rows with "from" in
	// [from, to) (zero = unbounded) and the given column equalities.
	Plan(ctx context.Context, snapshot int64, from, to time.Time, eq map[string]string) (ColdPlan, error)
	// SnapshotAt resolves an instant to the newest snapshot of the table's main
	// history committed at or before it; ErrNoSnapshot (wrapped) when the instant
	// predates the table's first snapshot.
	SnapshotAt(ctx context.Context, at time.Time) (int64, error)
	// DataDirectory is where the table's files lie: a local directory, or
	// a URL prefix on object storage (s3://bucket/…); a confined session's
	// DuckDB may read below it and nowhere else.
	DataDirectory() string
	// ReadFile streams the rows of one planned data file through the
	// warehouse's own file IO: the Go path for files DuckDB cannot open
	// itself (on object storage without the httpfs extension).
	ReadFile(ctx context.Context, path string) (RowPages, error)
}

// HotTier is a table's PostgreSQL side as the planner reads it: paged scans,
// the partitions detached for archival, the SQL a scan sends.
type HotTier interface {
	HotPager
	// Detached lists partitions detached for archival but not yet dropped, with
	// the start of their window: between detach and drop their rows are in
	// neither the parent nor (until the commit) the cold tier.
	Detached(ctx context.Context) ([]DetachedPartition, error)
	// ScanSQL is the SQL the first page of a scan sends, for EXPLAIN.
	ScanSQL(req HotScan) string
	// ScanQuery is one SELECT of every row of req, its values written into
	// the text: what the postgres extension sends PostgreSQL for the hot half.
	ScanQuery(req HotScan) (string, error)
}

// HotAggregator is a hot tier that computes a hot half's partial
// aggregates in PostgreSQL (hot partials), so only a row per group leaves
// it. A hot tier that is none is read row by row.
type HotAggregator interface {
	// PartialsQuery is one SELECT of partials over the rows scans select,
	// resolved first when resolved; each output column is text.
	PartialsQuery(scans []HotScan, partials []Partial, resolved bool) (string, error)
	// TextRows runs such a query; nil stands for NULL.
	TextRows(ctx context.Context, q string) ([][]*string, error)
}

// Partial is one output column of a hot half's partial aggregate: a column
// grouped by (Kind "group"), "sum", "min" or "max" of a column, or "count"
// of the rows; Name is the output column's name.
type Partial struct {
	Kind, Column, Name string
}

// DetachedPartition is a hot partition between detach and drop.
type DetachedPartition struct {
	Name     string
	From, To time.Time
}

// ErrNoSnapshot is returned for an AsOf read of a snapshot that does not exist.
var ErrNoSnapshot = errors.New("no such snapshot")

// HotPager opens paged reads of the hot tier. hot.Store implements it (through
// store.HotTierOf); the planner declares what it needs so it does not depend on more.
type HotPager interface {
	Pages(req HotScan) (RowPages, error)
}

// RowPages is one hot scan read a page at a time: Next decodes the next page
// into buf's storage (nil: a new slice) and returns an empty page at the end. No
// transaction is held between calls. Rows come in no particular order. A page
// that cannot be read because an archival detached or dropped the partition
// under the scan fails with an error wrapping ErrBoundaryMoved, so the
// statement is run again rather than reported (Pages likewise).
type RowPages interface {
	Next(ctx context.Context, buf []meterstore.Row) ([]meterstore.Row, error)
}

// ScaledPages is RowPages that can hand each row's value as DECIMAL(18,6)'s
// scaled integer (value × 10⁶, exact) instead of in Row.Value, which it
// leaves zero: what DuckDB's column holds, without a decimal.Decimal's
// big.Int per row. The hot tier's pages are; the table functions use it where
// a pager offers it. values is empty where the scan does not project the value.
type ScaledPages interface {
	RowPages
	NextScaled(ctx context.Context, buf []meterstore.Row, values []int64) ([]meterstore.Row, []int64, error)
}

// HotScan is what the planner pushes into one hot scan.
type HotScan struct {
	Table         string            // the relation to page: the parent, or a detached partition
	From, To      time.Time         // half-open on "from"; zero is unbounded
	Eq            map[string]string // merge-key equalities (including a session's scope)
	MaxVersion    *uint64
	RecordedAtMax *time.Time
	Columns       []string // projection; nil = all
}

// Scan is one planned read a table function of the session streams: a hot
// half's scans of PostgreSQL, or (What = "cold scan") a cold half's files
// read through the warehouse's own file IO.
type Scan struct {
	Ctx    context.Context
	Config meterstore.TableConfig
	Pager  HotPager
	Scans  []HotScan // the parent, then detached partitions not yet covered by the watermark; or one per file
	Rows   *RowCounter
	What   string // "cold scan" for meter_cold_scan, "hot partials" for meter_hot_partials; "" is the hot scan
	// Partials is, for meter_hot_partials, the query of text columns its
	// hot tier (a HotAggregator) runs, and their names.
	Partials *PartialsScan
}

// PartialsScan is a hot half's partial aggregate as meter_hot_partials reads it.
type PartialsScan struct {
	SQL     string
	Columns []string
}

// Registry hands planned scans to the session's table functions by an
// unguessable token that lives only while the statement runs: a statement
// cannot call meter_hot_scan with a request of its own making (the gate
// refuses the name), so a scope pushed into the scan cannot be forged away.
type Registry interface {
	Add(s *Scan) (token string)
	Remove(token string)
}

// RowCounter counts rows a scan streamed, safe for concurrent use.
type RowCounter struct {
	mu sync.Mutex
	n  int64
}

// Add counts n more rows.
func (c *RowCounter) Add(n int) {
	c.mu.Lock()
	c.n += int64(n)
	c.mu.Unlock()
}

// Get is the rows counted so far.
func (c *RowCounter) Get() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
