package ingest

import (
	"fmt"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore/internal/duckfmt"
)

// native holds one row's values a file stores in DuckDB's own types —
// TIMESTAMPTZ instants, DECIMAL quantities and versions — taken from their
// vectors as they are, not printed to text by DuckDB and parsed back: a
// TIMESTAMPTZ is an instant, a DECIMAL an exact integer and scale. A column
// not held here is read as text (record).
type native struct {
	from, to, recordedAt          time.Time
	value                         decimal.Decimal
	version                       string // a DECIMAL(w,0)'s digits
	hasFrom, hasTo, hasRecordedAt bool
	hasValue, hasVersion          bool
}

// readNatively reports whether column c is read in its own type: an instant
// column typed TIMESTAMPTZ, the value a DECIMAL, the version a DECIMAL without
// decimals. Anything else DuckDB casts to text, parsed as a CSV field is.
func readNatively(c srcColumn) bool {
	switch c.target {
	case "from", "to", "recorded_at":
		return c.typ.Kind == duckfmt.TimestampTZ
	case "value":
		return c.typ.Kind == duckfmt.Decimal
	case "version":
		return c.typ.Kind == duckfmt.Decimal && c.typ.Scale == 0
	}
	return false
}

// set takes v, the value of the native column target (a time.Time or a
// duckdb.Decimal as internal/duckstream decodes them).
func (n *native) set(target string, v any) error {
	switch v := v.(type) {
	case time.Time:
		switch target {
		case "from":
			n.from, n.hasFrom = v, true
		case "to":
			n.to, n.hasTo = v, true
		case "recorded_at":
			n.recordedAt, n.hasRecordedAt = v, true
		}
		return nil
	case duckdb.Decimal:
		switch target {
		case "value":
			n.value, n.hasValue = decimal.NewFromBigInt(v.Value, -int32(v.Scale)), true
		case "version":
			n.version, n.hasVersion = v.Value.String(), true
		}
		return nil
	}
	return fmt.Errorf("column %s: %T is not a value read in its own type", target, v)
}

// text puts the native instants into r as text, for a row that did not
// parse: its batch is named by its text (groupOf).
func (n *native) text(r record) {
	for _, f := range []struct {
		col string
		t   time.Time
		ok  bool
	}{{"from", n.from, n.hasFrom}, {"to", n.to, n.hasTo}, {"recorded_at", n.recordedAt, n.hasRecordedAt}} {
		if f.ok {
			r[f.col] = f.t.Format(time.RFC3339Nano)
		}
	}
}
