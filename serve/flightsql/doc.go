// Package flightsql serves the unified view over Arrow Flight SQL (ADBC, the
// Flight SQL JDBC/ODBC drivers, pyarrow), read-only: statements and
// prepared statements stream Arrow record batches from the engine, each
// result's schema metadata carrying its provenance (flight.go). Bearer tokens
// and prepared-statement handles expire when unused, and statement_timeout
// applies (flight_expiry.go); writes, malformed DoPuts and unknown actions
// are refused before arrow-go reads them, and a panicking request ends with an
// error to its own client (flight_guard.go). Within this package arrow-go's
// flightsql package is imported as arrowsql.
package flightsql
