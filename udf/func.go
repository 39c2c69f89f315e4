package udf

import (
	"fmt"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

var (
	typeInfosOnce sync.Once
	typeInfos     map[duckdb.Type]duckdb.TypeInfo
)

// typeInfo returns the TypeInfo of a primitive DuckDB type.
func typeInfo(t duckdb.Type) duckdb.TypeInfo {
	typeInfosOnce.Do(func() {
		typeInfos = map[duckdb.Type]duckdb.TypeInfo{}
		for _, p := range []duckdb.Type{duckdb.TYPE_TIMESTAMP_TZ, duckdb.TYPE_TIMESTAMP, duckdb.TYPE_DATE,
			duckdb.TYPE_VARCHAR, duckdb.TYPE_BOOLEAN, duckdb.TYPE_INTEGER} {
			ti, err := duckdb.NewTypeInfo(p)
			if err != nil {
				// Unreachable: primitive types always have a TypeInfo.
				panic(fmt.Sprintf("udf: type info %v: %v", p, err))
			}
			typeInfos[p] = ti
		}
	})
	return typeInfos[t]
}

// config declares a deterministic function with default NULL handling: any
// NULL argument gives NULL without calling Go, and DuckDB may fold a call
// over constants at plan time.
func config(out duckdb.Type, in ...duckdb.Type) duckdb.ScalarFuncConfig {
	infos := make([]duckdb.TypeInfo, len(in))
	for i, t := range in {
		infos[i] = typeInfo(t)
	}
	return duckdb.ScalarFuncConfig{InputTypeInfos: infos, ResultTypeInfo: typeInfo(out)}
}

// fnError prefixes an error with the SQL function that raised it.
func fnError(name string, err error) error { return fmt.Errorf("%s: %w", name, err) }
