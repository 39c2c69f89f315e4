package udf

import (
	"database/sql/driver"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// stringFunc is a VARCHAR → VARCHAR function on the row executor. fn returns
// the result and whether it is non-NULL. The pinned duckdb-go (the release
// DuckDB's published extensions are built for) has no typed vector access,
// so every input arrives as a copied Go string.
type stringFunc struct {
	fn func(s string) (string, bool, error)
}

func (f stringFunc) Config() duckdb.ScalarFuncConfig {
	return config(duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR)
}

func (f stringFunc) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(v []driver.Value) (any, error) {
		res, ok, err := f.fn(v[0].(string))
		if err != nil || !ok {
			return nil, err
		}
		return res, nil
	}}
}
