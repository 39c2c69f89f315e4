package plan

import (
	"context"
	"fmt"
	"strings"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltext"
)

// ColdPath is one way to read some of a cold half's planned files as a
// relation with the table's exact column types, under the half's filter. The
// split pass picks one per half (Input.Paths); provenance and EXPLAIN name it.
type ColdPath interface {
	// Name is the table function the path reads through.
	Name() string
	relation(cfg meterstore.TableConfig, c *coldHalf, files []ColdFile) (string, error)
}

// HotPath is one way to read a hot half as a relation with the table's exact
// column types (registering whatever the statement needs while it runs).
type HotPath interface {
	// Name is the table function the path reads through.
	Name() string
	relation(ctx context.Context, pl *planning, ref *reference) (string, error)
	// explain is the SQL PostgreSQL receives for the half's first relation
	// when DuckDB reads columns of it (nil: every column).
	explain(ref *reference, columns []string) string
}

// The paths a session chooses from (Input.Paths).
var (
	ReadParquet   ColdPath = readParquetPath{}
	IcebergScan   ColdPath = icebergScanPath{}
	MeterHotScan  HotPath  = hotScanPath{}
	PostgresQuery HotPath  = postgresQueryPath{}
)

// readParquetPath reads the planned files with DuckDB's Parquet reader.
type readParquetPath struct{}

func (readParquetPath) Name() string { return "read_parquet" }

// relation reads the files whose statistics lie within the half's range
// apart from the others, with no "from" filter: DuckDB evaluates one pushed
// into a read_parquet of several files on every row, even where row group
// statistics prove it true.
func (readParquetPath) relation(cfg meterstore.TableConfig, c *coldHalf, files []ColdFile) (string, error) {
	var parts []string
	for _, set := range splitWithin(c.rng, files) {
		parts = append(parts, readParquet(cfg, set, c.filesWhere(set)))
	}
	return strings.Join(parts, " UNION ALL "), nil
}

// icebergScanPath reads the pinned snapshot with the iceberg extension, which
// plans from the snapshot's own manifests: the half's filter is pushed into it,
// and a subset of the planned files (the runs elide or resolve split apart) is
// selected by the statistics that set them apart (filePredicate).
type icebergScanPath struct{}

func (icebergScanPath) Name() string { return "iceberg_scan" }

func (icebergScanPath) relation(cfg meterstore.TableConfig, c *coldHalf, files []ColdFile) (string, error) {
	if c.plan.MetadataLocation == "" {
		return "", fmt.Errorf("cold snapshot %d: no metadata location to scan", c.plan.SnapshotID)
	}
	pred, _, err := filePredicate(c.plan.Files, files)
	if err != nil {
		return "", fmt.Errorf("iceberg_scan: %w", err)
	}
	where := c.where()
	if pred != "" {
		if where == "" {
			where = " WHERE " + pred
		} else {
			where += " AND " + pred
		}
	}
	return fmt.Sprintf("SELECT %s FROM iceberg_scan(%s, snapshot_from_id => %d)%s",
		typedProjection(cfg), sqltext.String(c.plan.MetadataLocation), c.plan.SnapshotID, where), nil
}

