package catalog

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

// foreignSchemaChange commits a schema change as another engine would
// (Spark's ALTER TABLE), through iceberg-go's UpdateSchema.
func foreignSchemaChange(t *testing.T, tb *Table, change func(*table.UpdateSchema) *table.UpdateSchema) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, tb.Refresh(ctx))
	tx := tb.Iceberg().NewTransaction()
	require.NoError(t, change(tx.UpdateSchema(true, false)).Commit())
	_, err := tx.Commit(ctx)
	require.NoError(t, err)
	require.NoError(t, tb.Refresh(ctx))
}

func kindsOf(check SchemaCheck) map[string]bool {
	out := map[string]bool{}
	for _, c := range check.Unsafe() {
		out[c.Kind] = true
	}
	return out
}

// TestCheckSchemaNamesEachNarrowing: every change that alters what stored
// rows mean is unsafe and named; the stored layout keeps the merge key the
// rows were stored under.
func TestCheckSchemaNamesEachNarrowing(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg) // tenant identity, contract nullable
	require.NoError(t, err)
	on := true
	for _, tc := range []struct {
		name string
		mod  func(*meterstore.TableSpec)
		kind string
	}{
		{"column dropped from the configuration", func(s *meterstore.TableSpec) { s.Columns = s.Columns[:1] }, ChangeDrop},
		{"NOT NULL added", func(s *meterstore.TableSpec) { s.Columns[1].Nullable = false }, ChangeRequiredAdded},
		{"new NOT NULL column", func(s *meterstore.TableSpec) { s.Columns = append(s.Columns, meterstore.Column{Name: "region"}) }, ChangeRequiredAdded},
		{"attribute made identity", func(s *meterstore.TableSpec) {
			s.Columns[1].Kind, s.Columns[1].Nullable = meterstore.Identity, false
		}, ChangeNewIdentity},
		{"new identity column", func(s *meterstore.TableSpec) {
			s.Columns = append(s.Columns, meterstore.Column{Name: "region", Kind: meterstore.Identity})
		}, ChangeNewIdentity},
		{"identity dropped", func(s *meterstore.TableSpec) { s.Columns[0].Kind = meterstore.Attribute }, ChangeIdentityDropped},
		{"identify_by_melo turned on", func(s *meterstore.TableSpec) { s.IdentifyByMelo = &on }, ChangeNewIdentity},
		{"time model changed", func(s *meterstore.TableSpec) { s.TimeModel = meterstore.Point }, ChangeTimeModel},
		{"column declared before an existing one", func(s *meterstore.TableSpec) {
			s.Columns = []meterstore.Column{s.Columns[0], {Name: "region", Nullable: true}, s.Columns[1]}
		}, ChangeRename},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := e.cfg.Spec()
			tc.mod(&spec)
			cfg, err := spec.Build()
			require.NoError(t, err)
			check, err := tb.CheckSchema(cfg)
			require.NoError(t, err)
			require.ErrorIs(t, check.Err(), ErrUnsafeSchema)
			require.True(t, kindsOf(check)[tc.kind], "%s: %v", tc.kind, check.Reasons())

			stored, err := tb.StoredLayout(cfg)
			require.NoError(t, err)
			require.Equal(t, e.cfg.MergeKey(), stored.MergeKey(), "queries resolve by the stored merge key")
			require.Equal(t, e.cfg.ColumnNames(), stored.ColumnNames())
			check, err = tb.CheckSchema(stored)
			require.NoError(t, err)
			require.Empty(t, check.Changes, "the stored layout is the table's")
		})
	}

	// Another engine widens value's precision: the configured decimal(18,6) narrows it.
	foreignSchemaChange(t, tb, func(u *table.UpdateSchema) *table.UpdateSchema {
		return u.UpdateColumn([]string{"value"}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Valid: true, Val: iceberg.DecimalTypeOf(20, 6)}})
	})
	check, err := tb.CheckSchema(e.cfg)
	require.NoError(t, err)
	require.True(t, kindsOf(check)[ChangeRetype], check.Reasons())
	require.Contains(t, check.Err().Error(), "decimal precision narrowed")
}

// TestEvolveAddsAColumn: a nullable column declared last is committed under
// its configured field id, once; writing files waits for it; a field id an
// earlier schema assigned is refused.
func TestEvolveAddsAColumn(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	_, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	spec := e.cfg.Spec()
	spec.Columns = append(spec.Columns, meterstore.Column{Name: "region", Nullable: true, Values: []string{"NORD", "SUED"}})
	cfg, err := spec.Build()
	require.NoError(t, err)
	tb, err := e.cat.Table(ctx, cfg)
	require.NoError(t, err)

	_, err = tb.newFanout(ctx, tb.Iceberg(), defaultBounds)
	require.ErrorIs(t, err, ErrSchemaPending, "no file is written before the column is in the table")
	check, err := tb.Evolve(ctx)
	require.NoError(t, err)
	require.Len(t, check.Changes, 1)
	require.Equal(t, ChangeAdd, check.Changes[0].Kind)
	f, ok := tb.Iceberg().Schema().FindFieldByName("region")
	require.True(t, ok)
	require.Equal(t, meterstore.FirstExtraFieldID+2, f.ID)
	require.False(t, f.Required)
	schemaID := tb.Iceberg().Schema().ID
	check, err = tb.Evolve(ctx)
	require.NoError(t, err)
	require.Empty(t, check.Changes)
	require.Equal(t, schemaID, tb.Iceberg().Schema().ID, "idempotent: nothing committed again")
	_, err = tb.newFanout(ctx, tb.Iceberg(), defaultBounds)
	require.NoError(t, err)

	// Another engine drops the column; declaring a new one reuses its field id.
	foreignSchemaChange(t, tb, func(u *table.UpdateSchema) *table.UpdateSchema { return u.DeleteColumn([]string{"region"}) })
	spec.Columns[len(spec.Columns)-1].Name = "grid_area"
	reuse, err := spec.Build()
	require.NoError(t, err)
	check, err = tb.CheckSchema(reuse)
	require.NoError(t, err)
	require.True(t, kindsOf(check)[ChangeFieldIDReused], check.Reasons())
}
