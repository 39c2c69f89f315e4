// Package serve exposes MeterStore's unified view to other tools, read-only,
// and starts the servers that do it:
//
//   - pgwire: the PostgreSQL wire protocol (psql, BI tools, JDBC, pgx, Grafana),
//   - flightsql: Arrow Flight SQL (ADBC, the Flight SQL JDBC/ODBC drivers, pyarrow),
//   - icebergrest: a read-only Iceberg REST catalog façade over the cold tables,
//     so Spark, Trino, PyIceberg or DuckDB read history straight from object storage,
//
// over what they share in access: the users and their sessions, failed-login
// throttling, per-user statement slots, statement bounds and the statement log.
// This package is the wiring only: Run starts each configured server on its
// listener, stops them all when one fails or the context ends, and waits.
//
// Only queries run (the seeds' rule): every statement goes through the
// engine's Rows/Stream/Describe gate, which refuses anything but one SELECT;
// the servers never hold the engine's unrestricted DuckDB handle. A user bound
// to a scope ("tenant=X") gets a confined handle (engine.Scoped) for the whole
// session, and a confined handle only ever yields confined handles.
//
// Writes are refused by design, not disabled: a write through any of these
// surfaces would bypass MeterStore's append, and with it the tier routing (a
// correction below the watermark written to PostgreSQL is silently invisible)
// and the subject-reference check (a replay re-linking an erased subject).
//
// One client cannot stop the service: a request that panics ends with an
// error to its own client and its stack in the log, and the server keeps
// serving the others; malformed input is refused before a library reads it
// (a Flight DoPut by its descriptor, a pgwire message by its length).
package serve