// filePredicate selects the rows of files, a subset of the planned files all,
// by statistics, or fails: groups of files whose "from" bounds overlap are
// disjoint on "from", so a group is selected by its "from" interval,
// consecutive selected groups by one, and some files of a group by their
// versions where each file holds one version and no file left out shares
// one. Files the catalog pruned hold no row of the half's filter, which the
// relation carries as well; so the predicate selects exactly the rows of
// files. "" when files are all. terms counts its disjuncts.
func filePredicate(all, files []ColdFile) (pred string, terms int, err error) {
	if len(files) == len(all) {
		return "", 0, nil
	}
	in := map[string]bool{}
	for _, f := range files {
		in[f.Path] = true
	}
	var disjuncts []string
	var open *run // consecutive runs wholly in files
	flush := func() {
		if open != nil {
			disjuncts = append(disjuncts, "("+fromBetween(*open)+")")
			open = nil
		}
	}
	for _, r := range groupRuns(all, false) {
		var members []ColdFile
		for _, f := range r {
			if in[f.Path] {
				members = append(members, f)
			}
		}
		switch {
		case len(members) == 0:
			flush()
		case len(members) == len(r):
			if open == nil {
				open = &run{}
			}
			*open = append(*open, r...)
		default:
			flush()
			term, err := runVersions(r, members)
			if err != nil {
				return "", 0, err
			}
			disjuncts = append(disjuncts, term)
		}
	}
	flush()
	if len(disjuncts) == 0 {
		return "false", 0, nil
	}
	return "(" + strings.Join(disjuncts, " OR ") + ")", len(disjuncts), nil
}

// maxScanTerms bounds the runs a predicate handed to iceberg_scan keeps apart:
// DuckDB evaluates it on every row the scan reads, so its cost grows with
// runs × rows, where reading the same files one by one costs nothing per run.
// A year of daily files with corrections makes hundreds of runs.
const maxScanTerms = 16

// fromBetween is the "from" interval the files' statistics span.
func fromBetween(files []ColdFile) string {
	lo, hi := *files[0].FromMin, *files[0].FromMax
	for _, f := range files {
		if f.FromMin.Before(lo) {
			lo = *f.FromMin
		}
		if f.FromMax.After(hi) {
			hi = *f.FromMax
		}
	}
	return fmt.Sprintf(`"from" >= %s AND "from" <= %s`, sqlTime(lo), sqlTime(hi))
}

// runVersions selects some files of one run by their versions: possible when
// every file of the run holds one version and no file left out shares one.
func runVersions(r run, members []ColdFile) (string, error) {
	for _, f := range r {
		if !f.known() || *f.VersionMin != *f.VersionMax {
			return "", fmt.Errorf("%s cannot be told apart from its run by statistics", f.Path)
		}
	}
	versions := map[uint64]bool{}
	var list []string
	for _, f := range members {
		if !versions[*f.VersionMin] {
			versions[*f.VersionMin] = true
			list = append(list, fmt.Sprint(*f.VersionMin))
		}
	}
	for _, f := range r {
		if versions[*f.VersionMin] && !contains(members, f.Path) {
			return "", fmt.Errorf("%s shares version %d with a file read apart from it", f.Path, *f.VersionMin)
		}
	}
	return fmt.Sprintf(`(%s AND "version" IN (%s))`, fromBetween(r), strings.Join(list, ", ")), nil
}

// perFileReason says why the half, planned through iceberg_scan, must read
// its files one by one instead ("" when it need not): a column of cfg the
// cold table names otherwise (renamed by another engine), a file whose
// footer does not prove field ids or a balancing_day this store derived, a read that relies
// on footer marks, one that splits files apart which "from" and version
// statistics cannot tell apart (runs grouped by malo_id bounds as well), or
// one that splits them into more runs than a predicate should carry.
func (c *coldHalf) perFileReason(cfg meterstore.TableConfig) string {
	if _, ok := c.path.(icebergScanPath); !ok {
		return ""
	}
	if why := renamedColumn(cfg, c.plan.StoredNames); why != "" {
		return why
	}
	for _, f := range c.plan.Files {
		if !f.FieldIDs || !f.BalancingDay {
			return fmt.Sprintf("%s was added without field ids or the stored balancing_day, which iceberg_scan would read as NULL", f.Path)
		}
	}
	if c.read.usesMarks() {
		return "the read relies on footer marks, which iceberg_scan's filters cannot express"
	}
	for _, files := range c.read.parts() {
		_, terms, err := filePredicate(c.plan.Files, files)
		if err != nil {
			return err.Error()
		}
		if terms > maxScanTerms {
			return fmt.Sprintf("selecting %d of its files by statistics takes a predicate of %d runs, which iceberg_scan evaluates on every row (at most %d)",
				len(files), terms, maxScanTerms)
		}
	}
	return ""
}

