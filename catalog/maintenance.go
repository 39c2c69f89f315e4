package catalog

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/telemetry"
)

// Snapshot-expiry defaults: retention is a compliance decision.
const (
	DefaultRetention       = 10 * 365 * 24 * time.Hour
	MinRetention           = DefaultRetention
	DefaultMinSnapshots    = 20
	DefaultOrphanSafetyAge = 3 * 24 * time.Hour
)

// ExpireSnapshots removes snapshots older than retention, keeping at least
// minKeep. A retention under ten years is refused unless allowShortRetention.
// Returns the number of snapshots removed.
func (t *Table) ExpireSnapshots(ctx context.Context, retention time.Duration, minKeep int, allowShortRetention bool) (removed int, err error) {
	defer t.explainObjectStore(&err)
	defer t.recordRun(ctx, time.Now(), telemetry.Expiry, func(r *telemetry.Run) { r.Snapshots = int64(removed) }, &err)
	if retention < MinRetention && !allowShortRetention {
		return 0, fmt.Errorf("cold table %s: retention %s is shorter than %s: %w", t.cfg.Name(), retention, MinRetention, ErrRetentionTooShort)
	}
	if minKeep < 1 {
		minKeep = 1
	}
	if err := t.Refresh(ctx); err != nil {
		return 0, err
	}
	tbl := t.Iceberg()
	before := len(tbl.Metadata().Snapshots())
	tx := tbl.NewTransaction()
	if err := tx.ExpireSnapshots(table.WithRetainLast(minKeep), table.WithOlderThan(retention)); err != nil {
		return 0, fmt.Errorf("cold table %s: expire snapshots: %w", t.cfg.Name(), err)
	}
	nt, err := t.commitTx(ctx, tx, "expire snapshots")
	if err != nil {
		return 0, err
	}
	return before - len(nt.Metadata().Snapshots()), nil
}

// DeleteOrphanFiles deletes (or, with dryRun, lists) files under the table
// location that no snapshot references and that are older than olderThan —
// the safety age that spares files of commits in flight.
func (t *Table) DeleteOrphanFiles(ctx context.Context, olderThan time.Duration, dryRun bool) (orphans []string, err error) {
	defer t.explainObjectStore(&err)
	if !dryRun {
		defer t.recordRun(ctx, time.Now(), telemetry.OrphanCleanup, func(r *telemetry.Run) { r.Orphans = int64(len(orphans)) }, &err)
	}
	if err := t.Refresh(ctx); err != nil {
		return nil, err
	}
	res, err := t.Iceberg().DeleteOrphanFiles(ctx, table.WithFilesOlderThan(olderThan), table.WithDryRun(dryRun))
	if err != nil {
		return nil, fmt.Errorf("cold table %s: orphan cleanup: %w", t.cfg.Name(), err)
	}
	out := make([]string, len(res.OrphanFileLocations))
	for i, l := range res.OrphanFileLocations {
		out[i] = LocalPath(l)
	}
	sort.Strings(out)
	return out, nil
}

// SchemaChange is one difference between the configured and the stored schema.
type SchemaChange struct {
	Column string
	Kind   string // one of the SchemaChange kinds below
	Detail string
	Safe   bool
}

// SchemaChange kinds. Only "add column" (nullable, a field id never assigned
// before) and "required relaxed" are safe: Evolve applies them.
const (
	ChangeAdd             = "add column"
	ChangeRequiredAdded   = "required added"
	ChangeRequiredRelaxed = "required relaxed"
	ChangeRetype          = "retype"
	ChangeRename          = "rename"
	ChangeDrop            = "drop column"
	ChangeFieldIDReused   = "field id reused"
	ChangeNewIdentity     = "new identity column"
	ChangeIdentityDropped = "identity column dropped"
	ChangeTimeModel       = "time model changed"
)

func (c SchemaChange) String() string {
	s := "unsafe"
	if c.Safe {
		s = "safe"
	}
	return fmt.Sprintf("%s %s (%s): %s", s, c.Kind, c.Column, c.Detail)
}

// SchemaCheck compares the configured schema with the cold table's.
type SchemaCheck struct {
	Changes []SchemaChange
}

