// Package duckstream runs a DuckDB statement as a stream: rows are fetched a
// chunk at a time while the final pipeline runs, instead of duckdb-go's
// materialise-then-read, so an export of millions of rows holds one chunk.
// It is the only code that reaches into duckdb-go's unexported state (two
// handles, read by checked reflection in handles.go); everything else —
// preparing, binding, closing — goes through duckdb-go's public API.
//
//	db, err := duckstream.Open(conn, duckstream.DriverDecimals, onEnd) // *sql.DB over conn's DuckDB connection
//	rows, err := db.QueryContext(ctx, query, args...)
//
// A Source streams one query of a DuckDB connection into a table function of
// another database: the function's output vectors reference the source's
// result chunks, so a database that may open no file reads rows another one
// read for it, without a copy.
//
//	kept := duckstream.NewStatements(db, 64) // queries kept prepared for the next run
//	src, err := kept.Open(ctx, query)
//	n, err := src.Fill(out) // in the table function's FillChunk; src.Close() after
package duckstream
