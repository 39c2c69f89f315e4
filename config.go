package meterstore

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/meterstore/meterstore/metering"
)

// ErrConfig is wrapped by every configuration refusal, so a caller can tell a
// wrong setting from a failed connection.
var ErrConfig = errors.New("invalid configuration")

// ConfigError names the setting, what is wrong with it, and what to do instead.
type ConfigError struct {
	Table   string // empty for settings outside a table
	Setting string
	Problem string
	Fix     string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	if e.Table != "" {
		fmt.Fprintf(&b, "table %s: ", e.Table)
	}
	fmt.Fprintf(&b, "%s: %s", e.Setting, e.Problem)
	if e.Fix != "" {
		fmt.Fprintf(&b, "; %s", e.Fix)
	}
	return b.String()
}

func (e *ConfigError) Unwrap() error { return ErrConfig }

// TimeModel says what a row's "from" and "to" mean.
type TimeModel uint8

const (
	// Interval rows carry energy over [from, to): a Lastgang.
	Interval TimeModel = iota
	// Point rows carry a cumulative register value at the instant "from"; "to" is null:
	// a Zählerstandsgang. The two are never one table, because summing register
	// values gives a number that looks like consumption and means nothing.
	Point
)

func (m TimeModel) String() string {
	if m == Point {
		return "point"
	}
	return "interval"
}

// ColumnKind separates a column that identifies a reading from one that carries data about it.
type ColumnKind uint8

const (
	// Attribute columns carry data; a correction may change them freely.
	Attribute ColumnKind = iota
	// Identity columns join the merge key: two rows that differ in one are two
	// readings. A tenant discriminator must be one, or one tenant's correction
	// supersedes another tenant's reading.
	Identity
)

// CheckKind is the identifier scheme a checked column holds.
type CheckKind uint8

const (
	CheckNone CheckKind = iota
	CheckEIC
	CheckMalo
	CheckMelo
	CheckBdew
)

// ValueCheck declares that a column holds a market identifier. The write path
// parses every value with metering's type and stores its canonical spelling; the
// hot table gets a CHECK for the shape (no regular expression expresses a check digit).
type ValueCheck struct {
	Kind CheckKind
	// EICType pins position 3 of an EIC ("EIC:X"); zero accepts any object type.
	EICType metering.EICObjectType
}

// ParseValueCheck reads the configuration spelling: EIC, EIC:X … EIC:A, MALO, MELO, BDEW.
func ParseValueCheck(s string) (ValueCheck, error) {
	switch s {
	case "MALO":
		return ValueCheck{Kind: CheckMalo}, nil
	case "MELO":
		return ValueCheck{Kind: CheckMelo}, nil
	case "BDEW":
		return ValueCheck{Kind: CheckBdew}, nil
	case "EIC":
		return ValueCheck{Kind: CheckEIC}, nil
	}
	if t, ok := strings.CutPrefix(s, "EIC:"); ok {
		ot, err := metering.ParseEICObjectType(t)
		if err != nil {
			return ValueCheck{}, fmt.Errorf("check %q: %w (ENTSO-E object types: X, Y, Z, W, T, V, A)", s, err)
		}
		return ValueCheck{Kind: CheckEIC, EICType: ot}, nil
	}
	return ValueCheck{}, fmt.Errorf("check %q is not a known scheme; use EIC, EIC:X … EIC:A, MALO, MELO or BDEW", s)
}

func (c ValueCheck) String() string {
	switch c.Kind {
	case CheckEIC:
		if c.EICType != 0 {
			return "EIC:" + c.EICType.String()
		}
		return "EIC"
	case CheckMalo:
		return "MALO"
	case CheckMelo:
		return "MELO"
	case CheckBdew:
		return "BDEW"
	}
	return ""
}

// Pattern is the shape the stored (canonical) value has, for a database CHECK.
// It is anchored on the stored form, so a lower-case row from another writer is refused.
func (c ValueCheck) Pattern() string {
	switch c.Kind {
	case CheckEIC:
		if c.EICType != 0 {
			return "^[0-9A-Z-]{2}" + c.EICType.String() + "[0-9A-Z-]{12}[0-9A-Z]$"
		}
		return "^[0-9A-Z-]{2}[A-Z][0-9A-Z-]{12}[0-9A-Z]$"
	case CheckMalo:
		return "^[1-9][0-9]{10}$"
	case CheckMelo:
		return "^[A-Z]{2}[0-9]{11}[A-Z0-9]{20}$"
	case CheckBdew:
		return "^[0-9]{13}$"
	}
	return ""
}

