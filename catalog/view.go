package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"
	"github.com/google/uuid"

	"github.com/meterstore/meterstore"
)

// The resolved view: next to the raw cold table <ns>.readings_versions
// the catalog holds an Iceberg view <ns>.readings whose SQL is the table's
// published resolution statement (meterstore.TableConfig.ResolutionSQL), so a
// foreign engine that finds the table through the catalog also finds the
// correct way to read it instead of summing every version.

// View properties.
const (
	// ViewPropResolves names the physical table the view resolves ("<namespace>.<table>").
	ViewPropResolves = "meterstore.resolves"
	// ViewPropMergeKey lists the merge key the SQL partitions by (comma-separated, plus version_scope).
	ViewPropMergeKey = "meterstore.merge-key"
	// ViewPropWriter is the MeterStore build that wrote the current view version.
	ViewPropWriter = "meterstore.writer-version"
)

// ViewDialects are the SQL dialects the view carries; the resolution text is
// the same for all of them (quoted identifiers, aliased derived table).
var ViewDialects = []string{"spark", "trino", "duckdb"}

// WriterVersion identifies the MeterStore build in the view's properties and
// version summary: the main module's version (or VCS revision) from the build
// info, "(devel)" for an untagged build. The binary may overwrite it at start.
var WriterVersion = writerVersion()

func writerVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "meterstore (devel)"
	}
	module := reflect.TypeFor[meterstore.Row]().PkgPath()
	v := ""
	if bi.Main.Path == module {
		v = bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == module && v == "" {
			v = d.Version
		}
	}
	if v == "" || v == "(devel)" {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return "meterstore (devel) " + s.Value
			}
		}
		return "meterstore (devel)"
	}
	return "meterstore " + v
}

// View is the resolved view of one cold table as stored in the catalog.
type View struct {
	Ident            table.Identifier  // <namespace>.<resolved name>
	SQL              map[string]string // dialect → SQL of the current version
	Schema           *iceberg.Schema
	Properties       iceberg.Properties
	VersionID        int64
	Versions         int // versions kept in the view's history
	MetadataLocation string
}

// Name is the view's name (the table's resolved name, e.g. "readings").
func (v View) Name() string { return v.Ident[len(v.Ident)-1] }

// ErrNoView: the table has no resolved view (its name has no "_versions"
// suffix, so the resolved name is the table's own; or it was never created).
var ErrNoView = errors.New("cold table has no resolved view")

func (c *Catalog) viewIdent(cfg meterstore.TableConfig) (table.Identifier, bool) {
	if cfg.ResolvedName() == cfg.Name() {
		return nil, false
	}
	return c.ident(cfg.ResolvedName()), true
}

// ViewSchema is the view's schema: the table's columns (field ids, types, NOT NULL).
func ViewSchema(cfg meterstore.TableConfig) *iceberg.Schema { return Schema(cfg) }

func (c *Catalog) viewProperties(cfg meterstore.TableConfig) iceberg.Properties {
	return iceberg.Properties{
		ViewPropResolves: c.opt.Namespace + "." + cfg.Name(),
		ViewPropMergeKey: strings.Join(append(cfg.MergeKey(), "version_scope"), ","),
		ViewPropWriter:   WriterVersion,
		"comment": fmt.Sprintf("Resolved %s: latest version per merge key and version_scope (MeterStore resolution SQL). "+
			"Summing %s directly counts every corrected interval more than once.", cfg.Name(), cfg.Name()),
	}
}

func (c *Catalog) viewVersion(cfg meterstore.TableConfig) (*view.Version, error) {
	reps := make([]view.Representation, len(ViewDialects))
	for i, d := range ViewDialects {
		reps[i] = view.NewRepresentation(cfg.ResolutionSQLFor(d), d)
	}
	return view.NewVersion(1, 0, reps, append(table.Identifier{}, c.ns...),
		view.WithDefaultViewCatalog(c.name),
		view.WithVersionSummary(view.VersionSummary{"engine-name": "meterstore", "engine-version": WriterVersion}))
}