// Safe reports whether archival may proceed (no narrowing change).
func (s SchemaCheck) Safe() bool { return len(s.Unsafe()) == 0 }

// Unsafe lists the narrowing changes.
func (s SchemaCheck) Unsafe() []SchemaChange {
	var out []SchemaChange
	for _, c := range s.Changes {
		if !c.Safe {
			out = append(out, c)
		}
	}
	return out
}

// Reasons names each narrowing change, for an operator: what quarantines the table.
func (s SchemaCheck) Reasons() []string {
	var out []string
	for _, c := range s.Unsafe() {
		out = append(out, fmt.Sprintf("%s %s: %s", c.Kind, c.Column, c.Detail))
	}
	return out
}

// Err is nil when safe, else an error wrapping ErrUnsafeSchema listing each unsafe change.
func (s SchemaCheck) Err() error {
	r := s.Reasons()
	if len(r) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrUnsafeSchema, strings.Join(r, "; "))
}

// CheckSchema compares cfg with the table's current schema and partition spec
// (as of the handle's state), column by field id. Additive drift (a new
// nullable column, a relaxed NOT NULL, a widened decimal precision) is safe;
// anything else narrows what the stored rows mean, and the table is
// quarantined: a retype Iceberg cannot promote, a decimal scale change, a NOT
// NULL addition, a new or dropped identity column (identify_by_melo included),
// a changed time model, a rename, a field id an earlier schema assigned, and a
// stored column the configuration no longer declares — archival would write
// files without it and its values in PostgreSQL would be lost.
//
// A coded or checked column's value list is not compared: it rides in the
// configuration only, and a vocabulary is not a schema change.
func (t *Table) CheckSchema(cfg meterstore.TableConfig) (SchemaCheck, error) {
	return checkSchema(cfg, t.Iceberg()), nil
}

func checkSchema(cfg meterstore.TableConfig, tbl *table.Table) SchemaCheck {
	sc := tbl.Schema()
	var out SchemaCheck
	seen := map[int]bool{}
	for _, c := range cfg.Columns() {
		seen[c.FieldID] = true
		f, ok := sc.FindFieldByID(c.FieldID)
		if !ok {
			out.Changes = append(out.Changes, addedColumn(c, tbl.Metadata().LastColumnID()))
			continue
		}
		out.Changes = append(out.Changes, changedColumn(cfg, c, f)...)
	}
	for _, f := range sc.Fields() {
		if !seen[f.ID] {
			out.Changes = append(out.Changes, SchemaChange{Column: f.Name, Kind: ChangeDrop, Safe: false,
				Detail: fmt.Sprintf("field id %d is in the table but not configured: archival would write files without it "+
					"and drop its values; declare it again (a configuration older than the table's?)", f.ID)})
		}
	}
	out.Changes = append(out.Changes, identityChanges(cfg, tbl)...)
	return out
}

// addedColumn is the change a configured column missing from the table makes.
// Its field id must be new to the table: files of an earlier schema may hold
// another column under an id assigned before.
func addedColumn(c meterstore.ColumnDef, lastColumnID int) SchemaChange {
	ch := SchemaChange{Column: c.Name, Kind: ChangeAdd, Safe: c.Nullable,
		Detail: fmt.Sprintf("%s, field id %d, %s", IcebergType(c.Type), c.FieldID, nullability(c.Nullable))}
	switch {
	case c.FieldID <= lastColumnID:
		ch.Kind, ch.Safe = ChangeFieldIDReused, false
		ch.Detail = fmt.Sprintf("field id %d was assigned before (the table's last column id is %d): files of an earlier schema "+
			"may hold another column under it; declare new columns after the existing ones", c.FieldID, lastColumnID)
	case !c.Nullable:
		ch.Kind = ChangeRequiredAdded
		ch.Detail += ": historical files hold no value for it"
	}
	return ch
}