// Canonical parses v with the scheme's metering type and returns the spelling to store.
func (c ValueCheck) Canonical(v string) (string, error) {
	switch c.Kind {
	case CheckEIC:
		e, err := metering.ParseEIC(v)
		if err != nil {
			return "", err
		}
		if c.EICType != 0 {
			if t, ok := e.ObjectType(); !ok || t != c.EICType {
				return "", &metering.IdentifierError{Kind: "EIC", Value: v,
					Rule: "the column is declared " + c.String() + " (object type " + c.EICType.String() + " at position 3)",
					Hint: "store a code of that object type, or declare the column check = \"EIC\""}
			}
		}
		return e.String(), nil
	case CheckMalo:
		m, err := metering.ParseMaloID(v)
		return m.String(), err
	case CheckMelo:
		m, err := metering.ParseMeloID(v)
		return m.String(), err
	case CheckBdew:
		b, err := metering.ParseBdewCode(v)
		return b.String(), err
	}
	return v, nil
}

// Column is a deployment-declared extra column. Extra columns are text only.
type Column struct {
	Name     string
	Kind     ColumnKind
	Nullable bool // identity columns must be false
	// Values, when set, is the closed vocabulary the column may hold (a coded column).
	Values []string
	// Check, when set, declares an identifier scheme (a checked column). Exclusive with Values.
	Check ValueCheck
}

// Canonical validates a value for this column and returns the spelling to store.
// A null (nil) is allowed only on a nullable column.
func (c Column) Canonical(v *string) (*string, error) {
	if v == nil {
		if !c.Nullable {
			return nil, fmt.Errorf("%w: column %s is NOT NULL: every row needs a value", metering.ErrInvalid, c.Name)
		}
		return nil, nil
	}
	if len(c.Values) > 0 {
		for _, allowed := range c.Values {
			if *v == allowed {
				return v, nil
			}
		}
		ce := &metering.CodeError{Kind: "column " + c.Name, Value: *v, Allowed: c.Values}
		for _, allowed := range c.Values {
			if strings.EqualFold(strings.TrimSpace(*v), allowed) {
				ce.Canonical = allowed
			}
		}
		return nil, ce
	}
	if c.Check.Kind != CheckNone {
		s, err := c.Check.Canonical(*v)
		if err != nil {
			return nil, fmt.Errorf("column %s (check %s): %w", c.Name, c.Check, err)
		}
		return &s, nil
	}
	return v, nil
}

// TableSpec is what a deployment declares about a table. Zero values mean the
// documented default; Build validates it once and returns the TableConfig every
// tier shares.
type TableSpec struct {
	// Name is the physical table name: a plain lower-case identifier of at most 34
	// characters. The resolved relation is the name without its "_versions" suffix.
	Name      string
	TimeModel TimeModel
	// IdentifyByMelo puts melo_id into the merge key. Nil means the default: on for a
	// Point table (a register belongs to a meter), off for an Interval table.
	IdentifyByMelo *bool
	Columns        []Column
	// SubjectColumn names an attribute column holding an opaque subject reference
	// backed by the subject registry; empty for none.
	SubjectColumn string

	PartitionStep     time.Duration // 0 = 24h; must equal ArchivalStep
	PartitionHeadroom time.Duration // 0 = 14 days of partitions created ahead
	SettlementLag     time.Duration // 0 = 7 days; must be ≥ ArchivalStep
	ArchivalStep      time.Duration // 0 = 24h
	ScanChunkRows     int           // 0 = 50 000 rows per keyset page
	// SnapshotRetention is how long Iceberg snapshots are kept when expiry is run
	// (0 = 10 years: retention is a compliance decision, not cleanup).
	SnapshotRetention time.Duration
	// MinSnapshotsToKeep survive expiry whatever their age (0 = 20).
	MinSnapshotsToKeep int
	// DisableIntegrityConstraints turns off the two per-partition GiST exclusions
	// (no overlap within a version, one network operator per reading). What is left
	// is detection, not refusal: do it only with a measurement in hand.
	DisableIntegrityConstraints bool
}

// TableConfig is a validated table declaration; construct it with TableSpec.Build.
type TableConfig struct {
	spec           TableSpec
	identifyByMelo bool
}

