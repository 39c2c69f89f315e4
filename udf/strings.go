package udf

import (
	"database/sql/driver"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore/internal/duckstream"
)

// stringFunc is a VARCHAR → VARCHAR function. fn returns the result and
// whether it is non-NULL. The pinned duckdb-go (the release DuckDB's
// published extensions are built for) has no typed vector access, so every
// input arrives as a copied Go string; results are written by
// duckstream.StringResults, not duckdb-go's setter, so a result DuckDB cannot
// allocate at its memory_limit fails the statement instead of aborting the
// process.
type stringFunc struct {
	name string
	fn   func(s string) (string, bool, error)
}

func (f stringFunc) Config() duckdb.ScalarFuncConfig {
	return config(duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR)
}

func (f stringFunc) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{ChunkContextExecutor: duckstream.StringResults(f.name, func(v []driver.Value) (string, bool, error) {
		return f.fn(v[0].(string))
	})}
}