func contains(files []ColdFile, path string) bool {
	for _, f := range files {
		if f.Path == path {
			return true
		}
	}
	return false
}

// hotPathFor is how the hot half is read: the engine's chosen path, or
// meter_hot_scan in a confined session, whose database attaches no database.
func (pl *planning) hotPathFor() HotPath {
	if pl.in.View.Confined {
		return hotScanPath{}
	}
	return pl.in.Paths.Hot
}

// hotScanPath streams the hot half from PostgreSQL through meter_hot_scan,
// handed the planned scans by a token that lives only while the statement runs.
type hotScanPath struct{}

func (hotScanPath) Name() string { return "meter_hot_scan" }

func (hotScanPath) relation(ctx context.Context, pl *planning, ref *reference) (string, error) {
	cfg := ref.rel.table.Config
	tok := pl.out.register(&Scan{Ctx: ctx, Config: cfg, Pager: ref.rel.table.Hot, Scans: ref.hot.scans, Rows: pl.out.Provenance.hotRows})
	// The typed projection over the table function matters beyond types:
	// without it DuckDB 1.5's top_n_window_elimination (which makes
	// ROW_NUMBER() = 1 resolution ~4× cheaper) fails with "INTERNAL Error:
	// Failed to cast expression to type" on a range-filtered statement.
	return fmt.Sprintf("(SELECT %s FROM meter_hot_scan('%s'))", typedProjection(cfg), tok), nil
}

func (hotScanPath) explain(ref *reference, columns []string) string {
	sc := ref.hot.scans[0]
	if columns != nil {
		sc.Columns = ScanColumns(columns)
	}
	return ref.rel.table.Hot.ScanSQL(sc)
}

// HotDatabase is the catalog name the deployment's PostgreSQL is attached
// under; statements cannot name it (the gate refuses other databases).
const HotDatabase = "meterstore_hot"

// postgresQueryPath reads the hot half through the postgres extension: one
// postgres_query per planned scan (the parent, each detached partition) on the
// attached database, its SQL rendered by the hot tier with every predicate in
// it — so PostgreSQL receives the range, the equalities (its index applies;
// DuckDB's own pushdown compares text under COLLATE "C", which it cannot),
// the scope and the ceilings.
type postgresQueryPath struct{}

func (postgresQueryPath) Name() string { return "postgres_query" }

func (postgresQueryPath) relation(_ context.Context, _ *planning, ref *reference) (string, error) {
	cfg := ref.rel.table.Config
	parts := make([]string, len(ref.hot.scans))
	for i, sc := range ref.hot.scans {
		q, err := ref.rel.table.Hot.ScanQuery(sc)
		if err != nil {
			return "", fmt.Errorf("hot scan of %s: %w", sc.Table, err)
		}
		parts[i] = fmt.Sprintf("SELECT %s FROM postgres_query(%s, %s)", typedProjection(cfg), sqltext.String(HotDatabase), sqltext.String(q))
	}
	return "(" + strings.Join(parts, " UNION ALL ") + ")", nil
}

// explain is the statement the postgres extension sends: the planned query
// under its projection of DuckDB's columns.
func (postgresQueryPath) explain(ref *reference, columns []string) string {
	q, err := ref.rel.table.Hot.ScanQuery(ref.hot.scans[0])
	if err != nil {
		return err.Error()
	}
	if columns == nil {
		return q
	}
	return fmt.Sprintf("SELECT %s FROM (%s) AS __unnamed_subquery", meterstore.QuoteIdents(ScanColumns(columns)), q)
}

// ScanColumns is what a hot scan asks PostgreSQL for, given the columns
// DuckDB projected: those, or for none (count(*)) the first key column, whose
// rows are counted.
func ScanColumns(projected []string) []string {
	if len(projected) == 0 {
		return []string{"malo_id"}
	}
	return projected
}