// Defaults from the seeds.
const (
	DefaultStep          = 24 * time.Hour
	DefaultHeadroom      = 14 * 24 * time.Hour
	DefaultSettlementLag = 7 * 24 * time.Hour
	DefaultScanChunkRows = 50_000
	// DefaultSnapshotRetention is the compliance floor for snapshot expiry.
	DefaultSnapshotRetention = 10 * 365 * 24 * time.Hour
	DefaultMinSnapshots      = 20
	// MaxTableNameLen keeps every derived name under PostgreSQL's 63-byte limit: a
	// partition adds _YYYY_MM_DD_HHMM and its constraints add _one_operator; past 34
	// the two constraint names of one partition truncate to the same string.
	MaxTableNameLen = 34
)

var plainIdent = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// Build validates the declaration and fills in defaults.
func (s TableSpec) Build() (TableConfig, error) {
	fail := func(setting, problem, fix string) (TableConfig, error) {
		return TableConfig{}, &ConfigError{Table: s.Name, Setting: setting, Problem: problem, Fix: fix}
	}
	if !plainIdent.MatchString(s.Name) {
		return fail("name", fmt.Sprintf("%q is not a plain identifier", s.Name), "use lower-case letters, digits and _ (names are written into DDL, which cannot be parameterised)")
	}
	if len(s.Name) > MaxTableNameLen {
		return fail("name", fmt.Sprintf("%q is %d characters, more than %d", s.Name, len(s.Name), MaxTableNameLen),
			"shorten it: PostgreSQL truncates identifiers at 63 bytes, and partition constraint names derived from it would collide")
	}
	if s.TimeModel != Interval && s.TimeModel != Point {
		return fail("time_model", "unknown time model", "use Interval or Point")
	}
	if s.PartitionStep == 0 {
		s.PartitionStep = DefaultStep
	}
	if s.ArchivalStep == 0 {
		s.ArchivalStep = DefaultStep
	}
	if s.PartitionHeadroom == 0 {
		s.PartitionHeadroom = DefaultHeadroom
	}
	if s.SettlementLag == 0 {
		s.SettlementLag = DefaultSettlementLag
	}
	if s.ScanChunkRows == 0 {
		s.ScanChunkRows = DefaultScanChunkRows
	}
	if s.SnapshotRetention == 0 {
		s.SnapshotRetention = DefaultSnapshotRetention
	}
	if s.MinSnapshotsToKeep == 0 {
		s.MinSnapshotsToKeep = DefaultMinSnapshots
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"partition_step", s.PartitionStep}, {"archival_step", s.ArchivalStep}, {"partition_headroom", s.PartitionHeadroom}, {"settlement_lag", s.SettlementLag}} {
		if d.v < 0 {
			return fail(d.name, "negative duration "+d.v.String(), "use a positive duration such as 1d")
		}
	}
	if s.PartitionStep%time.Minute != 0 || (24*time.Hour)%s.PartitionStep != 0 && s.PartitionStep%(24*time.Hour) != 0 {
		return fail("partition_step", s.PartitionStep.String()+" does not tile the UTC day", "use a divisor or a multiple of 1d, such as 1h or 1d")
	}
	if s.PartitionStep != s.ArchivalStep {
		return fail("partition_step", fmt.Sprintf("%s differs from archival_step %s", s.PartitionStep, s.ArchivalStep),
			"set them equal: archival purges exactly one partition per window, and a mismatch would force a row-wise DELETE")
	}
	if s.SettlementLag < s.ArchivalStep {
		return fail("settlement_lag", fmt.Sprintf("%s is shorter than archival_step %s", s.SettlementLag, s.ArchivalStep),
			"make it at least one archival_step, or a window is archived while it still receives corrections")
	}
	if s.ScanChunkRows < 0 {
		return fail("scan_chunk_rows", fmt.Sprint(s.ScanChunkRows), "use a positive number of rows, e.g. 50000")
	}
	seen := map[string]bool{}
	for _, c := range CoreColumns(s.TimeModel) {
		seen[c.Name] = true
	}
	for _, c := range s.Columns {
		if !plainIdent.MatchString(c.Name) {
			return fail("extra_columns", fmt.Sprintf("column name %q is not a plain identifier", c.Name), "use lower-case letters, digits and _")
		}
		if seen[c.Name] {
			return fail("extra_columns", fmt.Sprintf("column %q is declared twice or shadows a core column", c.Name), "rename it")
		}
		seen[c.Name] = true
		if c.Kind == Identity && c.Nullable {
			return fail("extra_columns", fmt.Sprintf("identity column %q is nullable", c.Name),
				"declare it NOT NULL: a null cannot identify a reading and never compares equal to itself, so its versions would never resolve")
		}
		if len(c.Values) > 0 && c.Check.Kind != CheckNone {
			return fail("extra_columns", fmt.Sprintf("column %q declares both values and check", c.Name), "choose one: a closed vocabulary and an identifier scheme are different claims")
		}
		for _, v := range c.Values {
			if v == "" || strings.ContainsAny(v, "'\\") {
				return fail("extra_columns", fmt.Sprintf("column %q value %q", c.Name, v), "values must be non-empty and contain no quote or backslash")
			}
		}
	}
	if s.SubjectColumn != "" {
		found := false
		for _, c := range s.Columns {
			if c.Name == s.SubjectColumn {
				found = c.Kind == Attribute
			}
		}
		if !found {
			return fail("subject_column", fmt.Sprintf("%q is not a declared attribute column", s.SubjectColumn), "declare it in extra_columns without identity = true")
		}
	}
	cfg := TableConfig{spec: s, identifyByMelo: s.TimeModel == Point}
	if s.IdentifyByMelo != nil {
		cfg.identifyByMelo = *s.IdentifyByMelo
	}
	cfg.spec.Columns = append([]Column(nil), s.Columns...)
	return cfg, nil
}

