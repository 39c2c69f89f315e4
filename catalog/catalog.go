package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for the SQL catalog

	"github.com/meterstore/meterstore/settings"
)

// Options configures Open.
type Options struct {
	Kind      string              // "sql" (default) | "rest"
	DSN       string              // PostgreSQL holding the SQL catalog
	URI       string              // REST catalog URI
	Warehouse string              // file:///… or s3://bucket/prefix
	S3        settings.S3Settings // how an s3:// warehouse is reached
	Namespace string              // default "meterstore"
	Name      string              // catalog name, default "meterstore"
	Pool      *pgxpool.Pool       // for leases (cold appends, compaction)

	// BeforeCommit, when set, runs after the data files of a commit are written
	// and just before the catalog commit; an error aborts the commit (the files
	// become orphans). A test hook for crash tests.
	BeforeCommit func(ctx context.Context, table string, op string) error
}

// Catalog is an open Iceberg catalog.
type Catalog struct {
	cat  icecat.Catalog
	db   *sql.DB
	ns   table.Identifier
	opt  Options
	name string
}

// Open connects to the catalog named by opt and ensures the namespace exists.
func Open(ctx context.Context, opt Options) (*Catalog, error) {
	if opt.Namespace == "" {
		opt.Namespace = "meterstore"
	}
	if opt.Name == "" {
		opt.Name = "meterstore"
	}
	if opt.Kind == "" {
		opt.Kind = "sql"
	}
	c := &Catalog{ns: table.Identifier{opt.Namespace}, opt: opt, name: opt.Name}
	switch opt.Kind {
	case "sql":
		if opt.DSN == "" {
			return nil, errors.New("catalog: kind sql needs a DSN (the PostgreSQL holding the catalog)")
		}
		if opt.Warehouse == "" {
			return nil, errors.New("catalog: a warehouse location is required (e.g. file:///var/lib/meterstore/warehouse)")
		}
		db, err := sql.Open("pgx", opt.DSN)
		if err != nil {
			return nil, fmt.Errorf("catalog: open PostgreSQL: %w", err)
		}
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("catalog: connect PostgreSQL: %w", err)
		}
		cat, err := sqlcat.NewCatalog(opt.Name, db, sqlcat.Postgres, c.ioProps())
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("catalog: SQL catalog: %w", err)
		}
		c.cat, c.db = cat, db
		if err := c.checkWarehouse(ctx); err != nil {
			c.Close()
			return nil, err
		}
	case "rest":
		if opt.URI == "" {
			return nil, errors.New("catalog: kind rest needs a URI")
		}
		ro := []rest.Option{rest.WithAdditionalProps(c.ioProps())}
		if opt.Warehouse != "" {
			ro = append(ro, rest.WithWarehouseLocation(opt.Warehouse))
		}
		cat, err := rest.NewCatalog(ctx, opt.Name, opt.URI, ro...)
		if err != nil {
			return nil, fmt.Errorf("catalog: REST catalog %s: %w", opt.URI, err)
		}
		c.cat = cat
	default:
		return nil, fmt.Errorf("catalog: unknown kind %q; use sql or rest", opt.Kind)
	}
	if err := c.ensureNamespace(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Catalog) ensureNamespace(ctx context.Context) error {
	ok, err := c.cat.CheckNamespaceExists(ctx, c.ns)
	if err != nil {
		return fmt.Errorf("catalog: namespace %s: %w", c.opt.Namespace, err)
	}
	if ok {
		return nil
	}
	err = c.cat.CreateNamespace(ctx, c.ns, nil)
	if err != nil && !errors.Is(err, icecat.ErrNamespaceAlreadyExists) && !strings.Contains(err.Error(), "already exists") {
		return fmt.Errorf("catalog: create namespace %s: %w", c.opt.Namespace, err)
	}
	return nil
}

// Close releases the catalog and its database handle.
func (c *Catalog) Close() error {
	var errs []error
	if cl, ok := c.cat.(icecat.Closer); ok {
		errs = append(errs, cl.Close())
	}
	if c.db != nil {
		errs = append(errs, c.db.Close())
	}
	return errors.Join(errs...)
}

// Iceberg exposes the underlying iceberg-go catalog (maintenance tools, tests).
func (c *Catalog) Iceberg() icecat.Catalog { return c.cat }

// ObjectStore is how the warehouse is reached when it lies on object storage
// (s3://): what the engine's DuckDB needs to read the cold files itself.
func (c *Catalog) ObjectStore() (settings.S3Settings, bool) {
	return c.opt.S3, IsObjectStore(c.opt.Warehouse)
}

func (c *Catalog) ident(name string) table.Identifier {
	return append(append(table.Identifier{}, c.ns...), name)
}
