package udf

import (
	"context"
	"database/sql/driver"
	"fmt"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// rowStringFunc is stringFunc on the row executor, kept only to measure the
// choice of the chunk executor for VARCHAR → VARCHAR functions.
type rowStringFunc struct{ stringFunc }

func (f rowStringFunc) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(v []driver.Value) (any, error) {
		r, ok, err := f.fn(v[0].(string))
		if err != nil || !ok {
			return nil, err
		}
		return r, nil
	}}
}

// BenchmarkStringExecutor compares obis_normalise on the chunk executor
// (borrowed VectorView in, VectorWriter out) with the same function on the
// row executor, over 10 M rows of four repeated codes.
//
// Run: go test -run '^$' -bench StringExecutor -benchtime 1x ./udf
func BenchmarkStringExecutor(b *testing.B) {
	ctx := context.Background()
	db, err := Open("")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var chunk stringFunc
	for _, d := range obisDefinitions() {
		if d.name == "obis_normalise" {
			chunk = d.overloads[0].(stringFunc)
		}
	}
	if err := duckdb.RegisterScalarUDF(c, "obis_normalise_row", rowStringFunc{chunk}); err != nil {
		b.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, `CREATE TABLE o AS SELECT ['1-0:1.8.0', '1-0:2.8.0*255', '1-0:3.8.0', '1-0:1.29.0'][1 + (i % 4)::INT] AS c
		FROM range(10000000) t(i)`); err != nil {
		b.Fatal(err)
	}
	names := []string{"obis_normalise", "obis_normalise_row"}
	elapsed := make([]time.Duration, len(names))
	for b.Loop() {
		for i, fn := range names {
			start := time.Now()
			var n int
			if err := c.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(DISTINCT %s(c)) FROM o`, fn)).Scan(&n); err != nil {
				b.Fatal(err)
			}
			elapsed[i] += time.Since(start)
		}
	}
	b.ReportMetric(float64(b.N)*1e7/elapsed[0].Seconds(), "chunk_rows/s")
	b.ReportMetric(float64(b.N)*1e7/elapsed[1].Seconds(), "row_rows/s")
	b.ReportMetric(elapsed[0].Seconds()/elapsed[1].Seconds(), "chunk/row")
}