// viewCurrent reports whether the stored view already says what cfg says: the
// dialect's SQL for every dialect, the same schema, the same resolved table and key.
func (c *Catalog) viewCurrent(md view.Metadata, cfg meterstore.TableConfig) bool {
	cur := md.CurrentVersion()
	if cur == nil {
		return false
	}
	got := map[string]string{}
	for _, r := range cur.Representations {
		got[strings.ToLower(r.Dialect)] = r.Sql
	}
	for _, d := range ViewDialects {
		if got[d] != cfg.ResolutionSQLFor(d) {
			return false
		}
	}
	if sc := md.CurrentSchema(); sc == nil || !sameColumns(sc, ViewSchema(cfg)) {
		return false
	}
	props := md.Properties()
	wantProps := c.viewProperties(cfg)
	return props[ViewPropResolves] == wantProps[ViewPropResolves] && props[ViewPropMergeKey] == wantProps[ViewPropMergeKey]
}

func sameColumns(a, b *iceberg.Schema) bool {
	fa, fb := a.Fields(), b.Fields()
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i].ID != fb[i].ID || fa[i].Name != fb[i].Name || fa[i].Required != fb[i].Required || !fa[i].Type.Equals(fb[i].Type) {
			return false
		}
	}
	return true
}

func toView(ident table.Identifier, md view.Metadata, loc string) View {
	v := View{Ident: ident, SQL: map[string]string{}, Schema: md.CurrentSchema(), Properties: maps.Clone(md.Properties()),
		Versions: len(md.Versions()), MetadataLocation: loc}
	if cur := md.CurrentVersion(); cur != nil {
		v.VersionID = cur.VersionID
		for _, r := range cur.Representations {
			v.SQL[strings.ToLower(r.Dialect)] = r.Sql
		}
	}
	return v
}

// View loads the resolved view of cfg's table (ErrNoView when there is none).
// The serving layer lists it next to the raw table and serves its SQL.
func (c *Catalog) View(ctx context.Context, cfg meterstore.TableConfig) (View, error) {
	ident, ok := c.viewIdent(cfg)
	if !ok {
		return View{}, fmt.Errorf("cold table %s: %w (resolved name equals the table name)", cfg.Name(), ErrNoView)
	}
	md, loc, err := c.loadView(ctx, ident)
	if err != nil {
		return View{}, err
	}
	if md == nil {
		return View{}, fmt.Errorf("cold table %s: view %s: %w", cfg.Name(), strings.Join(ident, "."), ErrNoView)
	}
	return toView(ident, md, loc), nil
}

// Views lists the views in the catalog's namespace.
func (c *Catalog) Views(ctx context.Context) ([]table.Identifier, error) {
	vc, ok := c.cat.(interface {
		ListViews(context.Context, table.Identifier) iter.Seq2[table.Identifier, error]
	})
	if !ok {
		return nil, fmt.Errorf("catalog: the %s catalog cannot list views", c.opt.Kind)
	}
	var out []table.Identifier
	for id, err := range vc.ListViews(ctx, c.ns) {
		if err != nil {
			return nil, fmt.Errorf("catalog: list views: %w", err)
		}
		out = append(out, id)
	}
	return out, nil
}

// loadView returns the view's metadata and metadata location, or nil when it does not exist.
func (c *Catalog) loadView(ctx context.Context, ident table.Identifier) (view.Metadata, string, error) {
	switch cat := c.cat.(type) {
	case *rest.Catalog:
		v, err := cat.LoadView(ctx, ident)
		if errors.Is(err, icecat.ErrNoSuchView) {
			return nil, "", nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("view %s: load: %w", strings.Join(ident, "."), err)
		}
		return v.Metadata(), v.MetadataLocation(), nil
	default:
		loc, err := c.sqlViewLocation(ctx, ident)
		if err != nil || loc == "" {
			return nil, "", err
		}
		v, err := view.NewFromLocation(ctx, ident, loc, iceio.LoadFSFunc(c.ioProps(), loc))
		if err != nil {
			return nil, "", fmt.Errorf("view %s: read metadata %s: %w", strings.Join(ident, "."), loc, err)
		}
		return v.Metadata(), loc, nil
	}
}

// The SQL catalog of iceberg-go v0.7.0 creates a view with one "default"
// dialect and cannot replace one. So for it the view's metadata file is
// written here, with the view metadata builder, and registered in the
// catalog's own table (iceberg_tables, iceberg_type 'VIEW') — the schema of
// the JDBC catalog that iceberg-go's LoadView/ListViews/DropView read. A
// replacement is a compare-and-swap on metadata_location, like a table commit.