// changedColumn compares one configured column with its stored field.
func changedColumn(cfg meterstore.TableConfig, c meterstore.ColumnDef, f iceberg.NestedField) []SchemaChange {
	var out []SchemaChange
	if f.Name != c.Name {
		out = append(out, SchemaChange{Column: c.Name, Kind: ChangeRename, Safe: false,
			Detail: fmt.Sprintf("field id %d is %q in the table: reads map it by id, but archival writes the configured name", c.FieldID, f.Name)})
	}
	if want := IcebergType(c.Type); !f.Type.Equals(want) {
		safe, why := promotable(f.Type, want)
		out = append(out, SchemaChange{Column: c.Name, Kind: ChangeRetype, Safe: safe, Detail: fmt.Sprintf("%s → %s%s", f.Type, want, why)})
	}
	switch {
	case f.Required == !c.Nullable:
	case c.FieldID == meterstore.CoreColumns(cfg.TimeModel())[meterstore.ColMeloID].FieldID:
		kind, detail := ChangeNewIdentity, "identify_by_melo is on: melo_id joins the merge key of every stored row"
		if f.Required {
			kind, detail = ChangeIdentityDropped, "identify_by_melo is off: readings of different Messlokationen would merge"
		}
		out = append(out, SchemaChange{Column: c.Name, Kind: kind, Safe: false, Detail: detail})
	case c.FieldID == meterstore.CoreColumns(cfg.TimeModel())[meterstore.ColTo].FieldID:
		out = append(out, SchemaChange{Column: c.Name, Kind: ChangeTimeModel, Safe: false,
			Detail: fmt.Sprintf("the table holds %s rows, the configuration declares %s", storedTimeModel(f), cfg.TimeModel())})
	case !c.Nullable:
		out = append(out, SchemaChange{Column: c.Name, Kind: ChangeRequiredAdded, Safe: false, Detail: "NOT NULL on a column historical rows may hold null in"})
	default:
		out = append(out, SchemaChange{Column: c.Name, Kind: ChangeRequiredRelaxed, Safe: true, Detail: "now nullable"})
	}
	return out
}

// storedTimeModel reads the time model off the stored "to" field: NOT NULL on
// an interval table, nullable (always null) on a point table.
func storedTimeModel(to iceberg.NestedField) meterstore.TimeModel {
	if to.Required {
		return meterstore.Interval
	}
	return meterstore.Point
}

// identityChanges compares the configured identity columns with the
// partition's identity fields, by field id.
func identityChanges(cfg meterstore.TableConfig, tbl *table.Table) []SchemaChange {
	sc := tbl.Schema()
	stored := storedIdentity(tbl)
	want := map[int]bool{}
	var out []SchemaChange
	for _, c := range cfg.Columns() {
		if c.Extra == nil || c.Extra.Kind != meterstore.Identity {
			continue
		}
		want[c.FieldID] = true
		if !stored[c.FieldID] {
			out = append(out, SchemaChange{Column: c.Name, Kind: ChangeNewIdentity, Safe: false,
				Detail: "it changes what the same reading means for every stored row"})
		}
	}
	for id := range stored {
		if !want[id] {
			name, _ := sc.FindColumnName(id)
			out = append(out, SchemaChange{Column: name, Kind: ChangeIdentityDropped, Safe: false,
				Detail: "readings of different " + name + " values would merge"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Column < out[j].Column })
	return out
}

// storedIdentity is the set of field ids the partition spec holds identity fields of.
func storedIdentity(tbl *table.Table) map[int]bool {
	out := map[int]bool{}
	spec := tbl.Spec()
	for _, pf := range spec.Fields() {
		if _, ok := pf.Transform.(iceberg.IdentityTransform); ok {
			out[pf.SourceID()] = true
		}
	}
	return out
}

func nullability(nullable bool) string {
	if nullable {
		return "nullable"
	}
	return "NOT NULL"
}

// promotable follows Iceberg's promotion rules for the types we store.
func promotable(from, to iceberg.Type) (bool, string) {
	fd, ok1 := from.(iceberg.DecimalType)
	td, ok2 := to.(iceberg.DecimalType)
	if ok1 && ok2 {
		if fd.Scale() != td.Scale() {
			return false, ": decimal scale change"
		}
		if td.Precision() < fd.Precision() {
			return false, ": decimal precision narrowed"
		}
		return true, ""
	}
	return false, ": Iceberg cannot promote this type"
}
