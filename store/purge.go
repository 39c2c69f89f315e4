package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
)

// PurgeTable deletes a table entirely — the one operation that deletes stored
// readings: the PostgreSQL table with every partition (attached, and detached
// ones an interrupted archival left), the Iceberg catalog entry, and its data
// files. confirmName must repeat name, because a purge has no recovery path.
// Nothing else is append-only-breaking: a correction is a new version, and
// erasure destroys a mapping rather than rows. The table handle is unusable
// afterwards (ErrPurged); the engine answers its relations with an error.
func (s *Store) PurgeTable(ctx context.Context, name, confirmName string) error {
	if name == "" || name != confirmName {
		return fmt.Errorf("purge table %q: the confirmation %q does not repeat the name; a purge has no recovery path", name, confirmName)
	}
	t, ok := s.Table(name)
	if !ok || t.cfg.Name() != name {
		return fmt.Errorf("purge table %q: not a configured table (give the physical name, e.g. readings_versions)", name)
	}
	return t.purge(ctx)
}

func (t *Table) purge(ctx context.Context) error {
	name := t.cfg.Name()
	if err := t.cold.Refresh(ctx); err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
		return fmt.Errorf("purge table %s: %w", name, err)
	}
	// The data files, listed before the catalog entry goes: a catalog purge is
	// not guaranteed to delete them (iceberg-go's SQL catalog drops metadata).
	var files []string
	if !t.purged.Load() {
		df, _, err := t.cold.PlanFiles(ctx, catalog.PlanRequest{})
		if err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
			return fmt.Errorf("purge table %s: list data files: %w", name, err)
		}
		for _, f := range df {
			files = append(files, f.Path)
		}
	}
	t.purged.Store(true)
	detached, err := t.hot.DetachedPartitions(ctx)
	if err != nil {
		return fmt.Errorf("purge table %s: %w", name, err)
	}
	for _, p := range detached {
		if _, err := t.st.cfg.Pool.Exec(ctx, "DROP TABLE IF EXISTS "+meterstore.QuoteIdent(p.Name)); err != nil {
			return fmt.Errorf("purge table %s: drop detached partition %s: %w", name, p.Name, err)
		}
	}
	// DROP of a partitioned parent drops every attached partition with it.
	if _, err := t.st.cfg.Pool.Exec(ctx, "DROP TABLE IF EXISTS "+meterstore.QuoteIdent(name)+" CASCADE"); err != nil {
		return fmt.Errorf("purge table %s: drop hot table: %w", name, err)
	}
	if err := t.st.cfg.Catalog.PurgeTable(ctx, t.cfg); err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
		return fmt.Errorf("purge table %s: %w", name, err)
	}
	var errs []error
	for _, f := range files {
		if err := removeDataFile(f); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("purge table %s: delete data files: %w", name, err)
	}
	return nil
}

// removeDataFile deletes a local data file; a file already gone is fine. An
// object-store location is left to the catalog's purge.
func removeDataFile(loc string) error {
	path := loc
	if strings.Contains(loc, "://") {
		u, err := url.Parse(loc)
		if err != nil || u.Scheme != "file" {
			return nil
		}
		path = u.Path
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// AuditAttributeColumn counts the merge keys for which the attribute column
// takes more than one value across stored versions (a null counts as a value),
// by SQL through the engine over the unresolved relation. A non-zero answer
// means the column changed under corrections — legitimate for an attribute, and
// the evidence to look at before declaring it an identity column. Merge-key and
// unknown columns are refused.
func (t *Table) AuditAttributeColumn(ctx context.Context, column string) (int64, error) {
	if err := t.usable(); err != nil {
		return 0, err
	}
	if t.cfg.IsMergeKeyColumn(column) {
		return 0, fmt.Errorf("audit column %s of %s: it is part of the merge key, so it has one value per reading by definition", column, t.cfg.Name())
	}
	known := false
	for _, c := range t.cfg.Columns() {
		known = known || c.Name == column
	}
	if !known {
		return 0, fmt.Errorf("audit column %q of %s: no such column", column, t.cfg.Name())
	}
	col := meterstore.QuoteIdent(column)
	key := meterstore.QuoteIdents(t.cfg.MergeKey())
	q := fmt.Sprintf(`SELECT count(*) FROM (SELECT %s FROM %s GROUP BY %s
		HAVING count(DISTINCT %s) + max(CASE WHEN %s IS NULL THEN 1 ELSE 0 END) > 1) AS audited`,
		key, meterstore.QuoteIdent(t.cfg.Name()), key, col, col)
	res, err := t.st.eng.Query(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("audit column %s of %s: %w", column, t.cfg.Name(), err)
	}
	if len(res.Rows) != 1 {
		return 0, fmt.Errorf("audit column %s of %s: %d result rows", column, t.cfg.Name(), len(res.Rows))
	}
	switch n := res.Rows[0][0].(type) {
	case int64:
		return n, nil
	case int32:
		return int64(n), nil
	}
	return 0, fmt.Errorf("audit column %s of %s: unexpected count type %T", column, t.cfg.Name(), res.Rows[0][0])
}

// AuditAttributeColumn runs Table.AuditAttributeColumn on the store's single table.
func (s *Store) AuditAttributeColumn(ctx context.Context, column string) (int64, error) {
	t, err := s.only()
	if err != nil {
		return 0, err
	}
	return t.AuditAttributeColumn(ctx, column)
}