// sqlNamespaceKey is the SQL catalog's storage key for the namespace (a single,
// dot-free level in MeterStore: the name itself).
func (c *Catalog) sqlNamespaceKey() string { return strings.Join(c.ns, ".") }

func (c *Catalog) sqlViewLocation(ctx context.Context, ident table.Identifier) (string, error) {
	var loc sql.NullString
	err := c.db.QueryRowContext(ctx, `SELECT metadata_location FROM iceberg_tables
		WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3 AND iceberg_type = 'VIEW'`,
		c.name, c.sqlNamespaceKey(), ident[len(ident)-1]).Scan(&loc)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("view %s: look up: %w", strings.Join(ident, "."), err)
	}
	return loc.String, nil
}

func (c *Catalog) writeViewMetadata(ctx context.Context, md view.Metadata) (string, error) {
	loc := strings.TrimSuffix(md.Location(), "/") + "/metadata/view-" + uuid.New().String() + ".metadata.json"
	b, err := json.Marshal(md)
	if err != nil {
		return "", fmt.Errorf("view metadata: %w", err)
	}
	fs, err := iceio.LoadFS(ctx, c.ioProps(), loc)
	if err != nil {
		return "", fmt.Errorf("view metadata %s: %w", loc, err)
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return "", fmt.Errorf("view metadata %s: file system cannot write", loc)
	}
	f, err := wfs.Create(loc)
	if err != nil {
		return "", fmt.Errorf("view metadata %s: %w", loc, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return "", fmt.Errorf("view metadata %s: %w", loc, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("view metadata %s: %w", loc, err)
	}
	return loc, nil
}

const viewSyncAttempts = 5

// EnsureView creates the resolved view of t, or replaces its current version
// when its SQL, schema or merge key differ from t's configuration (a merge-key
// migration). Idempotent: an up-to-date view is left alone. CreateTable and
// Table call it; a schema migration that changes the merge key must call it in
// the same operation (the archiver's schema check halts on any other change).
func (t *Table) EnsureView(ctx context.Context) (View, error) {
	return t.c.ensureView(ctx, t.cfg, t.Iceberg())
}

func (c *Catalog) ensureView(ctx context.Context, cfg meterstore.TableConfig, tbl *table.Table) (View, error) {
	ident, ok := c.viewIdent(cfg)
	if !ok {
		return View{}, nil
	}
	name := strings.Join(ident, ".")
	var lastErr error
	for attempt := 0; attempt < viewSyncAttempts; attempt++ {
		md, loc, err := c.loadView(ctx, ident)
		if err != nil {
			return View{}, err
		}
		if md != nil && c.viewCurrent(md, cfg) {
			return toView(ident, md, loc), nil
		}
		ver, err := c.viewVersion(cfg)
		if err != nil {
			return View{}, fmt.Errorf("view %s: %w", name, err)
		}
		var b *view.MetadataBuilder
		if md == nil {
			b, err = view.NewMetadataBuilder()
			if err == nil {
				b.SetLoc(sibling(tbl.Location(), cfg.ResolvedName()))
			}
		} else {
			b, err = view.MetadataBuilderFromBase(md)
		}
		if err != nil {
			return View{}, fmt.Errorf("view %s: %w", name, err)
		}
		res, err := b.SetCurrentVersion(ver, ViewSchema(cfg)).SetProperties(c.viewProperties(cfg)).Build()
		if err != nil {
			return View{}, fmt.Errorf("view %s: build metadata: %w", name, err)
		}
		newLoc, err := c.commitView(ctx, ident, md, loc, res)
		if err == nil {
			return toView(ident, res.Metadata, newLoc), nil
		}
		if !errors.Is(err, errViewRaced) {
			return View{}, err
		}
		lastErr = err // another process created or replaced it meanwhile: re-read and compare
	}
	return View{}, fmt.Errorf("view %s: gave up after %d attempts: %w", name, viewSyncAttempts, lastErr)
}

var errViewRaced = errors.New("view changed concurrently")

// commitView stores res as the view's new metadata: create when base is nil,
// else compare-and-swap from baseLoc.
func (c *Catalog) commitView(ctx context.Context, ident table.Identifier, base view.Metadata, baseLoc string, res *view.MetadataBuildResult) (string, error) {
	name := strings.Join(ident, ".")
	if rc, ok := c.cat.(*rest.Catalog); ok {
		if base == nil {
			cur := res.Metadata.CurrentVersion()
			v, err := rc.CreateView(ctx, ident, cur, res.Metadata.CurrentSchema(), icecat.WithViewProperties(res.Metadata.Properties()))
			if errors.Is(err, icecat.ErrViewAlreadyExists) {
				return "", errViewRaced
			}
			if err != nil {
				return "", fmt.Errorf("view %s: create: %w", name, err)
			}
			return v.MetadataLocation(), nil
		}
		v, err := rc.UpdateView(ctx, ident, []view.Requirement{view.AssertViewUUID(base.ViewUUID())}, res.Changes)
		if err != nil {
			return "", fmt.Errorf("view %s: replace: %w", name, err)
		}
		return v.MetadataLocation(), nil
	}
	if c.db == nil {
		return "", fmt.Errorf("view %s: the %s catalog cannot store views", name, c.opt.Kind)
	}
	newLoc, err := c.writeViewMetadata(ctx, res.Metadata)
	if err != nil {
		return "", err
	}
	ns, viewName := c.sqlNamespaceKey(), ident[len(ident)-1]
	if base == nil {
		// ON CONFLICT: a table or view of that name, or a concurrent creator.
		r, err := c.db.ExecContext(ctx, `INSERT INTO iceberg_tables
			(catalog_name, table_namespace, table_name, iceberg_type, metadata_location, previous_metadata_location)
			VALUES ($1, $2, $3, 'VIEW', $4, NULL) ON CONFLICT DO NOTHING`, c.name, ns, viewName, newLoc)
		if err != nil {
			c.removeFile(ctx, newLoc)
			return "", fmt.Errorf("view %s: register: %w", name, err)
		}
		if n, _ := r.RowsAffected(); n == 0 {
			c.removeFile(ctx, newLoc)
			var typ sql.NullString
			_ = c.db.QueryRowContext(ctx, `SELECT iceberg_type FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3`,
				c.name, ns, viewName).Scan(&typ)
			if typ.String != "VIEW" {
				return "", fmt.Errorf("view %s: a table of that name exists: %w", name, icecat.ErrTableAlreadyExists)
			}
			return "", errViewRaced
		}
		return newLoc, nil
	}
	r, err := c.db.ExecContext(ctx, `UPDATE iceberg_tables SET metadata_location = $5, previous_metadata_location = $4
		WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3 AND iceberg_type = 'VIEW' AND metadata_location = $4`,
		c.name, ns, viewName, baseLoc, newLoc)
	if err != nil {
		c.removeFile(ctx, newLoc)
		return "", fmt.Errorf("view %s: replace: %w", name, err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		c.removeFile(ctx, newLoc)
		return "", errViewRaced
	}
	return newLoc, nil
}

func (c *Catalog) removeFile(ctx context.Context, loc string) {
	if fs, err := iceio.LoadFS(ctx, c.ioProps(), loc); err == nil {
		_ = fs.Remove(loc)
	}
}

// dropView removes the resolved view (PurgeTable).
func (c *Catalog) dropView(ctx context.Context, cfg meterstore.TableConfig) error {
	ident, ok := c.viewIdent(cfg)
	if !ok {
		return nil
	}
	vc, ok := c.cat.(interface {
		DropView(context.Context, table.Identifier) error
	})
	if !ok {
		return nil
	}
	if err := vc.DropView(ctx, ident); err != nil && !errors.Is(err, icecat.ErrNoSuchView) {
		return fmt.Errorf("view %s: drop: %w", strings.Join(ident, "."), err)
	}
	return nil
}

// DialectSQL returns the SQL of dialect d in v, or "".
func (v View) DialectSQL(d string) string { return v.SQL[strings.ToLower(d)] }

// sibling is the location beside loc named name. Not path.Dir: it cleans
// "s3://bucket/…" to "s3:/bucket/…", a location without a bucket.
func sibling(loc, name string) string {
	loc = strings.TrimSuffix(loc, "/")
	return loc[:strings.LastIndex(loc, "/")+1] + name
}
