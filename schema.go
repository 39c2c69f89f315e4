package meterstore

// ColumnType is the logical type of a stored column; each tier maps it to its own
// physical type (PostgreSQL, Iceberg, Arrow, DuckDB) from this one list.
type ColumnType uint8

const (
	TypeText        ColumnType = iota // text / string / Utf8 / VARCHAR
	TypeTimestamp                     // timestamptz, µs, UTC
	TypeDecimal18_6                   // numeric(18,6): the quantity
	TypeDecimal20_0                   // numeric(20,0): the MSCONS version
	TypeDate                          // date: the balancing day
)

// PostgresType is the column's type in the hot tier's DDL.
func (t ColumnType) PostgresType() string {
	switch t {
	case TypeTimestamp:
		return "timestamptz"
	case TypeDecimal18_6:
		return "numeric(18,6)"
	case TypeDecimal20_0:
		return "numeric(20,0)"
	case TypeDate:
		return "date"
	}
	return "text"
}

// DuckDBType is the column's type in the engine.
func (t ColumnType) DuckDBType() string {
	switch t {
	case TypeTimestamp:
		return "TIMESTAMPTZ"
	case TypeDecimal18_6:
		return "DECIMAL(18,6)"
	case TypeDecimal20_0:
		return "DECIMAL(20,0)"
	case TypeDate:
		return "DATE"
	}
	return "VARCHAR"
}

// ColumnDef is one physical column of a table, in both tiers.
type ColumnDef struct {
	Name     string
	Type     ColumnType
	Nullable bool
	// FieldID is the stable Iceberg field id. Core columns own 1–17; declared extra
	// columns are numbered from 101 in declaration order at table creation.
	FieldID int
	Extra   *Column // nil for a core column
}

// FirstExtraFieldID is where declared columns start, leaving room for core columns.
const FirstExtraFieldID = 101

// Positions of the core columns in the physical layout (CoreColumns,
// TableConfig.Columns); declared columns follow from CoreColumnCount on. Every
// tier reaches a Row's fields by these positions through Row.Field, so the
// layout and the mapping to Row are written once, here and in codec.go.
const (
	ColMaloID = iota
	ColMeloID
	ColObisCode
	ColSparte
	ColFrom
	ColTo
	ColValue
	ColUnit
	ColQuality
	ColResolution
	ColSourceKind
	ColSourceDetail
	ColProvenance
	ColVersion
	ColVersionScope
	ColRecordedAt
	ColBalancingDay
	// CoreColumnCount is the number of core columns: the position of the first declared one.
	CoreColumnCount
)

// CoreColumns is the storage model's physical layout (seed 000/001), in order.
// "to" is NOT NULL on an interval table and always null on a point table.
func CoreColumns(m TimeModel) []ColumnDef {
	cols := [CoreColumnCount]ColumnDef{
		ColMaloID:       {Name: "malo_id", Type: TypeText, FieldID: 1},
		ColMeloID:       {Name: "melo_id", Type: TypeText, Nullable: true, FieldID: 2},
		ColObisCode:     {Name: "obis_code", Type: TypeText, FieldID: 3},
		ColSparte:       {Name: "sparte", Type: TypeText, FieldID: 4},
		ColFrom:         {Name: "from", Type: TypeTimestamp, FieldID: 5},
		ColTo:           {Name: "to", Type: TypeTimestamp, Nullable: m == Point, FieldID: 6},
		ColValue:        {Name: "value", Type: TypeDecimal18_6, FieldID: 7},
		ColUnit:         {Name: "unit", Type: TypeText, FieldID: 8},
		ColQuality:      {Name: "quality", Type: TypeText, FieldID: 9},
		ColResolution:   {Name: "resolution", Type: TypeText, Nullable: true, FieldID: 10},
		ColSourceKind:   {Name: "source_kind", Type: TypeText, FieldID: 11},
		ColSourceDetail: {Name: "source_detail", Type: TypeText, Nullable: true, FieldID: 12},
		ColProvenance:   {Name: "provenance", Type: TypeText, Nullable: true, FieldID: 13},
		ColVersion:      {Name: "version", Type: TypeDecimal20_0, FieldID: 14},
		ColVersionScope: {Name: "version_scope", Type: TypeText, FieldID: 15},
		ColRecordedAt:   {Name: "recorded_at", Type: TypeTimestamp, FieldID: 16},
		ColBalancingDay: {Name: "balancing_day", Type: TypeDate, FieldID: 17},
	}
	return cols[:]
}

// Columns is the table's full physical layout: the core columns, then the declared
// ones. melo_id is NOT NULL where it is part of the merge key.
func (c TableConfig) Columns() []ColumnDef {
	cols := CoreColumns(c.spec.TimeModel)
	if c.identifyByMelo {
		cols[ColMeloID].Nullable = false
	}
	for i, x := range c.spec.Columns {
		x := x
		cols = append(cols, ColumnDef{Name: x.Name, Type: TypeText, Nullable: x.Nullable, FieldID: FirstExtraFieldID + i, Extra: &x})
	}
	return cols
}

// ColumnNames lists Columns() by name.
func (c TableConfig) ColumnNames() []string {
	cols := c.Columns()
	names := make([]string, len(cols))
	for i, col := range cols {
		names[i] = col.Name
	}
	return names
}

// ColumnIndex is the position of the named column in Columns(), or -1.
func (c TableConfig) ColumnIndex(name string) int {
	if i := coreColumnIndex[name]; i > 0 {
		return i - 1
	}
	for i, x := range c.spec.Columns {
		if x.Name == name {
			return CoreColumnCount + i
		}
	}
	return -1
}

// coreColumnIndex is 1 + the position of each core column by name.
var coreColumnIndex = func() map[string]int {
	m := map[string]int{}
	for i, c := range CoreColumns(Interval) {
		m[c.Name] = i + 1
	}
	return m
}()