// MustBuild is Build for declarations fixed at compile time (tests, the demo).
func (s TableSpec) MustBuild() TableConfig {
	c, err := s.Build()
	if err != nil {
		panic(err)
	}
	return c
}

func (c TableConfig) Name() string { return c.spec.Name }

// ResolvedName is the relation that applies resolution: the name without "_versions".
func (c TableConfig) ResolvedName() string {
	if r, ok := strings.CutSuffix(c.spec.Name, "_versions"); ok && r != "" {
		return r
	}
	return c.spec.Name
}

func (c TableConfig) TimeModel() TimeModel             { return c.spec.TimeModel }
func (c TableConfig) IdentifyByMelo() bool             { return c.identifyByMelo }
func (c TableConfig) SubjectColumn() string            { return c.spec.SubjectColumn }
func (c TableConfig) PartitionStep() time.Duration     { return c.spec.PartitionStep }
func (c TableConfig) PartitionHeadroom() time.Duration { return c.spec.PartitionHeadroom }
func (c TableConfig) SettlementLag() time.Duration     { return c.spec.SettlementLag }
func (c TableConfig) ArchivalStep() time.Duration      { return c.spec.ArchivalStep }
func (c TableConfig) ScanChunkRows() int               { return c.spec.ScanChunkRows }
func (c TableConfig) IntegrityConstraints() bool       { return !c.spec.DisableIntegrityConstraints }
func (c TableConfig) SnapshotRetention() time.Duration { return c.spec.SnapshotRetention }
func (c TableConfig) MinSnapshotsToKeep() int          { return c.spec.MinSnapshotsToKeep }

// ExtraColumns returns the declared columns in declaration order.
func (c TableConfig) ExtraColumns() []Column { return append([]Column(nil), c.spec.Columns...) }

// IdentityColumns returns the declared identity columns in declaration order.
func (c TableConfig) IdentityColumns() []Column {
	var out []Column
	for _, col := range c.spec.Columns {
		if col.Kind == Identity {
			out = append(out, col)
		}
	}
	return out
}

// Column finds a declared extra column.
func (c TableConfig) Column(name string) (Column, bool) {
	for _, col := range c.spec.Columns {
		if col.Name == name {
			return col, true
		}
	}
	return Column{}, false
}

// MergeKey is what identifies a reading: (malo_id, obis_code, from), plus melo_id
// where the table identifies by Messlokation, plus every identity column. The
// hot primary key, the ON CONFLICT target, the cold partitioning and the
// resolution PARTITION BY are all derived from it, so they agree.
func (c TableConfig) MergeKey() []string {
	key := []string{"malo_id", "obis_code", "from"}
	if c.identifyByMelo {
		key = append(key, "melo_id")
	}
	for _, col := range c.IdentityColumns() {
		key = append(key, col.Name)
	}
	return key
}

// PrimaryKey is the merge key plus version: one row per assertion.
func (c TableConfig) PrimaryKey() []string { return append(c.MergeKey(), "version") }

// IsMergeKeyColumn reports whether name partitions readings (and may scope a session).
func (c TableConfig) IsMergeKeyColumn(name string) bool {
	for _, k := range c.MergeKey() {
		if k == name {
			return true
		}
	}
	return false
}

// Spec returns the declaration the config was built from, with defaults filled in.
func (c TableConfig) Spec() TableSpec {
	s := c.spec
	s.Columns = append([]Column(nil), s.Columns...)
	return s
}
