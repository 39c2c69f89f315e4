package udf

import (
	"database/sql/driver"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore/metering"
)

// obisEntry is a parsed OBIS code with its string answers precomputed, so a
// cached row returns without formatting.
type obisEntry struct {
	code      metering.ObisCode
	direction string // "" when undirected
	canonical string
}

var obisCodes = newStringCache[obisEntry](4096)

// parseObis parses strictly through the cache. An unparseable value is an
// error naming the value and the rule: the column these run over is
// canonical, and a predicate answering false for garbage would silently drop
// rows from a sum.
func parseObis(name, s string) (obisEntry, error) {
	e, err := obisCodes.get(s, func(s string) (obisEntry, error) {
		c, err := metering.ParseObis(s)
		if err != nil {
			return obisEntry{}, err
		}
		return obisEntry{code: c, direction: c.Direction().String(), canonical: c.String()}, nil
	})
	if err != nil {
		return e, fnError(name, err)
	}
	return e, nil
}

// obisPredicate is an obis_is_* function: (VARCHAR) → BOOLEAN.
type obisPredicate struct {
	name string
	pred func(metering.ObisCode) bool
}

func (f obisPredicate) Config() duckdb.ScalarFuncConfig {
	return config(duckdb.TYPE_BOOLEAN, duckdb.TYPE_VARCHAR)
}

func (f obisPredicate) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(v []driver.Value) (any, error) {
		e, err := parseObis(f.name, v[0].(string))
		if err != nil {
			return nil, err
		}
		return f.pred(e.code), nil
	}}
}

// obisTariffRegister is obis_tariff_register: (VARCHAR) → INTEGER, NULL for
// the total (E = 0) and the fault counter (E = 63).
type obisTariffRegister struct{}

const obisTariffRegisterName = "obis_tariff_register"

func (obisTariffRegister) Config() duckdb.ScalarFuncConfig {
	return config(duckdb.TYPE_INTEGER, duckdb.TYPE_VARCHAR)
}

func (obisTariffRegister) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(v []driver.Value) (any, error) {
		e, err := parseObis(obisTariffRegisterName, v[0].(string))
		if err != nil {
			return nil, err
		}
		if n, ok := e.code.TariffRegister(); ok {
			return int32(n), nil
		}
		return nil, nil
	}}
}

func obisDefinitions() []definition {
	pred := func(name string, p func(metering.ObisCode) bool) definition {
		return definition{name: name, overloads: []duckdb.ScalarFunc{obisPredicate{name: name, pred: p}}}
	}
	str := func(name string, fn func(obisEntry) (string, bool)) definition {
		return definition{name: name, overloads: []duckdb.ScalarFunc{stringFunc{name: name, fn: func(s string) (string, bool, error) {
			e, err := parseObis(name, s)
			if err != nil {
				return "", false, err
			}
			r, ok := fn(e)
			return r, ok, nil
		}}}}
	}
	return []definition{
		str("obis_direction", func(e obisEntry) (string, bool) { return e.direction, e.direction != "" }),
		pred("obis_is_import", metering.ObisCode.IsImport),
		pred("obis_is_export", metering.ObisCode.IsExport),
		pred("obis_is_reactive", metering.ObisCode.IsReactive),
		pred("obis_is_lastgang", metering.ObisCode.IsLastgang),
		pred("obis_is_zaehlerstand", metering.ObisCode.IsZaehlerstand),
		pred("obis_is_vorschub", metering.ObisCode.IsVorschub),
		pred("obis_is_maximum", metering.ObisCode.IsMaximum),
		pred("obis_is_fehlerregister", metering.ObisCode.IsFehlerregister),
		pred("obis_is_total_register", metering.ObisCode.IsTotal),
		{name: obisTariffRegisterName, overloads: []duckdb.ScalarFunc{obisTariffRegister{}}},
		str("obis_normalise", func(e obisEntry) (string, bool) { return e.canonical, true }),
	}
}
