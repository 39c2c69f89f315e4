package udf

import (
	"context"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// stringFunc is a VARCHAR → VARCHAR function run on the chunk executor. It
// reads the input through a borrowed VectorView and writes through a
// VectorWriter, so a row costs a cache lookup and no Go allocation (the row
// executor would copy every input into a new Go string). fn returns the
// result and whether it is non-NULL.
type stringFunc struct {
	fn func(s string) (string, bool, error)
}

func (f stringFunc) Config() duckdb.ScalarFuncConfig {
	return config(duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR)
}

func (f stringFunc) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{ChunkContextExecutor: func(_ context.Context, st *duckdb.ChunkIteratorState) error {
		in, err := st.GetInputChunk().GetVector(0)
		if err != nil {
			return err
		}
		view, err := duckdb.GetVectorView[string](in)
		if err != nil {
			return err
		}
		out, err := duckdb.GetVectorWriter[string](st.GetResultVector())
		if err != nil {
			return err
		}
		for row := range view.Len() {
			s, ok, err := view.GetValueBorrowed(row)
			if err != nil {
				return err
			}
			if !ok {
				if err := out.SetNull(row); err != nil {
					return err
				}
				continue
			}
			res, ok, err := f.fn(s)
			if err != nil {
				return err
			}
			if !ok {
				err = out.SetNull(row)
			} else {
				err = out.Set(row, res)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}}
}
