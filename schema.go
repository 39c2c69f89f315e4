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

// CoreColumns is the storage model's physical layout (seed 000/001), in order.
// "to" is NOT NULL on an interval table and always null on a point table.
func CoreColumns(m TimeModel) []ColumnDef {
	return []ColumnDef{
		{Name: "malo_id", Type: TypeText, FieldID: 1},
		{Name: "melo_id", Type: TypeText, Nullable: true, FieldID: 2},
		{Name: "obis_code", Type: TypeText, FieldID: 3},
		{Name: "sparte", Type: TypeText, FieldID: 4},
		{Name: "from", Type: TypeTimestamp, FieldID: 5},
		{Name: "to", Type: TypeTimestamp, Nullable: m == Point, FieldID: 6},
		{Name: "value", Type: TypeDecimal18_6, FieldID: 7},
		{Name: "unit", Type: TypeText, FieldID: 8},
		{Name: "quality", Type: TypeText, FieldID: 9},
		{Name: "resolution", Type: TypeText, Nullable: true, FieldID: 10},
		{Name: "source_kind", Type: TypeText, FieldID: 11},
		{Name: "source_detail", Type: TypeText, Nullable: true, FieldID: 12},
		{Name: "provenance", Type: TypeText, Nullable: true, FieldID: 13},
		{Name: "version", Type: TypeDecimal20_0, FieldID: 14},
		{Name: "version_scope", Type: TypeText, FieldID: 15},
		{Name: "recorded_at", Type: TypeTimestamp, FieldID: 16},
		{Name: "balancing_day", Type: TypeDate, FieldID: 17},
	}
}

// Columns is the table's full physical layout: the core columns, then the declared
// ones. melo_id is NOT NULL where it is part of the merge key.
func (c TableConfig) Columns() []ColumnDef {
	cols := CoreColumns(c.spec.TimeModel)
	if c.identifyByMelo {
		cols[1].Nullable = false
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
