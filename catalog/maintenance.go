package catalog

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"meterstore"
	"meterstore/internal/telemetry"
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
	Kind   string // "add column", "drop column", "retype", "required added", "required relaxed", "rename", "new identity column", "identity column dropped"
	Detail string
	Safe   bool
}

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

// Err is nil when safe, else an error wrapping ErrUnsafeSchema listing each unsafe change.
func (s SchemaCheck) Err() error {
	u := s.Unsafe()
	if len(u) == 0 {
		return nil
	}
	parts := make([]string, len(u))
	for i, c := range u {
		parts[i] = c.String()
	}
	return fmt.Errorf("%w: %s", ErrUnsafeSchema, strings.Join(parts, "; "))
}

// CheckSchema compares cfg with the table's current schema and partition spec
// (as of the handle's state). Additive drift (a new nullable column, a relaxed
// NOT NULL, a widened decimal precision) is safe; a retype Iceberg cannot
// promote, a decimal scale change, a NOT NULL addition, a new or dropped
// identity column is not. The archiver quarantines the table on unsafe changes.
func (t *Table) CheckSchema(cfg meterstore.TableConfig) (SchemaCheck, error) {
	tbl := t.Iceberg()
	sc := tbl.Schema()
	var out SchemaCheck
	seen := map[int]bool{}
	for _, c := range cfg.Columns() {
		seen[c.FieldID] = true
		want := IcebergType(c.Type)
		f, ok := sc.FindFieldByID(c.FieldID)
		if !ok {
			out.Changes = append(out.Changes, SchemaChange{Column: c.Name, Kind: "add column", Safe: c.Nullable,
				Detail: fmt.Sprintf("%s, field id %d, %s", want, c.FieldID, nullability(c.Nullable))})
			if !c.Nullable {
				out.Changes[len(out.Changes)-1].Kind = "required added"
				out.Changes[len(out.Changes)-1].Detail += ": historical files hold no value for it"
			}
			continue
		}
		if f.Name != c.Name {
			out.Changes = append(out.Changes, SchemaChange{Column: c.Name, Kind: "rename", Safe: false,
				Detail: fmt.Sprintf("field id %d is %q in the table", c.FieldID, f.Name)})
		}
		if !f.Type.Equals(want) {
			safe, why := promotable(f.Type, want)
			out.Changes = append(out.Changes, SchemaChange{Column: c.Name, Kind: "retype", Safe: safe, Detail: fmt.Sprintf("%s → %s%s", f.Type, want, why)})
		}
		switch {
		case !f.Required && !c.Nullable:
			out.Changes = append(out.Changes, SchemaChange{Column: c.Name, Kind: "required added", Safe: false, Detail: "NOT NULL on a column historical rows may hold null in"})
		case f.Required && c.Nullable:
			out.Changes = append(out.Changes, SchemaChange{Column: c.Name, Kind: "required relaxed", Safe: true, Detail: "now nullable"})
		}
	}
	for _, f := range sc.Fields() {
		if !seen[f.ID] {
			out.Changes = append(out.Changes, SchemaChange{Column: f.Name, Kind: "drop column", Safe: !f.Required,
				Detail: fmt.Sprintf("field id %d is in the table but not configured (%s)", f.ID, nullability(!f.Required))})
		}
	}
	// Identity columns are the partition's identity fields.
	stored := map[string]bool{}
	spec := tbl.Spec()
	for _, pf := range spec.Fields() {
		if _, ok := pf.Transform.(iceberg.IdentityTransform); ok {
			if name, ok := sc.FindColumnName(pf.SourceID()); ok {
				stored[name] = true
			}
		}
	}
	want := map[string]bool{}
	for _, c := range cfg.IdentityColumns() {
		want[c.Name] = true
		if !stored[c.Name] {
			out.Changes = append(out.Changes, SchemaChange{Column: c.Name, Kind: "new identity column", Safe: false,
				Detail: "it changes what the same reading means for every stored row"})
		}
	}
	for name := range stored {
		if !want[name] {
			out.Changes = append(out.Changes, SchemaChange{Column: name, Kind: "identity column dropped", Safe: false,
				Detail: "readings of different " + name + " values would merge"})
		}
	}
	return out, nil
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
