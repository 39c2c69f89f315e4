package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/meterstore/meterstore"
)

// ErrSchemaPending: the configured schema adds to the table's, and the
// addition is not applied yet (Evolve applies it). A writer refuses rather
// than write files the table's schema does not describe.
var ErrSchemaPending = errors.New("additive schema change not applied")

const evolveAttempts = 5

// Evolve applies the additive changes of the handle's configuration to the
// cold table — new nullable columns under their configured field ids, NOT NULL
// relaxed — in one schema commit, then re-renders the resolved view for the
// new columns. It is idempotent: a table already in the configured schema is
// only read, and a commit lost to a concurrent evolution is re-checked against
// the winner's schema. A narrowing change applies nothing: the error wraps
// ErrUnsafeSchema and names every reason. The returned check lists the
// changes found before the commit.
func (t *Table) Evolve(ctx context.Context) (_ SchemaCheck, err error) {
	defer t.explainObjectStore(&err)
	if err := t.Refresh(ctx); err != nil {
		return SchemaCheck{}, err
	}
	var first SchemaCheck
	for attempt := 0; attempt < evolveAttempts; attempt++ {
		check := checkSchema(t.cfg, t.Iceberg())
		if attempt == 0 {
			first = check
		}
		if err := check.Err(); err != nil {
			return first, fmt.Errorf("cold table %s: %w", t.cfg.Name(), err)
		}
		if len(check.Changes) == 0 {
			_, err := t.EnsureView(ctx)
			return first, err
		}
		err = t.commitSchema(ctx, t.Iceberg())
		if !isCommitConflict(err) {
			if err != nil {
				return first, err
			}
			continue // the next round sees no change and renders the view
		}
		if err := t.Refresh(ctx); err != nil {
			return first, err
		}
	}
	return first, fmt.Errorf("cold table %s: evolve schema: gave up after %d attempts against concurrent commits: %w", t.cfg.Name(), evolveAttempts, ErrCommitConflict)
}

// commitSchema makes the configured schema current, requiring that the
// schema it replaces is still current.
func (t *Table) commitSchema(ctx context.Context, tbl *table.Table) error {
	updates := []table.Update{table.NewAddSchemaUpdate(Schema(t.cfg)), table.NewSetCurrentSchemaUpdate(-1)}
	reqs := []table.Requirement{table.AssertCurrentSchemaID(tbl.Schema().ID)}
	if _, _, err := t.c.cat.CommitTable(ctx, t.ident, reqs, updates); err != nil {
		return fmt.Errorf("cold table %s: evolve schema: %w", t.cfg.Name(), err)
	}
	return t.Refresh(ctx)
}

// agreedLayout refuses to write files for tbl unless its schema is exactly
// the configured one: nothing is written into a layout nobody agreed on (a
// quarantined table), nor under a schema that lacks the configured columns.
func (t *Table) agreedLayout(tbl *table.Table) error {
	check := checkSchema(t.cfg, tbl)
	if err := check.Err(); err != nil {
		return fmt.Errorf("cold table %s: %w", t.cfg.Name(), err)
	}
	if len(check.Changes) > 0 {
		parts := make([]string, len(check.Changes))
		for i, c := range check.Changes {
			parts[i] = c.String()
		}
		return fmt.Errorf("cold table %s: %w: %s", t.cfg.Name(), ErrSchemaPending, strings.Join(parts, "; "))
	}
	return nil
}

// StoredLayout is the table configuration the cold table's current schema and
// partition spec describe, with cfg's settings and the value lists of its
// columns of the same name: what a quarantined table is read in, so queries
// keep answering from the layout its rows were stored in. Extra columns are
// the stored fields from FirstExtraFieldID on, identity where the partition
// spec holds them, melo_id in the merge key where it is NOT NULL, the time
// model from "to". It fails where the stored schema cannot be a MeterStore
// layout (extra columns not text, or not numbered consecutively).
func (t *Table) StoredLayout(cfg meterstore.TableConfig) (meterstore.TableConfig, error) {
	tbl := t.Iceberg()
	sc := tbl.Schema()
	spec := cfg.Spec()
	core := meterstore.CoreColumns(cfg.TimeModel())
	if to, ok := sc.FindFieldByID(core[meterstore.ColTo].FieldID); ok {
		spec.TimeModel = storedTimeModel(to)
	}
	if melo, ok := sc.FindFieldByID(core[meterstore.ColMeloID].FieldID); ok {
		byMelo := melo.Required
		spec.IdentifyByMelo = &byMelo
	}
	identity := storedIdentity(tbl)
	var extra []iceberg.NestedField
	for _, f := range sc.Fields() {
		if f.ID >= meterstore.FirstExtraFieldID {
			extra = append(extra, f)
		}
	}
	slices.SortFunc(extra, func(a, b iceberg.NestedField) int { return a.ID - b.ID })
	spec.Columns = nil
	for i, f := range extra {
		if f.ID != meterstore.FirstExtraFieldID+i || !f.Type.Equals(iceberg.PrimitiveTypes.String) {
			return meterstore.TableConfig{}, fmt.Errorf("cold table %s: column %s (field id %d, %s) is not a MeterStore extra column "+
				"(text, field ids consecutive from %d)", cfg.Name(), f.Name, f.ID, f.Type, meterstore.FirstExtraFieldID)
		}
		col, _ := cfg.Column(f.Name)
		col.Name, col.Kind, col.Nullable = f.Name, meterstore.Attribute, !f.Required
		if identity[f.ID] {
			col.Kind, col.Nullable = meterstore.Identity, false
		}
		spec.Columns = append(spec.Columns, col)
	}
	if !slices.ContainsFunc(spec.Columns, func(c meterstore.Column) bool { return c.Name == spec.SubjectColumn && c.Kind == meterstore.Attribute }) {
		spec.SubjectColumn = ""
	}
	out, err := spec.Build()
	if err != nil {
		return meterstore.TableConfig{}, fmt.Errorf("cold table %s: stored layout: %w", cfg.Name(), err)
	}
	return out, nil
}
