// Package pgwire serves the unified view over the PostgreSQL wire protocol
// (psql, BI tools, JDBC, pgx, Grafana), read-only.
//
// A session (pgwire.go) authenticates with SCRAM-SHA-256 (scram.go), runs
// each statement through the engine's gate on the user's handle
// (access.Users.Session) and streams its rows. Around the engine it speaks
// what PostgreSQL clients expect: the catalog queries of psql, JDBC and
// SQLAlchemy answered by emulation (pgcatalog.go, pgvirtual.go, pgproc.go),
// a client's statement translated for DuckDB (pgdialect.go, pgnames.go over
// the lexer in sqltext.go), PostgreSQL's text and binary values (pgtypes.go,
// pgtime.go, pgfloat.go), cursors, COPY … TO STDOUT and EXPLAIN
// (pgcursor.go, pgcopy.go, pgexplain.go), statement_timeout and
// cancellation (pgtimeout.go, pgclient.go), client_min_messages and the
// provenance notice (pgmessages.go), pg_stat_activity (pgactivity.go) and
// statements retried once after meeting an archival (pgretry.go).
package pgwire
