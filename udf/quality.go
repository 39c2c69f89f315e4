package udf

import (
	"database/sql/driver"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore/metering"
)

// parseQuality is the strict parse: the quality column holds the canonical
// spelling, so anything else — a value outside the code list, or a
// non-canonical spelling of one in it — is an error naming the value and the
// list (or the canonical spelling), never a NULL. ParseQuality does not
// allocate on success, so there is nothing to cache.
func parseQuality(name, s string) (metering.Quality, error) {
	q, err := metering.ParseQuality(s)
	if err != nil {
		return q, fnError(name, err)
	}
	return q, nil
}

// qualityPredicate is quality_is_billable / quality_is_provisional:
// (VARCHAR) → BOOLEAN.
type qualityPredicate struct {
	name string
	pred func(metering.Quality) bool
}

func (f qualityPredicate) Config() duckdb.ScalarFuncConfig {
	return config(duckdb.TYPE_BOOLEAN, duckdb.TYPE_VARCHAR)
}

func (f qualityPredicate) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(v []driver.Value) (any, error) {
		q, err := parseQuality(f.name, v[0].(string))
		if err != nil {
			return nil, err
		}
		return f.pred(q), nil
	}}
}

func qualityDefinitions() []definition {
	const marketCode = "quality_market_code"
	return []definition{
		{name: "quality_is_billable", overloads: []duckdb.ScalarFunc{
			qualityPredicate{name: "quality_is_billable", pred: metering.Quality.IsBillable}}},
		{name: "quality_is_provisional", overloads: []duckdb.ScalarFunc{
			qualityPredicate{name: "quality_is_provisional", pred: metering.Quality.IsProvisional}}},
		{name: marketCode, overloads: []duckdb.ScalarFunc{stringFunc{name: marketCode, fn: func(s string) (string, bool, error) {
			q, err := parseQuality(marketCode, s)
			if err != nil {
				return "", false, err
			}
			c, ok := q.MarketCode()
			return c, ok, nil
		}}}},
	}
}
