package hot

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/pglock"
)

// AddColumns applies the configuration's additive changes to an existing
// parent table: each declared column it lacks is added as a nullable column
// — to the parent, which passes it to every attached partition, and to each
// partition detached for archival, whose rows an archival run still reads —
// with its CHECK where it is coded or checked; a column declared nullable
// loses its NOT NULL. The CHECK is added NOT VALID, then validated: the
// rows are checked without holding ACCESS EXCLUSIVE on the parent for the
// scan. Whether a change is additive is the cold schema check's to decide
// (catalog.Table.CheckSchema), which runs first; a column already there is
// left as it is, and a value list added to it starts validation on the write
// path only (UncheckedColumns names it). Idempotent; returns the columns added.
func (s *Store) AddColumns(ctx context.Context) ([]string, error) {
	name := s.cfg.Name()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("add columns to %s: %w", name, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", pglock.Key("ddl")); err != nil {
		return nil, fmt.Errorf("add columns to %s: lock: %w", name, err)
	}
	have, err := columnsOf(ctx, tx, name)
	if err != nil {
		return nil, fmt.Errorf("add columns to %s: %w", name, err)
	}
	detached, err := s.detachedNames(ctx, tx)
	if err != nil {
		return nil, err
	}
	var added []string
	var validate []string
	for _, col := range s.cfg.ExtraColumns() {
		notNull, ok := have[col.Name]
		switch {
		case !ok:
			stmts := []string{fmt.Sprintf(`ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s text`, meterstore.QuoteIdent(name), meterstore.QuoteIdent(col.Name))}
			for d := range detached {
				stmts = append(stmts, fmt.Sprintf(`ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s text`, meterstore.QuoteIdent(d), meterstore.QuoteIdent(col.Name)))
			}
			if expr, ok := extraCheck(col); ok {
				stmts = append(stmts, fmt.Sprintf(`ALTER TABLE %s ADD CONSTRAINT %s CHECK (%s) NOT VALID`,
					meterstore.QuoteIdent(name), meterstore.QuoteIdent(ExtraCheckName(col.Name)), expr))
				validate = append(validate, ExtraCheckName(col.Name))
			}
			if err := execAll(ctx, tx, stmts); err != nil {
				return nil, fmt.Errorf("add column %s to %s: %w", col.Name, name, err)
			}
			added = append(added, col.Name)
		case notNull && col.Nullable:
			if _, err := tx.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s ALTER COLUMN %s DROP NOT NULL`, meterstore.QuoteIdent(name), meterstore.QuoteIdent(col.Name))); err != nil {
				return nil, fmt.Errorf("relax NOT NULL of %s on %s: %w", col.Name, name, err)
			}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("add columns to %s: commit: %w", name, err)
	}
	for _, c := range validate {
		if _, err := s.pool.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s VALIDATE CONSTRAINT %s`, meterstore.QuoteIdent(name), meterstore.QuoteIdent(c))); err != nil {
			return added, fmt.Errorf("validate %s on %s: %w", c, name, err)
		}
	}
	return added, nil
}

func execAll(ctx context.Context, tx pgx.Tx, stmts []string) error {
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// columnsOf maps each column of table to whether it is NOT NULL.
func columnsOf(ctx context.Context, q querier, table string) (map[string]bool, error) {
	rows, err := q.Query(ctx, `SELECT attname, attnotnull FROM pg_attribute
		WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`, meterstore.QuoteIdent(table))
	if err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", table, err)
	}
	out := map[string]bool{}
	var n string
	var notNull bool
	_, err = pgx.ForEachRow(rows, []any{&n, &notNull}, func() error { out[n] = notNull; return nil })
	if err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", table, err)
	}
	return out, nil
}

// UncheckedColumns names each declared coded or checked column whose CHECK
// the parent lacks — a value list declared on a column that already existed:
// the write path validates it, PostgreSQL does not until the constraint is
// added. Each entry says the ALTER TABLE that adds it.
func (s *Store) UncheckedColumns(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'c'`, meterstore.QuoteIdent(s.cfg.Name()))
	if err != nil {
		return nil, fmt.Errorf("read constraints of %s: %w", s.cfg.Name(), err)
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read constraints of %s: %w", s.cfg.Name(), err)
	}
	var out []string
	for _, col := range s.cfg.ExtraColumns() {
		expr, ok := extraCheck(col)
		if !ok || slices.Contains(have, ExtraCheckName(col.Name)) {
			continue
		}
		out = append(out, fmt.Sprintf("column %s of %s declares a value check the database does not enforce (the write path does); add it with: "+
			"ALTER TABLE %s ADD CONSTRAINT %s CHECK (%s) NOT VALID; ALTER TABLE %[3]s VALIDATE CONSTRAINT %[4]s",
			col.Name, s.cfg.Name(), meterstore.QuoteIdent(s.cfg.Name()), meterstore.QuoteIdent(ExtraCheckName(col.Name)), expr))
	}
	return out, nil
}
