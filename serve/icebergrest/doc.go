// Package icebergrest serves a read-only Iceberg REST catalog over the
// deployment's cold tables, so Spark, Trino, PyIceberg or DuckDB read the
// history straight from object storage, and publishes each table's
// resolution SQL; every mutation is refused with 405 and the reason (rest.go).
package icebergrest
